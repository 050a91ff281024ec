"""What ``SWEEnv``'s snapshot, fork and restore keep besides the episode: the env's step state and the
state of the wrappers ``gymnasium.make`` put around it.

An ``EnvSnapshot`` is the episode's own handle (``core.protocols.Branchable``) plus what the env
knows: the task, the step count, the last observation, a copy of the tools (their per-episode state:
the editor's undo history) and, per wrapper of ``gymnasium.make``'s stack (``TimeLimit``'s elapsed
steps, ``OrderEnforcing``'s reset flag, the checker's...), a copy of its attributes. Restoring puts
them back; forking builds the same stack of wrappers around the new env from them, so a fork's
``TimeLimit`` goes on counting from where its parent was.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sweworld.core.errors import ConfigError
from sweworld.core.protocols import Branchable, why_not_branchable

if TYPE_CHECKING:
    from sweworld.core.executor import Executor
    from sweworld.core.types import Task
    from sweworld.tools import ToolSet

#: A wrapper's attributes that are not its state: what it wraps, and gymnasium's cache of the spec.
_NOT_STATE = ("env", "_cached_spec")


@dataclass(frozen=True, eq=False)
class EnvSnapshot:
    """A snapshot of an ``SWEEnv``'s episode (``SWEEnv.snapshot``); free it with ``SWEEnv.release``."""

    episode: Any
    """The episode's own handle (``Branchable.snapshot``); None for a point not snapshotted (``fork()``)."""
    task: Task
    steps: int
    observation: str
    """The last observation (the problem statement right after ``reset``)."""
    tools: ToolSet
    """A copy of the tools as they were (their per-episode state)."""
    wrappers: tuple[tuple[type, dict[str, Any]], ...] = ()
    """Each wrapper of the env's stack, outermost first: its class and a copy of its attributes."""


def branchable(executor: Executor | None, where: str) -> Branchable:
    """``executor`` as ``Branchable``; ``RuntimeError`` when no episode is open, ``ConfigError`` saying
    why (``why_not_branchable``) when it cannot be snapshotted."""
    if executor is None:
        raise RuntimeError("no open episode (it ended on submit or truncation, or none was opened): call "
                           "reset(), or fork before the episode ends to keep a branch of it")
    reason = why_not_branchable(executor)
    if reason is not None:
        raise ConfigError(f"this episode cannot be snapshotted, forked or restored: {reason}", where=where,
                          hint="use the real, sim or hybrid backend (sweworld.backends)")
    assert isinstance(executor, Branchable)
    return executor


def stack(outer: Any, inner: Any) -> list[Any]:
    """The wrappers from ``outer`` down to ``inner`` (not included), outermost first; [] when ``outer``
    is None."""
    wrappers = []
    while outer is not None and outer is not inner:
        wrappers.append(outer)
        outer = outer.env
    return wrappers


def wrapper_states(outer: Any, inner: Any) -> tuple[tuple[type, dict[str, Any]], ...]:
    """Each wrapper's class and a copy of its state (``stack`` order)."""
    return tuple((type(w), copy.deepcopy({k: v for k, v in vars(w).items() if k not in _NOT_STATE}))
                 for w in stack(outer, inner))


def same_stack(outer: Any, inner: Any, states: tuple[tuple[type, dict[str, Any]], ...]) -> list[Any]:
    """The wrappers between ``outer`` and ``inner``; ``ValueError`` unless their classes are those of ``states``."""
    wrappers = stack(outer, inner)
    if [type(w) for w in wrappers] != [cls for cls, _ in states]:
        raise ValueError("the snapshot was taken with another stack of wrappers around the env")
    return wrappers


def put_wrapper_states(outer: Any, inner: Any, states: tuple[tuple[type, dict[str, Any]], ...]) -> None:
    """Put ``states`` back into the wrappers between ``outer`` and ``inner`` (the same stack)."""
    for wrapper, (_, state) in zip(same_stack(outer, inner, states), states, strict=True):
        vars(wrapper).update(copy.deepcopy(state))


def rewrap(inner: Any, states: tuple[tuple[type, dict[str, Any]], ...]) -> Any:
    """``inner`` in new wrappers of the classes and states of ``states`` (outermost first); the
    outermost, or ``inner`` when there are none."""
    env = inner
    for cls, state in reversed(states):
        wrapper = object.__new__(cls)  # its state is copied whole: no __init__ to run again
        vars(wrapper).update(copy.deepcopy(state))
        wrapper.env, wrapper._cached_spec = env, None
        env = wrapper
    return env


__all__ = ["EnvSnapshot", "branchable", "put_wrapper_states", "rewrap", "same_stack", "stack", "wrapper_states"]
