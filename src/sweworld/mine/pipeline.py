"""``mine``: a repository's history -> candidates -> validated SWE-bench instances.

1. The first-parent chain of ``rev`` (or the commits named), screened by ``mine.rules`` and turned
   into candidate rows (``mine.candidates``).
2. Each candidate validated with the existing machinery (``harness.validate.validate_instance``,
   SWE-Gym's protocol): the tests the test patch touches, at the base with the test patch and with
   the fix, twice each, on the real backend; flaky tests dropped; kept when some test goes
   fail -> pass and none pass -> fail, with the rules of mined instances (``runs.validate``: the
   runs before the fix bounded by those after it, FAIL_TO_PASS only from tests that ran or that the
   test patch touches). Candidates run on a runner (threads here, or Ray) in history order, newest
   first, until ``max_instances`` are kept: once that many are kept among the first N (finished in
   any order), nothing past N is started; what was in flight when the in-order count was reached is
   counted in the summary (``validated_beyond_max``) and kept in the ledger, not in the output.
3. Each verdict goes to the ledger as it arrives (``mine.ledger``: a rerun validates only what is
   missing); a kept one gets its statement (the message, or a model's back-translation).

Every candidate that is not kept is counted by its cause in the summary (``drop_key``). CPU time is
the run's own (``synth.stats.own_cpu_seconds``; ``_cpu`` for Ray), not the machine's.
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
from sweworld.synth.stats import own_cpu_seconds
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
    setup_model: ChatModel | None = None
    """The set-up agent's model (``mine.setup_agent``): asked for a recipe where a release line's inferred
    one does not build or finds no tests; None: off."""
    setup_attempts: int = 3
    """Proposals the set-up agent may make for one release line."""
    exclude: list[str] = field(default_factory=list)
    """Datasets (shipped names, files, directories, hub names) whose instances are not mined again:
    a step whose base commit, fix commit or instance id one of their rows has is dropped
    (``mine.exclude``)."""


def drop_key(verdict: Validation) -> str:
    """The summary's name for why a validated candidate was dropped: its cause where the runs named
    one (grouped: "no FAIL_TO_PASS: tests do not import (...) with the fix", "environment does not
    build: <the log's error line>"), else a short form of its reason."""
    reason = verdict.reason
    if reason.startswith("no test goes fail -> pass"):
        return f"no FAIL_TO_PASS: {verdict.cause}" if verdict.cause else "no FAIL_TO_PASS"
    if verdict.cause:
        return verdict.cause
    if reason.startswith("the gold patch breaks"):
        return "fix breaks passing tests"
    if reason.startswith("infrastructure: the world cannot run"):  # harness.worldcheck: no shell, no runner...
        return "world cannot run"
    if reason.startswith("infrastructure:"):
        return "environment does not build" if "build" in reason.lower() or "install" in reason.lower() \
            else "infrastructure"
    for prefix, key in (("gold patch does not apply", "fix does not apply"),
                        ("test patch does not apply", "test patch does not apply"),
                        ("tests timed out before the fix", "tests time out before the fix"),
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
    """The run's own CPU time (``MineResult.cpu_measure`` says what it counts)."""
    beyond: list[dict[str, Any]] = field(default_factory=list)
    """Candidates validated past the point where ``max_instances`` were kept (in flight when it was
    reached): in the ledger for a later run, not in the output."""
    cpu_measure: str = ""

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
                "validated_beyond_max": len(self.beyond), "kept_beyond_max": sum(e["kept"] for e in self.beyond),
                "resumed": self.resumed, "dropped": dict(dropped.most_common()),
                "versions": {v: {"recipe": c.kind, "environment_setup_commit": c.fields.get("environment_setup_commit"),
                                 "candidates": sum(x.task.environment_setup_commit == c.fields.get(
                                     "environment_setup_commit") for x in self.screen.candidates),
                                 "notes": c.notes}
                             for v, c in self.screen.versions.items()},
                "seconds": round(self.seconds, 1), "cpu_seconds": self.cpu_seconds, "cpu_measure": self.cpu_measure,
                "validated_per_cpu_hour": per_hour}


def _entry(key: str, candidate: Candidate, verdict: Validation, model: ChatModel | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"key": key, "instance_id": candidate.task.instance_id, "commit": candidate.commit.sha,
                             "kept": verdict.kept, "reason": verdict.reason, "flaky": verdict.flaky,
                             "pass_to_fail": verdict.pass_to_fail[:20], "drop": None if verdict.kept else drop_key(verdict),
                             "cause": verdict.cause, "uncollected": verdict.uncollected[:20],
                             "uncollected_count": len(verdict.uncollected), "cpu_seconds": verdict.cpu_seconds}
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
    """One item of a run, (ledger key, candidate): ``validate_instance`` of its task (the rules of
    mined instances), with the CPU time its process and children spent meanwhile (the item's own
    where a process runs one item at a time: a Ray worker)."""
    cpu0 = own_cpu_seconds()
    verdict = validate_instance(item[1].task, backend, timeout=timeout, runs=runs, mined=True)
    verdict.cpu_seconds = round(own_cpu_seconds() - cpu0, 2)
    return verdict


class _Run:
    """The state of one ``validate_candidates``: what finished (in any order), what is decided (in
    order), what was kept where (so that the map stops submitting past the ``max_instances``-th kept)."""

    def __init__(self, items: list[tuple[str, Candidate]], options: MineOptions, ledger: Ledger,
                 on_entry: Callable[[dict[str, Any]], None] | None):
        self.options, self.ledger, self.on_entry = options, ledger, on_entry
        self.index = {id(item): i for i, item in enumerate(items)}
        self.kept_at = sorted(i for i, item in enumerate(items) if (ledger.known.get(item[0]) or {}).get("kept"))
        self.settled: dict[int, dict[str, Any]] = {}  # id(item) -> its entry, from finishing to its turn in order
        self.entries: list[dict[str, Any]] = []
        self.beyond: list[dict[str, Any]] = []
        self.run_here: list[dict[str, Any]] = []  # entries validated by this run (for Ray's CPU)
        self.resumed = 0

    def enough(self) -> bool:
        wanted = self.options.max_instances
        return wanted is not None and sum(e["kept"] for e in self.entries) >= wanted

    def needless(self, index: int) -> bool:
        """``max_instances`` kept before ``index`` already (finished out of order)."""
        wanted = self.options.max_instances
        return wanted is not None and sum(i < index for i in self.kept_at) >= wanted

    def finished(self, item: tuple[str, Candidate], verdict: Validation) -> None:
        try:
            entry = _entry(item[0], item[1], verdict, self.options.model)
        except Exception as exc:  # the statement's model failed: an error of the item
            self.failed(item, exc)
            return
        self.ledger.add(entry)
        self.run_here.append(entry)
        self.settled[id(item)] = entry
        if entry["kept"]:
            self.kept_at.append(self.index[id(item)])

    def failed(self, item: tuple[str, Candidate], exc: BaseException) -> None:
        """The item fails, the run goes on; not in the ledger: a rerun retries it."""
        key, candidate = item
        first = (getattr(exc, "message", None) or str(exc) or type(exc).__name__).splitlines()[0]
        self.settled[id(item)] = {"key": key, "instance_id": candidate.task.instance_id,
                                  "commit": candidate.commit.sha, "kept": False, "reason": first, "flaky": [],
                                  "pass_to_fail": [], "drop": f"error ({type(exc).__name__})"}

    def _entry_of(self, item: tuple[str, Candidate], value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else self.settled.pop(id(item))  # a dict: the ledger's

    def in_order(self, item: tuple[str, Candidate], value: Any) -> None:
        self.resumed += isinstance(value, dict)
        self.entries.append(self._entry_of(item, value))
        if self.on_entry:
            self.on_entry(self.entries[-1])

    def extra(self, item: tuple[str, Candidate], value: Any) -> None:
        self.beyond.append(self._entry_of(item, value))


def _cpu(runner: Runner | None, driver: float, run: _Run) -> tuple[float, str]:
    """The run's CPU seconds and what they count: here (threads), this process and its children; on
    another runner (Ray), the driver's plus each validation's as measured in its worker process."""
    if runner is None or getattr(runner, "name", "local") == "local":
        return round(driver, 1), "this process and its children (sandboxes, builds)"
    items = sum(e.get("cpu_seconds") or 0.0 for e in run.run_here)
    return round(driver + items, 1), (f"the driver and its children, plus each validation's worker process and "
                                      f"its children ({getattr(runner, 'name', 'runner')})")


def validate_candidates(screened: Screen, backend: Any, options: MineOptions, *, ledger: Ledger,
                        runner: Runner | None = None,
                        on_entry: Callable[[dict[str, Any]], None] | None = None) -> MineResult:
    """Validate ``screened``'s candidates on ``backend`` (a real backend), reusing the ledger; stop
    once ``max_instances`` are kept, submitting nothing that cannot be among the first kept."""
    started, cpu0 = time.monotonic(), own_cpu_seconds()
    candidates = screened.candidates[: options.max_candidates] if options.max_candidates else screened.candidates
    items = list(zip([verdict_key(c.task, options.timeout, options.runs) for c in candidates], candidates,
                     strict=True))
    run = _Run(items, options, ledger, on_entry)
    map_ordered(items, partial(validate_item, timeout=options.timeout, runs=options.runs), runner=runner,
                workers=options.workers, hints=VALIDATION, group=lambda item: environment_group(item[1].task),
                share=backend, known=lambda item: ledger.known.get(item[0]), on_done=run.finished, catch=Exception,
                on_error=run.failed, enough=lambda _: run.enough(), on_result=run.in_order, on_extra=run.extra,
                needless=run.needless)
    cpu, measure = _cpu(runner, own_cpu_seconds() - cpu0, run)
    return MineResult(screen=screened, entries=run.entries, resumed=run.resumed, seconds=time.monotonic() - started, cpu_seconds=cpu, beyond=run.beyond,
                      cpu_measure=measure)
