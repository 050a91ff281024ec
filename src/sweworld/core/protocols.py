"""The protocols every pluggable part is written against, and the optional capabilities they may have.

This module sits on the floor (it imports ``types``, ``errors`` and ``executor`` only; the other
names in the annotations are imported for type checking alone), so any layer may import it:

- ``Executor`` (``sweworld.core.executor``): one episode's workspace;
- ``Backend``: prepares tasks, opens episodes (executors), evaluates predictions;
- ``Policy``: chooses the agent's next action;
- ``Verifier``: scores a sample (best-of-n);
- ``WorldModel``: writes SWT/SWR replies;
- ``Runner`` (and its ``Pool``): where work items run.

An optional capability is a small ``runtime_checkable`` protocol of its own, tested with
``isinstance(x, Capability)`` where it is used, never probed with ``getattr``:

- ``ExecCapable``: a stateless ``exec`` beside the persistent shell (the sandbox);
- ``Simulated``: a world's episode over a real workspace (``sandbox``);
- ``AsyncRun``: ``await arun(command)``, ``run`` on an event loop with no thread (the sandbox);
- ``ReadsBytes``: ``read_bytes(path)``, a file undecoded (the sandbox);
- ``Described``: an ``info`` mapping of what the episode is (workspace, interpreter);
- ``Bindable``: a policy drawing per sample, bound to one (instance, sample) first;
- ``Audited``: what carries audit counts (``audits``, the hybrid backend's): an episode, a trajectory,
  an evaluation report;
- ``Preparable``: a verifier that sees every sample before scoring (``prepare``);
- ``HoldsOut``: a predictor that can be refitted without one repository (``without``);
- ``Closeable``: something holding connections (``close``);
- ``Branchable``: an episode that can be snapshotted, forked and restored while it lives (the
  sandbox, sim and hybrid episodes over one); ``why_not_branchable`` says why another cannot.

Capabilities only the world uses live beside their one caller: ``world.swt.StructuredSWT``,
``world.simexec.StepHooks``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from sweworld.core.config import timeouts
from sweworld.core.executor import Executor
from sweworld.core.types import ExecResult, Task

if TYPE_CHECKING:
    from sweworld.harness.predictions import Prediction
    from sweworld.harness.report import InstanceReport
    from sweworld.models.base import ModelReply
    from sweworld.trajectory import Trajectory


@runtime_checkable
class Backend(Protocol):
    """Prepares tasks, opens episodes, evaluates predictions."""

    #: ``real``, ``sim`` or ``hybrid`` (recorded with every step and report).
    name: str

    def prepare(self, task: Task) -> None:
        """Build or fetch what ``task`` needs before an episode opens (``InfraError`` when it cannot)."""
        ...

    def open(self, task: Task, *, timeout: float | None = None, label: str = "") -> Executor:
        """A fresh episode of ``task`` (its own copy-on-write workspace at the base commit)."""
        ...

    def evaluate(self, task: Task, prediction: Prediction, log_dir: Path, *,
                 timeout: float = timeouts.EVALUATION) -> InstanceReport:
        """Grade ``prediction``: always a report (errors included), written to ``log_dir`` with the
        files of a SWE-bench run."""
        ...


@runtime_checkable
class Policy(Protocol):
    """Chooses the next action. Model-backed policies and scripted ones (oracle, noop, replay)."""

    name: str
    model: str

    def reset(self, task: Task) -> None: ...

    def act(self, messages: list[dict], tools: list[dict] | None) -> ModelReply: ...


@runtime_checkable
class Verifier(Protocol):
    """Scores a sample: higher = more likely resolved."""

    name: str

    def score(self, task: Task | None, trajectory: Trajectory) -> float: ...


@runtime_checkable
class WorldModel(Protocol):
    """Anything that writes SWT/SWR replies: ``n`` samples of the reply to ``messages``; ``attempt``
    counts retries after an invalid reply (a caching model serves a retry a fresh reply)."""

    def complete(self, messages: list[dict], n: int = 1, *, attempt: int = 0) -> list[str]: ...


@runtime_checkable
class Pool(Protocol):
    """Submits items; a context manager (leaving waits for nothing: callers wait for their futures)."""

    def share(self, obj: Any) -> Any:
        """A handle that ``submit`` passes to the items as ``obj`` itself (sent once per worker)."""
        ...

    def submit(self, fn: Callable[..., Any], /, *args: Any, group: str | None = None, **kwargs: Any) -> Future:
        """``fn(*args, **kwargs)`` on a worker, preferably one that ran ``group`` before."""
        ...

    def __enter__(self) -> Pool: ...

    def __exit__(self, *exc: object) -> None: ...


@dataclass(frozen=True)
class Hints:
    """What one work item needs: Ray reserves it per task (a thread pool ignores it)."""

    cpus: float = 1.0
    memory_mb: int | None = None


@runtime_checkable
class Runner(Protocol):
    """Where work items run (``local``: threads here; ``ray``: Ray tasks)."""

    name: str

    def pool(self, workers: int, hints: Hints = ...) -> Pool:
        """A pool running at most ``workers`` items at once (Ray: 0 = as many as the cluster fits)."""
        ...


# Optional capabilities.

@runtime_checkable
class ExecCapable(Protocol):
    """An executor with a stateless ``exec`` (a fresh shell; the agent's shell untouched); its ``run``
    takes ``cap`` too (bytes of output kept for that one command), as ``exec`` does."""

    def exec(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
             cap: int | None = None) -> ExecResult: ...


@runtime_checkable
class Simulated(Protocol):
    """A world's episode (sim, hybrid) over a real workspace, ``sandbox``: the base tree in an isolated
    sandbox with no environment, where navigation and edits run for real (and a framework's own tool
    machinery runs, the commands its agent types going through the world)."""

    sandbox: Executor


@runtime_checkable
class AsyncRun(Protocol):
    """An executor whose ``run`` can be awaited on an event loop without a thread (the sandbox)."""

    async def arun(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
                   cap: int | None = None) -> ExecResult: ...


@runtime_checkable
class ReadsBytes(Protocol):
    """An executor reading files as bytes, undecoded (the sandbox)."""

    def read_bytes(self, path: str) -> bytes: ...


@runtime_checkable
class Described(Protocol):
    """An executor describing its episode (``workspace``, interpreter, layer...)."""

    info: dict[str, Any]


@runtime_checkable
class Bindable(Protocol):
    """A policy that draws per sample: ``bind`` gives the policy of one (instance, sample)."""

    def bind(self, instance_id: str, sample: int) -> Policy: ...


@runtime_checkable
class Audited(Protocol):
    """What carries audit counts (``backends.audits``): a hybrid episode (its executor, its hooks), a
    trajectory, an evaluation report."""

    @property
    def audits(self) -> dict | None: ...


@runtime_checkable
class Preparable(Protocol):
    """A verifier that sees every sample first (self-consistency, the hybrid rule)."""

    def prepare(self, samples: Sequence[Trajectory], tasks: Mapping[str, Task] | None = None) -> None: ...


@runtime_checkable
class HoldsOut(Protocol):
    """A predictor that can be refitted without one repository's traces (cross-validation)."""

    def without(self, traces: Iterable[Any], repo: str) -> Any: ...


@runtime_checkable
class Closeable(Protocol):
    """Something holding connections or files until ``close``."""

    def close(self) -> None: ...


@runtime_checkable
class Branchable(Protocol):
    """An episode that can be copied or rewound while it lives (``docs/branching.md``).

    ``snapshot()`` freezes the episode's files and its shell state (cwd, exported variables) into a
    handle; ``fork(handle=None)`` opens a new live episode in that state (``None``: a snapshot of
    now); ``restore(handle)`` puts the episode back to it; ``release(handle)`` frees what it holds on
    disk (else freed when the episode closes). Running processes are never copied: a fork starts
    with none, and a restore ends the episode's. A handle belongs to the episode that took it (and to
    that episode's forks of it): restore takes only the episode's own handles, fork any of them."""

    def snapshot(self) -> Any: ...

    def fork(self, handle: Any = None) -> Executor: ...

    def restore(self, handle: Any) -> None: ...

    def release(self, handle: Any) -> None: ...


def why_not_branchable(executor: object) -> str | None:
    """``None`` when ``executor`` can be snapshotted, forked and restored, else the reason it cannot
    (one line for an error or a capability table)."""
    if not isinstance(executor, Branchable):
        return (f"{type(executor).__name__} has no snapshot/fork/restore (only sweworld's sandbox and the "
                "sim and hybrid episodes over one have them)")
    reason = getattr(executor, "branching_unsupported", None)
    return reason() if callable(reason) else None


__all__ = ["AsyncRun", "Audited", "Backend", "Bindable", "Branchable", "Closeable", "Described", "ExecCapable", "Executor", "Hints", "HoldsOut",
           "Policy", "Pool", "Preparable", "ReadsBytes", "Runner", "Simulated", "Verifier", "WorldModel", "why_not_branchable"]
