"""The episodes OpenHands' tools run in, by key: ``sweworld_tools`` attaches an episode, each tool's
``create`` finds it by the key its params carry, and closing the tool releases it. Its own module,
so that the tools and the seam import it without importing each other."""

from __future__ import annotations

import threading
import uuid
from typing import TYPE_CHECKING

from sweworld.core.errors import SandboxError

if TYPE_CHECKING:
    from sweworld.core.executor import Executor

_EPISODES: dict[str, Executor] = {}
_LOCK = threading.Lock()


def attach(executor: Executor) -> str:
    """The key under which the tools find ``executor`` (kept until ``release``)."""
    key = uuid.uuid4().hex
    with _LOCK:
        _EPISODES[key] = executor
    return key


def attached(key: str) -> Executor:
    """The episode attached as ``key``; ``SandboxError`` when it is not (never attached, or released)."""
    with _LOCK:
        executor = _EPISODES.get(key)
    if executor is None:
        raise SandboxError(f"no sweworld episode is attached as {key!r} in this process",
                           where="openhands tools",
                           hint="get the tools from sweworld_tools(executor) for an open episode, in this process")
    return executor


def release(key: str) -> None:
    """Forget the episode attached as ``key`` (idempotent; does not close it)."""
    with _LOCK:
        _EPISODES.pop(key, None)


__all__ = ["attach", "attached", "release"]
