"""The trace store: what really happened, recorded as the world models would have been asked.

Real episodes record every command as a ``StepTrace`` (the SWT context built BEFORE the command
ran, then the real output, exit code and duration) and every evaluation as an ``EvalTrace`` (the
task, the patch, the SWR context, the real verdict, report and test output). Traces are the training
data of the surrogates and the ground truth of fidelity (``sweworld.world.fidelity``) and of the
replay server (``sweworld.world.replay``).

``TraceStore(path)`` is an append-only JSONL file, crash-safe like the trajectory store: each record
is one line written whole, flushed and fsynced under an exclusive ``flock`` (so threads and
processes can append to one file; ``shipping.append_lines``); a last line cut short by a crash is
ignored by readers and cut off before the next append. Within a run's item, records are held and
appended by the driver with the item's result: an episode's steps are committed together or (an
attempt killed mid-episode) not at all. Reading skips lines that are not a valid record, logs
them and lists them in ``invalid`` (``path:line: why``).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from sweworld.parallel import shipping
from sweworld.world.context import SWRContext, SWTContext

log = logging.getLogger(__name__)
TRACES_FILE = "traces.jsonl"
"""The trace file's name inside a run directory (``sweworld world collect``)."""


class StepTrace(BaseModel):
    """One command of a real episode."""

    kind: Literal["step"] = "step"
    instance_id: str
    repo: str
    episode: str = Field(default="", description="Id shared by the steps of one episode.")
    step: int = Field(default=0, description="Index of the command in its episode (0 first).")
    command: str
    routed: Literal["real", "sim"] = Field(description="Where the router sends this command in a sim episode.")
    context: SWTContext = Field(description="SWT's context for the command, built before it ran.")
    output: str = ""
    exit_code: int = 0
    duration: float = 0.0
    timed_out: bool = False
    truncated: bool = False
    backend: str = Field(default="real", description="Which backend produced the output.")
    at: float = Field(default_factory=time.time, description="When it was recorded (Unix time).")


class EvalTrace(BaseModel):
    """One evaluation of a patch by the real harness."""

    kind: Literal["eval"] = "eval"
    task: dict[str, Any] = Field(description="The Task as a dict (model_dump).")
    patch: str = ""
    patch_applies: bool | None = Field(default=None, description=(
        "`git apply --check` of the patch on the base commit, as SWR checks it (None: not checked)."))
    context: SWRContext = Field(description="SWR's context for the patch.")
    resolved: bool
    report: dict[str, Any] = Field(description="The harness's InstanceReport (model_dump).")
    test_output: str = Field(default="", description="test_output.txt of the run (nonce masked as <nonce>).")
    backend: str = "real"
    agent: str = Field(default="", description=(
        "Who wrote the patch (a policy, or a run's model_name_or_path); fidelity groups by it."))
    at: float = Field(default_factory=time.time)

    @property
    def instance_id(self) -> str:
        return str(self.task.get("instance_id", ""))

    @property
    def repo(self) -> str:
        return str(self.task.get("repo", ""))


Trace = Annotated[StepTrace | EvalTrace, Field(discriminator="kind")]
_TRACE: TypeAdapter[StepTrace | EvalTrace] = TypeAdapter(Trace)


def new_episode_id() -> str:
    return uuid.uuid4().hex[:16]


class TraceStore:
    """Append-only JSONL of ``StepTrace``/``EvalTrace`` records (see the module docstring)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.invalid: list[str] = []

    def append(self, record: StepTrace | EvalTrace) -> None:
        """Append ``record`` (inside a run's item: when the driver gets the item's result, with the
        item's other records; ``sweworld.parallel.shipping``)."""
        shipping.append(self.path, record.model_dump_json())

    def __iter__(self) -> Iterator[StepTrace | EvalTrace]:
        """The records in the order they were appended (a torn last line ignored)."""
        self.invalid = []
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        complete = data[:data.rfind(b"\n") + 1]  # a last line without its newline was cut short
        for number, raw in enumerate(complete.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                yield _TRACE.validate_python(json.loads(raw))
            except (json.JSONDecodeError, UnicodeDecodeError, ValidationError) as exc:
                why = str(exc).splitlines()[0]
                self.invalid.append(f"{self.path}:{number}: {why}")
                log.warning("skipped an invalid trace at %s:%d: %s", self.path, number, why)

    def load(self) -> list[StepTrace | EvalTrace]:
        return list(self)

    def steps(self) -> list[StepTrace]:
        return [t for t in self if isinstance(t, StepTrace)]

    def evals(self) -> list[EvalTrace]:
        return [t for t in self if isinstance(t, EvalTrace)]


def load_traces(*paths: str | Path) -> list[StepTrace | EvalTrace]:
    """The records of several trace files (a directory means its ``traces.jsonl``), in file order."""
    out: list[StepTrace | EvalTrace] = []
    for path in paths:
        path = Path(path)
        out += TraceStore(path / TRACES_FILE if path.is_dir() else path).load()
    return out
