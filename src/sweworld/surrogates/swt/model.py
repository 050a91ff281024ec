"""The embedded SWT: structured, CPU-only predictions of code execution, each with a confidence.

``EmbeddedSWT.predict(context) -> SWTPrediction`` (an ``SWTOutput``, a confidence in [0, 1] and the
path that produced it):

(a) ``replay``: a recorded step of the same instance with the same command, diff and executed
    files (``facts.state_key``): its real output, confidence 1.0;
(b) ``tests``: a pytest / unittest / Django / sympy test command (under tox or nox too) of a task it
    knows (``structured``);
    ``script``: ``python FILE.py`` where the script names test ids of the task (``scripts``);
(c) ``neighbour``: the nearest recorded step by similarity = TF-IDF cosine over the command and
    the names of the files it executes (``neighbors``) times the agreement of the workspace: 1 for
    the same instance in the same state, 0.9 same instance and state class (``state_class``: base,
    gold, near, away), 0.8 same instance, 0.7 another instance in the same state class, 0.5
    otherwise; its output, confidence = that similarity (below 1); ``none`` (confidence 0) when
    nothing shares a word.

The task of a context is found by instance id, else by its problem statement (``swe-world``
prompts name no instance), else read from a privileged context; ``add_tasks`` makes dataset rows
known without traces (a repository never traced still gets structured test output).

``fit(traces, tasks=, trees=)`` learns from traces (``learn``); ``save(path)`` / ``load(path)``
write and read JSON (gzip when the name ends in ``.gz``), no pickle.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from sweworld.core.types import Task
from sweworld.surrogates.swt.bands import calibrated
from sweworld.surrogates.swt.facts import (
    EmbeddedData,
    InstanceFacts,
    RepoFacts,
    StepRecord,
    diff_digest,
    problem_key,
    state_key,
)
from sweworld.surrogates.swt.learn import learn, task_from_context
from sweworld.surrogates.swt.neighbors import TfidfIndex, tokens
from sweworld.surrogates.swt.predictor import GoldTouchPredictor, TestOutcomePredictor, state_class
from sweworld.surrogates.swt.scripts import predict_script
from sweworld.surrogates.swt.structured import SWTPrediction, predict_tests
from sweworld.surrogates.swt.testcmd import parse_script_command, parse_test_command
from sweworld.world.context import SWTContext
from sweworld.world.parse import SWTOutput
from sweworld.world.traces import EvalTrace, StepTrace

if TYPE_CHECKING:
    from sweworld.surrogates.swr.patched import FileSource

MAX_NEIGHBOUR_CONFIDENCE = 0.99
"""Only exact replay is certain."""


def _document(command: str, files: Iterable[str]) -> list[str]:
    return tokens(command) + [f"file:{path.rsplit('/', 1)[-1]}" for path in files]


class EmbeddedSWT:
    """See the module docstring."""

    def __init__(self, data: EmbeddedData | None = None, *, predictor: TestOutcomePredictor | None = None,
                 replay: bool = True, structured: bool = True, sources: Callable[[Task], FileSource] | None = None):
        self.data = data or EmbeddedData()
        self.predictor = predictor or GoldTouchPredictor()
        self.replay = replay
        self.structured = structured
        self.sources = sources
        """A task's base files (``read_for``)."""
        self._index: TfidfIndex | None = None
        self.calibration: dict[str, float] = {}
        """Calibrated exit-code confidences (``calibrate.calibration``); {}: the raw ones."""
        self.timings: list[float] = []
        """Seconds of each ``predict`` call."""

    @classmethod
    def fit(cls, traces: Iterable[StepTrace | EvalTrace], *, tasks: Iterable[Task] = (),
            trees: Callable[[Task], Path | None] | None = None, **options) -> EmbeddedSWT:
        return cls(learn(traces, tasks, trees=trees), **options)

    def add_tasks(self, tasks: Iterable[Task]) -> None:
        """Make dataset rows known (a task already known from traces keeps its facts)."""
        for task in tasks:
            self.data.add_task(task, replace=False)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = self.data.model_dump_json()
        if path.name.endswith(".gz"):
            path.write_bytes(gzip.compress(text.encode("utf-8")))
        else:
            path.write_text(text, encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path, **options) -> EmbeddedSWT:
        raw = Path(path).read_bytes()
        text = gzip.decompress(raw).decode("utf-8") if raw[:2] == b"\x1f\x8b" else raw.decode("utf-8")
        return cls(EmbeddedData.model_validate_json(text), **options)

    def facts_for(self, context: SWTContext) -> InstanceFacts | None:
        """The facts of the context's task (see the module docstring), or None when it is unknown."""
        facts = self.data.instances.get(context.task.instance_id)
        if facts is None and context.task.problem_statement:
            found = self.data.problems.get(problem_key(context.task.problem_statement))
            facts = self.data.instances.get(found or "")
        if facts is None and context.privileged and (context.fail_to_pass or context.pass_to_pass):
            facts = InstanceFacts(task=task_from_context(context).model_dump(mode="json"))
        return facts

    def predict(self, context: SWTContext) -> SWTPrediction:
        started = time.perf_counter()
        try:
            got = self._predict(context)
            if self.calibration:
                got.confidence = calibrated(self.calibration, got)
            got.output.confidence = got.confidence  # SWTOutput carries it on to SimExecResult
            return got
        finally:
            self.timings.append(time.perf_counter() - started)

    def _predict(self, context: SWTContext) -> SWTPrediction:
        if self.replay:
            index = self.data.replay.get(state_key(context))
            if index is not None:
                step = self.data.steps[index]
                return SWTPrediction(SWTOutput(stdout=step.output, stderr="", exit_code=step.exit_code), 1.0, "replay",
                                  {"step": index})
        facts = self.facts_for(context)
        run = parse_test_command(context.command, context.workdir) if self.structured else None
        if run is not None and facts is not None:
            return predict_tests(run, context, facts, self.repo_facts(facts.task["repo"], context.workdir),
                                 self.predictor, self.read_for(facts))
        script = parse_script_command(context.command, context.workdir) if self.structured else None
        if script is not None and facts is not None:
            got = predict_script(script, context, facts, self.repo_facts(facts.task["repo"], context.workdir),
                                 self.predictor, lambda code: self.neighbour(context, facts, exit_code=code),
                                 self.read_for(facts))
            if got is not None:
                return got
        return self.neighbour(context, facts)

    def read_for(self, facts: InstanceFacts) -> FileSource | None:
        """The base files of the facts' task: ``sources`` when given, else the per-test predictor's
        (``EmbeddedSWR.sources``: the repository cache's mirror), else None (the context's texts
        only)."""
        sources = self.sources or getattr(self.predictor, "sources", None)
        return sources(facts.as_task()) if sources is not None else None

    def repo_facts(self, repo: str, workdir: str = "/testbed") -> RepoFacts:
        """The facts of ``repo``; a repository never traced borrows the platform line and the
        interpreter of another (the sandbox is the same)."""
        facts = self.data.repos.get(repo) or RepoFacts()
        others = [r for r in self.data.repos.values() if r.header]
        header = facts.header or ([others[0].header[0], f"rootdir: {workdir}"] if others else [])
        python = facts.python or next((r.python for r in self.data.repos.values() if r.python), "")
        return facts.model_copy(update={"header": header, "python": python})

    @property
    def index(self) -> TfidfIndex:
        if self._index is None or self._index.n != len(self.data.steps):
            self._index = TfidfIndex([_document(s.command, s.files) for s in self.data.steps])
        return self._index

    def neighbour(self, context: SWTContext, facts: InstanceFacts | None = None, *,
                  exit_code: int | None = None) -> SWTPrediction:
        """Part (c): the nearest recorded step (see the module docstring); with ``exit_code``, the
        nearest of those that exited so (an empty output with that code when none did)."""
        query = _document(context.command, [f.path for f in context.files])
        hits = [h for h in self.index.query(query, k=50 if exit_code is not None else 20)
                if exit_code is None or self.data.steps[h[0]].exit_code == exit_code]
        if not hits and exit_code is not None:
            return SWTPrediction(SWTOutput(stdout="", stderr="", exit_code=exit_code), 0.0, "none")
        if not hits:
            return SWTPrediction(SWTOutput(stdout="", stderr="", exit_code=0), 0.0, "none")
        instance = facts.task["instance_id"] if facts else context.task.instance_id
        state = diff_digest(context.diff)
        kind = state_class(context.diff, facts.task.get("patch") or "") if facts else ""

        def agreement(step: StepRecord) -> float:
            if step.instance_id == instance:
                return 1.0 if step.diff == state else 0.9 if step.state == kind else 0.8
            return 0.7 if kind and step.state == kind else 0.5

        def rank(hit: tuple[int, float]) -> float:
            step = self.data.steps[hit[0]]
            return hit[1] * agreement(step) + 0.01 * (step.repo == context.task.repo)

        index, cosine = max(hits, key=rank)
        step = self.data.steps[index]
        return SWTPrediction(SWTOutput(stdout=step.output, stderr="", exit_code=step.exit_code),
                          round(min(cosine * agreement(step), MAX_NEIGHBOUR_CONFIDENCE), 4), "neighbour",
                          {"step": index, "command": step.command, "instance_id": step.instance_id, "state": kind})
