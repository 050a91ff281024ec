"""SWT, the transition model: the predicted result of one code-execution command.

``SWT(model, config).predict(task, command, executor, history)`` builds the context
(``sweworld.world.context.swt_context``), renders it in the configured prompt style, asks the model
and parses ``{stdout, stderr, exit_code}``. The result is a ``SimExecResult`` (an ``ExecResult``):
``output`` is stdout then stderr, as a real run's interleaved output would read for most commands.

An invalid reply is asked again (``max_attempts`` rounds in all); past that the command gets an
observation marked ``sim_failure=True`` with exit code ``SIM_FAILURE_EXIT_CODE`` and a message
saying the simulator failed: a result, never an exception in the agent loop. A model endpoint that
fails after its own HTTP retries raises ``ModelError`` (infrastructure, as with a real backend).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from sweworld.core.executor import Executor
from sweworld.core.types import ExecResult, Task
from sweworld.world.context import ContextLimits, HistoryStep, SWTContext, swt_context
from sweworld.world.parse import SWTOutput, parse_swt, sample
from sweworld.world.templates import render
from sweworld.world.worldmodels import WorldModel

SIM_FAILURE_EXIT_CODE = -1
"""Exit code of the observation given when SWT produced no valid reply (SWE-World's choice too)."""


class SimExecResult(ExecResult):
    """An ``ExecResult`` that a world model predicted."""

    simulated: bool = Field(default=True, description="Predicted, not run.")
    sim_failure: bool = Field(default=False, description="No valid prediction: the output is an error message.")
    sim_error: str | None = Field(default=None, description="Why the last reply was invalid (with sim_failure).")
    sim_attempts: int = Field(default=1, description="Requests made for this prediction (retries included).")
    stdout: str = Field(default="", description="The predicted stdout (``output`` holds stdout then stderr).")
    stderr: str = Field(default="", description="The predicted stderr.")
    confidence: float | None = Field(default=None, description="The model's own confidence, when it gives one.")


@runtime_checkable
class StructuredSWT(Protocol):
    """An SWT model that reads the context itself (the embedded SWT) instead of a rendered prompt."""

    def predict_context(self, context: SWTContext) -> SWTOutput: ...


class SWTConfig(BaseModel):
    """How SWT builds its prompt and treats replies."""

    style: str = Field(default="sweworld", description="Prompt style (sweworld.world.templates.styles()).")
    privileged: bool = Field(default=False, description=(
        "Show the gold patch, hints and test names (SWE-World's checkpoints were trained with them)."))
    max_attempts: int = Field(default=3, ge=1, description="Requests per command before a simulation failure.")
    limits: ContextLimits = Field(default_factory=ContextLimits, description="Bounds on the context.")


def as_history(steps: Sequence[HistoryStep | tuple[str, ExecResult | str]]) -> list[HistoryStep]:
    """History steps from ``HistoryStep`` or ``(command, ExecResult | output)`` pairs."""
    out = []
    for step in steps:
        if isinstance(step, HistoryStep):
            out.append(step)
            continue
        command, result = step
        if isinstance(result, ExecResult):
            out.append(HistoryStep(command=command, output=result.output, exit_code=result.exit_code))
        else:
            out.append(HistoryStep(command=command, output=str(result)))
    return out


def to_result(output: SWTOutput, *, duration: float = 0.0, attempts: int = 1) -> SimExecResult:
    """A parsed prediction as an ``ExecResult``: stdout, then stderr on a new line."""
    text = output.stdout
    if output.stderr:
        text += ("" if not text or text.endswith("\n") else "\n") + output.stderr
    return SimExecResult(output=text, exit_code=output.exit_code, duration=duration, sim_attempts=attempts,
                         stdout=output.stdout, stderr=output.stderr, confidence=output.confidence)


def failure_result(error: str | None, *, duration: float = 0.0, attempts: int = 1) -> SimExecResult:
    """The observation of a command SWT could not predict."""
    return SimExecResult(
        output=f"sweworld: the simulated environment could not produce the output of this command "
               f"({attempts} invalid replies from the transition model; last: {error}). Try again, or run another command.",
        exit_code=SIM_FAILURE_EXIT_CODE, duration=duration, sim_failure=True, sim_error=error, sim_attempts=attempts)


class SWT:
    """The transition model (see the module docstring)."""

    def __init__(self, model: WorldModel, config: SWTConfig | None = None):
        self.model = model
        self.config = config or SWTConfig()
        render(self.config.style, "swt", _EMPTY)  # an unknown style fails here, not at the first step

    def context(self, task: Task, command: str, executor: Executor,
                history: Sequence[HistoryStep | tuple[str, ExecResult | str]] = ()) -> SWTContext:
        return swt_context(task, command, executor, as_history(history), limits=self.config.limits,
                           privileged=self.config.privileged)

    def messages(self, context: SWTContext) -> list[dict[str, str]]:
        return render(self.config.style, "swt", context)

    def predict(self, task: Task, command: str, executor: Executor,
                history: Sequence[HistoryStep | tuple[str, ExecResult | str]] = ()) -> SimExecResult:
        """The predicted result of ``command`` in the episode ``executor``."""
        started = time.monotonic()
        return self.predict_context(self.context(task, command, executor, history), started)

    def predict_context(self, context: SWTContext, started: float | None = None) -> SimExecResult:
        """A structured model (one with ``predict_context(context) -> SWTOutput``, e.g. the embedded
        SWT) reads the context itself; any other gets the rendered prompt."""
        started = time.monotonic() if started is None else started
        if not isinstance(self.model, StructuredSWT):
            return self.predict_messages(self.messages(context), started)
        return to_result(self.model.predict_context(context), duration=time.monotonic() - started)

    def predict_messages(self, messages: list[dict[str, str]], started: float | None = None) -> SimExecResult:
        """Ask the model for ``messages`` (already rendered), with the retries of the module docstring."""
        started = time.monotonic() if started is None else started
        got = sample(self.model, messages, 1, parse_swt, max_attempts=self.config.max_attempts)
        duration = time.monotonic() - started
        output = got.outputs[0]
        if output is None:
            return failure_result(got.errors[0], duration=duration, attempts=got.attempts)
        return to_result(output, duration=duration, attempts=got.attempts)


_EMPTY = SWTContext(task={"instance_id": "-", "repo": "-", "base_commit": "-"}, workdir="/testbed", command="true")
