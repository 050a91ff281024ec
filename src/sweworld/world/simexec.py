"""The executor of a sim episode: a real copy-on-write workspace, simulated code execution.

Each command is routed (``sweworld.world.router``): when every simple command in it is a file,
navigation or git utility, it runs for real in the episode's sandbox (the base tree, no environment
installed). Otherwise SWT predicts ``{stdout, stderr, exit_code}`` of each simulated simple command
(in order of appearance, with the recent steps as context), the command is rewritten with each such
span replaced by a stub that prints the prediction and returns its exit code, and the rewritten
command runs for real: ``python x.py | grep y`` pipes the predicted output through the real grep,
``python x.py > out`` writes a real file, ``cd src && python x.py`` really changes directory. The
result goes through the same rendering as a real one (exit code, truncation) and is marked
``simulated``. When SWT gives no valid prediction the observation is its simulation-failure notice
(exit code -1), never an exception.
"""

from __future__ import annotations

import base64
from typing import Any, Protocol, runtime_checkable

from sweworld.core.executor import Executor
from sweworld.core.protocols import Audited, Described
from sweworld.core.types import ExecResult, Task
from sweworld.world.branching import HistoryBranches
from sweworld.world.context import HistoryStep, with_step
from sweworld.world.router import RoutePlan, rewrite, route
from sweworld.world.swt import SWT, SimExecResult

STUB = "__sweworld_sim"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def stub_definition(predictions: list[SimExecResult]) -> str:
    """A bash function ``__sweworld_sim I`` printing prediction I's stdout and stderr (exactly, via
    base64) and returning its exit code (modulo 256, as a real exit status is)."""
    cases = [f"    {i}) printf %s '{_b64(p.stdout)}' | base64 -d; printf %s '{_b64(p.stderr)}' | base64 -d >&2; "
             f"return {p.exit_code % 256};;" for i, p in enumerate(predictions)]
    return "\n".join([f"{STUB}() {{", '  case "$1" in', *cases, "  esac", "}"])


@runtime_checkable
class StepHooks(Protocol):
    """What a sim episode (``world.simexec.SimExecutor``) calls around each command: ``decide`` may
    replace a simulated command's result by a real one (``None``: keep the simulation); ``after_step``
    sees every command's result (hybrid audits, traces)."""

    def decide(self, executor: Executor, command: str, predictions: list[SimExecResult], cwd: str | None,
               timeout: float | None) -> ExecResult | None: ...

    def after_step(self, executor: Executor, command: str, plan: RoutePlan, predictions: list[SimExecResult],
                   result: ExecResult) -> None: ...


@runtime_checkable
class ForkableHooks(Protocol):
    """Hooks with per-episode state (the hybrid's audit tally and draws): a fork gets ``fork()``'s copy."""

    def fork(self) -> StepHooks: ...


class SimExecutor(HistoryBranches):
    """``Executor`` of a sim episode (see the module docstring) over ``sandbox`` (a real episode of
    the base tree). ``hooks`` (``StepHooks``, the hybrid backend's audits and routing):
    ``hooks.decide(self, command, predictions, cwd, timeout)`` may replace a simulated command's
    result by a real one; ``hooks.after_step(self, command, plan, predictions, result)`` is called
    after every command."""

    persistent = True

    def __init__(self, sandbox: Executor, task: Task, swt: SWT, *, hooks: StepHooks | None = None):
        self.sandbox, self.task, self.swt, self.hooks = sandbox, task, swt, hooks
        self.workdir = sandbox.workdir
        self.history: list[HistoryStep] = []
        self.info: dict[str, Any] = {**(sandbox.info if isinstance(sandbox, Described) else {}), "backend": "sim"}

    @property
    def audits(self) -> dict | None:
        """The episode's audit counts, when its hooks keep any (``protocols.Audited``: the hybrid's)."""
        return self.hooks.audits if isinstance(self.hooks, Audited) else None

    def run(self, command: str, *, cwd: str | None = None, timeout: float | None = None) -> ExecResult:
        plan = route(command)
        predictions: list[SimExecResult] = []
        if not plan.spans:
            result = self.sandbox.run(command, cwd=cwd, timeout=timeout)
        else:
            result = self._simulate(command, plan, predictions, cwd, timeout)
        self.history = with_step(self.history, command, result)
        if self.hooks is not None:
            self.hooks.after_step(self, command, plan, predictions, result)
        return result

    def _simulate(self, command: str, plan: RoutePlan, predictions: list[SimExecResult],
                  cwd: str | None, timeout: float | None) -> ExecResult:
        for span in plan.spans:
            predicted = self.swt.predict(self.task, span.context, self.sandbox, self.history)
            predictions.append(predicted)
            if predicted.sim_failure:
                break
        real = self.hooks.decide(self, command, predictions, cwd, timeout) if self.hooks is not None else None
        if real is not None:
            return real
        if predictions[-1].sim_failure:
            return predictions[-1]
        script = stub_definition(predictions) + "\n" + rewrite(command, plan, stub=STUB)
        ran = self.sandbox.run(script, cwd=cwd, timeout=timeout)
        return SimExecResult(output=ran.output, exit_code=ran.exit_code, timed_out=ran.timed_out,
                             truncated=ran.truncated, restarted=ran.restarted,
                             duration=ran.duration + sum(p.duration for p in predictions),
                             sim_attempts=sum(p.sim_attempts for p in predictions))

    def read_file(self, path: str) -> str:
        return self.sandbox.read_file(path)

    def write_file(self, path: str, content: str) -> None:
        self.sandbox.write_file(path, content)

    def diff(self) -> str:
        return self.sandbox.diff()

    # -- branching (protocols.Branchable, world.branching): the workspace's, with the history beside
    def branch_workspace(self) -> Executor:
        return self.sandbox

    def branch_child(self, workspace: Executor) -> SimExecutor:
        """A fork's sim episode: its own copy of the hooks (a hybrid episode's tally and draws go on apart)."""
        return SimExecutor(workspace, self.task, self.swt,
                           hooks=self.hooks.fork() if isinstance(self.hooks, ForkableHooks) else self.hooks)

    def close(self) -> None:
        self.sandbox.close()

    def __enter__(self) -> SimExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
