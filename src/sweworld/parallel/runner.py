"""The runner seam: ``Runner.pool(workers, hints)`` is a context manager whose ``submit(fn, *args,
group=KEY)`` returns a ``Future``; ``share(obj)`` hands a large or stateful object (a backend) to
the items once instead of with each.

``LocalRunner`` is a thread pool (``group`` and ``hints`` change nothing: one machine holds every
environment). ``sweworld.parallel.ray_runner.RayRunner`` makes each item a Ray task.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from sweworld.core.errors import ConfigError
from sweworld.core.protocols import Hints, Pool, Runner
from sweworld.core.registry import Registry
from sweworld.core.types import Task

if TYPE_CHECKING:
    from sweworld.core.config import RunnerConfig

RUNNERS: Registry[Callable[..., Runner]] = Registry("runner", {
    "local": "sweworld.parallel.runner:LocalRunner",
    "ray": "sweworld.parallel.ray_runner:RayRunner",
}, group="sweworld.runners")


ROLLOUT = Hints(cpus=1.0, memory_mb=1024)
"""One episode and its evaluation: a sandbox shell and one test run."""
EVALUATION = Hints(cpus=1.0, memory_mb=1024)
VALIDATION = Hints(cpus=1.0, memory_mb=1024)
SYNTH_CHECK = Hints(cpus=1.0, memory_mb=512)


def environment_group(task: Task) -> str:
    """The group of ``task``'s environment as the driver can name it without a tree: the
    repository and its version (the install specs' key) or environment commit. Items of one group
    share an environment and a base tree, so a runner sends them to the same node."""
    return f"{task.repo}@{task.version or task.env_commit}"


class _ThreadPool:
    def __init__(self, workers: int):
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers))

    def share(self, obj: Any) -> Any:
        return obj

    def submit(self, fn: Callable[..., Any], /, *args: Any, group: str | None = None, **kwargs: Any) -> Future:
        return self._pool.submit(fn, *args, **kwargs)

    def __enter__(self) -> _ThreadPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class LocalRunner:
    """A thread pool on this machine (the default)."""

    name = "local"

    def pool(self, workers: int, hints: Hints = ROLLOUT) -> _ThreadPool:
        return _ThreadPool(workers)


def make_runner(name: str = "local", **options: Any) -> Runner:
    """The runner registered as ``name`` (``local`` or ``ray``), built with ``options``
    (``ConfigError`` naming the known ones for an unknown name)."""
    return RUNNERS.create(name, **options)


def runner_of(config: RunnerConfig) -> Runner:
    """The runner ``config`` names (``ConfigError`` for an address without the ray runner)."""
    if config.address and config.name != "ray":
        raise ConfigError(f"--ray-address {config.address} is set but the runner is {config.name!r}",
                          hint="add --runner ray, or drop --ray-address")
    return make_runner(config.name, **({"address": config.address} if config.name == "ray" else {}))


__all__ = ["EVALUATION", "ROLLOUT", "RUNNERS", "SYNTH_CHECK", "VALIDATION", "Hints", "LocalRunner", "Pool", "Runner",
           "environment_group", "make_runner", "runner_of"]
