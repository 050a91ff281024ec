"""``mine``: a repository's history -> candidates -> validated SWE-bench instances.

1. The first-parent chain of ``rev`` (or the commits named), screened by ``mine.rules`` and turned
   into candidate rows (``mine.candidates``).
2. Each candidate validated with the existing machinery (``harness.validate.validate_instance``,
   SWE-Gym's protocol): the tests the test patch touches, at the base with the test patch and with
   the fix, twice each, on the real backend; flaky tests dropped; kept when some test goes
   fail -> pass and none pass -> fail. Candidates run on a runner (threads here, or Ray) in history
   order, newest first, until ``max_instances`` are kept.
3. Each verdict goes to the ledger as it arrives (``mine.ledger``: a rerun validates only what is
   missing); a kept one gets its statement (the message, or a model's back-translation).

Every candidate that is not kept is counted by reason in the summary.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from sweworld.core.config import timeouts
from sweworld.core.types import Task
from sweworld.mine.candidates import Candidate, Screen
from sweworld.mine.ledger import Ledger, verdict_key
from sweworld.mine.rules import Limits
from sweworld.mine.statement import model_statement
from sweworld.models.base import ChatModel
from sweworld.parallel.map import map_ordered
from sweworld.parallel.runner import VALIDATION, Runner, environment_group
from sweworld.runs.validate import Validation, validate_instance
from sweworld.synth.stats import machine_cpu_seconds
from sweworld.tasks.rows import dump_row


@dataclass
class MineOptions:
    """What to mine and how (the CLI's flags)."""

    rev: str = "HEAD"
    """Branch, tag or commit whose first-parent chain is mined."""
    since: str | None = None
    """Only steps committed on or after this date (git's --since)."""
    until: str | None = None
    """Only steps committed on or before this date (git's --until)."""
    commits: list[str] | None = None
    """Mine exactly these commits (each diffed against its first parent) instead of a range."""
    max_instances: int | None = None
    """Stop once this many instances are validated."""
    max_candidates: int | None = None
    """Validate at most this many candidates (newest first)."""
    workers: int = 2
    limits: Limits = field(default_factory=Limits)
    timeout: float = timeouts.EVALUATION
    """Wall limit of one test run, seconds (SWE-bench's)."""
    runs: int = 2
    """Runs per condition (before / after the fix); a test that differs between them is flaky."""
    model: ChatModel | None = None
    """Writes the statements of kept instances; None: the commit message."""
    exclude: list[str] = field(default_factory=list)
    """Datasets (shipped names, files, directories, hub names) whose instances are not mined again:
    a step whose base commit, fix commit or instance id one of their rows has is dropped
    (``mine.exclude``)."""


def drop_key(verdict: Validation) -> str:
    """The summary's name for why a validated candidate was dropped."""
    reason = verdict.reason
    if reason.startswith("no test goes fail -> pass"):
        return "no FAIL_TO_PASS (flaky only)" if verdict.flaky else "no FAIL_TO_PASS"
    if reason.startswith("the gold patch breaks"):
        return "fix breaks passing tests"
    if reason.startswith("infrastructure: the world cannot run"):  # harness.worldcheck: no shell, no runner...
        return "world cannot run"
    if reason.startswith("infrastructure:"):
        return "environment does not build" if "build" in reason.lower() or "install" in reason.lower() \
            else "infrastructure"
    for prefix, key in (("gold patch does not apply", "fix does not apply"),
                        ("test patch does not apply", "test patch does not apply"),
                        ("tests timed out", "tests time out")):
        if reason.startswith(prefix):
            return key
    return reason


@dataclass
class MineResult:
    screen: Screen
    entries: list[dict[str, Any]]
    """The ledger entries of the candidates decided in this run (reused ones included), in order."""
    resumed: int
    seconds: float
    cpu_seconds: float | None
    """The whole machine's CPU time over the run (sandboxes of every kind included)."""

    @property
    def instances(self) -> list[Task]:
        return [Task.model_validate(e["row"]) for e in self.entries if e["kept"]]

    def summary(self, **head: Any) -> dict[str, Any]:
        dropped = Counter(self.screen.dropped)
        dropped.update(e["drop"] for e in self.entries if not e["kept"])
        validated = sum(e["kept"] for e in self.entries)
        per_hour = round(validated * 3600 / self.cpu_seconds, 1) if self.cpu_seconds else None
        return {**head, "steps": self.screen.steps, "candidates": len(self.screen.candidates),
                "validated_candidates": len(self.entries), "validated": validated,
                "resumed": self.resumed, "dropped": dict(dropped.most_common()),
                "versions": {v: {"recipe": c.kind, "environment_setup_commit": c.fields.get("environment_setup_commit"),
                                 "candidates": sum(x.task.version == v for x in self.screen.candidates),
                                 "notes": c.notes}
                             for v, c in self.screen.versions.items()},
                "seconds": round(self.seconds, 1), "cpu_seconds": self.cpu_seconds,
                "validated_per_cpu_hour": per_hour}


def _entry(key: str, candidate: Candidate, verdict: Validation, model: ChatModel | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"key": key, "instance_id": candidate.task.instance_id, "commit": candidate.commit.sha,
                             "kept": verdict.kept, "reason": verdict.reason, "flaky": verdict.flaky,
                             "pass_to_fail": verdict.pass_to_fail[:20], "drop": None if verdict.kept else drop_key(verdict)}
    if verdict.kept:
        task = candidate.task.model_copy(update={"FAIL_TO_PASS": verdict.fail_to_pass,
                                                 "PASS_TO_PASS": verdict.pass_to_pass})
        if model is not None:
            statement = model_statement(model, repo=task.repo, message=candidate.message,
                                        fail_to_pass=task.FAIL_TO_PASS, patch=task.patch, test_patch=task.test_patch)
            row = dump_row(task)
            row.update(problem_statement=statement.text, statement_source=statement.source)
            task = Task.model_validate(row)
        entry["row"] = dump_row(task)
    return entry


def validate_item(item: tuple[str, Candidate], backend: Any, *, timeout: float, runs: int) -> Validation:
    """One item of a run, (ledger key, candidate): ``validate_instance`` of its task."""
    return validate_instance(item[1].task, backend, timeout=timeout, runs=runs)


def validate_candidates(screened: Screen, backend: Any, options: MineOptions, *, ledger: Ledger,
                        runner: Runner | None = None,
                        on_entry: Callable[[dict[str, Any]], None] | None = None) -> MineResult:
    """Validate ``screened``'s candidates on ``backend`` (a real backend), reusing the ledger."""
    started, cpu0 = time.monotonic(), machine_cpu_seconds()
    candidates = screened.candidates[: options.max_candidates] if options.max_candidates else screened.candidates
    keys = [verdict_key(c.task, options.timeout, options.runs) for c in candidates]
    resumed = sum(k in ledger.known for k in keys)
    kept = {"n": 0}

    def enough(done: list[dict[str, Any]]) -> bool:
        return options.max_instances is not None and kept["n"] >= options.max_instances

    def decided(entry: dict[str, Any]) -> None:
        kept["n"] += bool(entry["kept"])
        if on_entry:
            on_entry(entry)

    settled: dict[int, dict[str, Any]] = {}  # id(item) -> its entry, from finishing to its turn in order
    entries: list[dict[str, Any]] = []

    def finished(item: tuple[str, Candidate], verdict: Validation) -> None:
        try:
            entry = _entry(item[0], item[1], verdict, options.model)
        except Exception as exc:  # the statement's model failed: an error of the item
            failed(item, exc)
            return
        ledger.add(entry)
        settled[id(item)] = entry

    def failed(item: tuple[str, Candidate], exc: BaseException) -> None:
        """The item fails, the run goes on; not in the ledger: a rerun retries it."""
        key, candidate = item
        first = (getattr(exc, "message", None) or str(exc) or type(exc).__name__).splitlines()[0]
        settled[id(item)] = {"key": key, "instance_id": candidate.task.instance_id, "commit": candidate.commit.sha,
                             "kept": False, "reason": first, "flaky": [], "pass_to_fail": [],
                             "drop": f"error ({type(exc).__name__})"}

    def in_order(item: tuple[str, Candidate], value: Any) -> None:
        entries.append(value if isinstance(value, dict) else settled.pop(id(item)))  # a dict: the ledger's
        decided(entries[-1])

    map_ordered(list(zip(keys, candidates, strict=True)),
                partial(validate_item, timeout=options.timeout, runs=options.runs), runner=runner,
                workers=options.workers, hints=VALIDATION, group=lambda item: environment_group(item[1].task),
                share=backend, known=lambda item: ledger.known.get(item[0]), on_done=finished, catch=Exception,
                on_error=failed, enough=lambda _: enough(entries), on_result=in_order)
    cpu = machine_cpu_seconds()
    return MineResult(screen=screened, entries=entries, resumed=resumed, seconds=time.monotonic() - started,
                      cpu_seconds=round(cpu - cpu0, 1) if cpu is not None and cpu0 is not None else None)
