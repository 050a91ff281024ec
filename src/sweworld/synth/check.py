"""Check one candidate bug: screen it on the tests that cover it, validate it on the whole suite.

Verdicts (``Outcome.status``):

- ``validated``: at least one stable test goes pass -> fail with the bug, twice (FAIL_TO_PASS of
  the instance); the other stable tests pass (PASS_TO_PASS).
- ``uncovered``: no stable test executes the mutated function (selection mode: never run).
- ``passes``: every covering test (screen) or every test of the suite still passes.
- ``timeout``: a run hung past the per-candidate timeout (an infinite loop...).
- ``broken``: the run crashed (collection error, interpreter error, baseline tests missing).
- ``flaky``: the failing tests passed when run again with the bug (the screen is the other run;
  failing tests the screen did not run are run again).
- ``error``: the infrastructure failed (sandbox, fork server); not cached, checked again next run.

Candidates of one worker share an episode (``runs.CandidateRun``: the tree is restored after
each). ``naive=True`` skips test selection: every candidate goes straight to the whole suite (the
baseline that P6 compares against).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel, Field

from sweworld.core.errors import SWEWorldError
from sweworld.synth import Mutation
from sweworld.synth.release import Release
from sweworld.synth.runs import PASS, CandidateRun, SuiteRun

STATUSES = ("validated", "uncovered", "passes", "timeout", "broken", "flaky", "error")

StatementWriter = Callable[[Release, Mutation, list[str], str], tuple[str, str]]
"""(release, mutation, FAIL_TO_PASS, pytest output of the first failing tests with short tracebacks)
-> (problem statement, source)."""


class Outcome(BaseModel):
    """What happened to one candidate."""

    index: int = Field(description="Position in the run's candidate order.")
    key: str = Field(description="Mutation key (file:line:kind:hash).")
    method: str
    path: str
    status: str
    reason: str = ""
    covering: int = Field(default=0, description="Stable tests that execute the mutated function(s).")
    screened: bool = Field(default=False, description="Screening on the covering tests ran.")
    suite_run: bool = Field(default=False, description="The whole suite ran.")
    fail_to_pass: list[str] = Field(default_factory=list)
    pass_to_pass: list[str] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)
    problem_statement: str = ""
    statement_source: str = ""
    seconds: float = 0.0


SCREEN_FACTOR = 2.0
SCREEN_SLACK = 2.0
"""A screen may take 2x what its tests took in the coverage run (already slowed by coverage) plus
2 s for the start and the collection: a hang is cut long before the whole suite's timeout."""


STATEMENT_TESTS = 5
"""Failing tests whose tracebacks a problem statement is written from (the others are listed)."""
BUDGET_FACTOR = 10.0
BUDGET_MIN = 1.5
"""Each test may take 10x its coverage-run time, at least 1.5 s, before the run counts as hung."""


def test_budgets(release: Release) -> dict[str, float]:
    """Per-test budgets (seconds) of the release's stable tests, from the coverage run's durations."""
    durations = release.coverage.durations
    return {t: round(max(BUDGET_MIN, BUDGET_FACTOR * durations.get(t, 0.0)), 3) for t in release.baseline}


test_budgets.__test__ = False  # type: ignore[attr-defined]  # not a pytest test when imported


def screen_timeout(release: Release, tests: list[str], timeout: float) -> float:
    return min(timeout, SCREEN_FACTOR * release.coverage.seconds(tests) + SCREEN_SLACK)


def covering_tests(release: Release, mutation: Mutation) -> list[str]:
    lines = {mutation.original.count("\n", 0, start) + 1 for start, _, _ in mutation.edits}
    tests = release.coverage.tests_for(mutation.path, mutation.original, mutation.function.split(","), lines)
    return [t for t in tests if t in release.baseline]


def _validate(run: CandidateRun, release: Release, outcome: Outcome, screened: dict[str, str]) -> SuiteRun | None:
    suite = run.suite()
    outcome.suite_run = True
    if suite.timed_out:
        outcome.status, outcome.reason = "timeout", "the suite timed out"
        return None
    if suite.crashed:
        outcome.status, outcome.reason = "broken", f"the suite crashed (exit code {suite.exit_code})"
        return None
    missing = release.baseline - set(suite.statuses)
    if missing:
        outcome.status, outcome.reason = "broken", f"{len(missing)} tests did not run (collection errors)"
        return None
    failing = sorted(t for t in release.baseline if not suite.passed(t))
    if not failing:
        outcome.status, outcome.reason = "passes", "every test passes with the bug"
        return None
    again = {t: screened[t] for t in failing if t in screened}  # failed in the screen: the second run
    unseen = [t for t in failing if t not in screened]
    if unseen:
        verdict, statuses = run.statuses(unseen)
        if verdict in ("timeout", "broken"):
            outcome.status, outcome.reason = "broken", "the rerun of the failing tests crashed or hung"
            return None
        again.update(statuses)
    outcome.flaky = [t for t in failing if again.get(t) in PASS]
    outcome.fail_to_pass = [t for t in failing if again.get(t) not in PASS]
    outcome.pass_to_pass = sorted(release.baseline - set(failing))
    if not outcome.fail_to_pass:
        outcome.status, outcome.reason = "flaky", "the failing tests passed when run again"
        return None
    outcome.status = "validated"
    return suite


def check_candidate(release: Release, mutation: Mutation, index: int, *, timeout: float, naive: bool = False,
                    statement: StatementWriter | None = None, run: CandidateRun | None = None) -> Outcome:
    """Screen (unless ``naive``) and validate one candidate in ``run`` (an episode of the release,
    restored afterwards; a fresh one when None). The candidate's own failures are verdicts; only
    infrastructure errors raise."""
    started = time.monotonic()
    outcome = Outcome(index=index, key=mutation.key, method=mutation.kind, path=mutation.path, status="passes")
    tests = covering_tests(release, mutation)
    outcome.covering = len(tests)
    if not naive and not tests:
        outcome.status, outcome.reason = "uncovered", "no stable test executes the mutated function"
        return outcome
    own = run is None
    run = run or CandidateRun(release.task, release.layer, timeout=timeout, label=f"{release.slug}-{index}")
    try:
        run.apply({mutation.path: mutation.mutated})
        _check(run, release, mutation, outcome, tests, naive, statement)
    finally:
        if own:
            run.close()
        else:
            run.restore()
    outcome.seconds = round(time.monotonic() - started, 3)
    return outcome


def _check(run: CandidateRun, release: Release, mutation: Mutation, outcome: Outcome, tests: list[str],
           naive: bool, statement: StatementWriter | None) -> None:
    screened: dict[str, str] = {}
    if not naive:
        outcome.screened = True
        verdict, screened = run.statuses(tests, screen_timeout(release, tests, run.timeout))
        if verdict != "fails":
            outcome.status = verdict
            outcome.reason = {"passes": "every covering test passes", "timeout": "screening timed out",
                              "broken": "screening crashed"}[verdict]
            return
    suite = _validate(run, release, outcome, screened)
    if suite is not None and statement is not None:
        try:
            output = run.details(outcome.fail_to_pass[:STATEMENT_TESTS])
            outcome.problem_statement, outcome.statement_source = statement(
                release, mutation, outcome.fail_to_pass, output)
        except SWEWorldError as exc:
            outcome.status, outcome.reason = "broken", f"no problem statement: {exc.message}"
