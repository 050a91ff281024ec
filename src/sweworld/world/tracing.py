"""Recording real episodes and evaluations into a ``TraceStore``.

- ``TracingExecutor(inner, task, store)``: an ``Executor`` that runs everything on ``inner`` and
  records each ``run`` as a ``StepTrace``: SWT's context is built BEFORE the command runs, from the
  episode as it is then (files the command executes, the diff, the previous steps as history, kept
  as the sim executor keeps them), so that a sim episode in the same state asks SWT exactly that.
  ``routed`` is the router's decision (``sim`` when any part of the command would be predicted).
  File operations (``read_file``/``write_file``) are not commands and are not recorded.
- ``record_eval(store, task, patch, report, log_dir, open_workspace)``: after a real evaluation,
  an ``EvalTrace`` with SWR's context built as ``SWR.evaluate`` builds it (the test files after the
  test patch, read in a fresh workspace of the base tree), the real verdict, the report and the run's
  ``test_output.txt``. An evaluation that failed for infrastructure (no verdict) is not recorded.

The contexts use the default ``ContextLimits`` and no privileged fields, as the default
``SWTConfig``/``SWRConfig`` build them (pass ``limits``/``privileged`` to record others).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sweworld.core.errors import InfraError
from sweworld.core.executor import Executor
from sweworld.core.protocols import Described, ExecCapable
from sweworld.core.types import ExecResult, Task
from sweworld.harness.report import TEST_OUTPUT_FILE, InstanceReport
from sweworld.world.branching import HistoryBranches
from sweworld.world.context import ContextLimits, HistoryStep, swt_context, with_step
from sweworld.world.router import route
from sweworld.world.swr import patch_context
from sweworld.world.traces import EvalTrace, StepTrace, TraceStore, new_episode_id

log = logging.getLogger(__name__)


class TracingExecutor(HistoryBranches):
    """``Executor`` over ``inner`` recording every command (see the module docstring)."""

    def __init__(self, inner: Executor, task: Task, store: TraceStore, *, backend: str = "real",
                 limits: ContextLimits | None = None, privileged: bool = False):
        self.inner, self.task, self.store, self.backend = inner, task, store, backend
        self.limits, self.privileged = limits or ContextLimits(), privileged
        self.workdir = inner.workdir
        self.episode = new_episode_id()
        self.history: list[HistoryStep] = []
        self.steps = 0

    def run(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
            cap: int | None = None) -> ExecResult:
        context = swt_context(self.task, command, self.inner, self.history, limits=self.limits,
                              privileged=self.privileged)
        result = (self.inner.run(command, cwd=cwd, timeout=timeout, cap=cap)  # type: ignore[call-arg]
                  if cap is not None else self.inner.run(command, cwd=cwd, timeout=timeout))
        self.store.append(StepTrace(
            instance_id=self.task.instance_id, repo=self.task.repo, episode=self.episode, step=self.steps,
            command=command, routed="sim" if route(command).spans else "real", context=context,
            output=result.output, exit_code=result.exit_code, duration=result.duration, timed_out=result.timed_out,
            truncated=result.truncated, backend=self.backend))
        self.steps += 1
        self.history = with_step(self.history, command, result)
        return result

    @property
    def info(self) -> dict[str, Any]:
        """The inner executor's description (``protocols.Described``), {} when it has none."""
        return self.inner.info if isinstance(self.inner, Described) else {}

    def exec(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
             cap: int | None = None) -> ExecResult:
        """The inner executor's stateless command (not traced: not an agent step), or its ``run``
        where it has none (``protocols.ExecCapable``; spelled out, as ``isinstance`` on a
        protocol does not see what ``__getattr__`` forwards on Python 3.12+)."""
        if isinstance(self.inner, ExecCapable):
            return self.inner.exec(command, cwd=cwd, timeout=timeout, cap=cap)
        return self.inner.run(command, cwd=cwd, timeout=timeout)

    def branch_workspace(self) -> Executor:
        return self.inner

    def branch_child(self, workspace: Executor) -> TracingExecutor:
        """A fork is traced too, as an episode of its own whose steps count on from the snapshot's."""
        return TracingExecutor(workspace, self.task, self.store, backend=self.backend, limits=self.limits,
                               privileged=self.privileged)

    def __getattr__(self, name: str) -> Any:
        """Everything but ``run`` is the inner executor's: read_file, write_file, diff, close, info ...
        (not ``arun``: an awaited command would bypass the trace; callers use ``run`` in a thread)."""
        if name in ("inner", "arun"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __enter__(self) -> TracingExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.close()


def eval_trace(task: Task, patch: str | None, report: InstanceReport, test_output: str, workspace: Executor, *,
               limits: ContextLimits | None = None, backend: str = "real") -> EvalTrace:
    """The ``EvalTrace`` of ``report``; ``workspace`` holds the base tree (left as it was)."""
    context, applies = patch_context(task, patch or "", workspace, limits or ContextLimits())
    return EvalTrace(task=task.model_dump(), patch=patch or "", patch_applies=applies, context=context,
                     resolved=report.resolved, report=report.model_dump(), test_output=test_output, backend=backend)


def record_eval(store: TraceStore, task: Task, patch: str | None, report: InstanceReport, log_dir: Path,
                open_workspace: Callable[[], Executor], *, limits: ContextLimits | None = None) -> EvalTrace | None:
    """Append the ``EvalTrace`` of a finished real evaluation (see the module docstring); None when the
    evaluation has no verdict or the workspace could not be opened (logged)."""
    if report.error_kind == "infra":
        return None
    output_file = Path(log_dir) / TEST_OUTPUT_FILE
    test_output = output_file.read_text(encoding="utf-8", errors="replace") if output_file.exists() else ""
    try:
        with open_workspace() as workspace:
            trace = eval_trace(task, patch, report, test_output, workspace, limits=limits)
    except InfraError as exc:
        log.warning("no evaluation trace for %s: the workspace failed: %s", task.instance_id, exc)
        return None
    store.append(trace)
    return trace
