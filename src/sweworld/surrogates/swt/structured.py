"""Part (b) of the embedded SWT: a test command's output, written from per-test statuses.

For each test the command runs (``selection``): failing when the workspace does not hold it
(``absent``: a test the test patch adds, which a script names; a test command does not select it),
else the status recorded for this very workspace state
(0.97; a diff making the gold patch's change counts as recorded: its tests pass), else, for a test
of an evaluated test file that the lists leave out and no record names, not passing, whatever the
diff touches (``unlisted``: failing, or skipped or xfailed as its text marks it; 0.75), else, when
the diff does not touch what the test runs (``affected``), its baseline: the status recorded at the
base commit (0.95), else FAIL_TO_PASS failing and PASS_TO_PASS passing (0.9; a FAIL_TO_PASS test the
test patch rewrites counts as passing: its old version runs, see ``absent.rewritten``; so does one
of a file whose whole run failed before the fix, ``absent.whole_file_failed``), else passing
(a test known only from its file's text: 0.7); when the diff does touch it, the per-test
predictor's status and confidence. The output is rendered in the runner's format
(``formats``: pytest, unittest, Django, sympy, under tox or nox) and piped through the command's
filters (``shellfilters``).

Confidence: the least confident test, times 0.7 for options the parser did not understand, 0.6
for a filter it could not apply, 0.9 when a failing test has no recorded failure text, 0.9 under
tox or nox (``WRAPPED``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from statistics import median
from typing import TYPE_CHECKING, Any

from sweworld.covmap import CoverageMap
from sweworld.surrogates.swt.absent import absent, rewritten, whole_file_failed
from sweworld.surrogates.swt.affected import affected_tests, change_signature, without_scratch
from sweworld.surrogates.swt.facts import InstanceFacts, RepoFacts, diff_digest
from sweworld.surrogates.swt.formats import render
from sweworld.surrogates.swt.fulltext import context_texts, evaluated_below
from sweworld.surrogates.swt.predictor import TestOutcomePredictor
from sweworld.surrogates.swt.selection import select
from sweworld.surrogates.swt.shellfilters import apply_filters
from sweworld.surrogates.swt.testcmd import TestRun
from sweworld.surrogates.swt.unlisted import unlisted
from sweworld.world.context import SWTContext
from sweworld.world.parse import SWTOutput

if TYPE_CHECKING:
    from sweworld.surrogates.swr.patched import FileSource

RECORDED_HERE, RECORDED_BASE, LISTED, UNLISTED, STATIC, LEFT_OUT = 0.97, 0.95, 0.9, 0.8, 0.7, 0.75
WRAPPED = 0.9
"""tox and nox: the environment's commands are taken to be ``pytest {posargs}``."""


@dataclass
class SWTPrediction:
    """One embedded SWT prediction: the output, how sure it is, and which path produced it."""

    output: SWTOutput
    confidence: float
    source: str  # replay | tests | neighbour | none
    detail: dict[str, Any] = field(default_factory=dict)


def coverage_of(task: dict[str, Any]) -> CoverageMap | None:
    """The per-test coverage a task row carries (``coverage``: a CoverageMap as JSON text or dict)."""
    raw = task.get("coverage")
    if not raw:
        return None
    try:
        return CoverageMap.from_json(raw if isinstance(raw, str) else json.dumps(raw))
    except (ValueError, KeyError, TypeError):
        return None


def statuses(tests: list[str], static: set[str], context: SWTContext, facts: InstanceFacts, repo: RepoFacts,
             predictor: TestOutcomePredictor, texts: dict[str, str]) -> list[tuple[str, str, float, str]]:
    """(test, status, confidence, why) for each test, as the module docstring says."""
    task = facts.task
    here = facts.states.get(diff_digest(context.diff), {})
    base = facts.states.get("", {})
    failing, passing = set(task.get("FAIL_TO_PASS") or []), set(task.get("PASS_TO_PASS") or [])
    if task.get("patch") and change_signature(without_scratch(context.diff)) == change_signature(task["patch"]):
        here = {**dict.fromkeys(failing | passing, "PASSED"), **here}  # the validated fix
    gone = absent(tests, task, context.diff, texts)  # a script naming a test the workspace does not hold
    old = (rewritten([t for t in tests if t in failing], task, texts) | whole_file_failed(tests, task)) - gone
    failing, passing = failing - old, passing | old
    left_out = unlisted([t for t in tests if t not in here and t not in base], task, context.diff, texts)
    touched = affected_tests([t for t in tests if t not in here and t not in gone and t not in left_out], context.diff,
                             graph=repo.graph, coverage=coverage_of(task), texts=texts)
    as_here = facts.as_task()
    if old:  # the lists as they hold in this workspace
        as_here = as_here.model_copy(update={"FAIL_TO_PASS": sorted(failing), "PASS_TO_PASS": sorted(passing)})
    predicted = predictor.predict(as_here, context.diff, [t for t in tests if t in touched]) if touched else {}
    out = []
    for test in tests:
        if test in gone:
            out.append((test, "FAILED", LISTED, "absent"))
        elif test in here:
            out.append((test, here[test], RECORDED_HERE, "recorded"))
        elif test in left_out:
            out.append((test, left_out[test], LEFT_OUT, "unlisted"))
        elif test in predicted:
            out.append((test, *predicted[test], "predicted"))
        elif test in base:
            out.append((test, base[test], RECORDED_BASE, "baseline"))
        elif test in failing or test in passing:
            out.append((test, "FAILED" if test in failing else "PASSED", LISTED, "listed"))
        else:
            out.append((test, "PASSED", STATIC if test in static else UNLISTED, "assumed"))
    return out


def _named_as(facts: InstanceFacts, tests: list[str]) -> InstanceFacts:
    """``facts`` with the task's bare test names (sympy's in SWE-bench) as the selected ``path::name``."""
    ids = {t.rsplit("::", 1)[-1]: t for t in tests if "::" in t}
    lists = {k: [ids.get(t, t) for t in facts.task.get(k) or []] for k in ("FAIL_TO_PASS", "PASS_TO_PASS")}
    return facts.model_copy(update={"task": {**facts.task, **lists}})


def predict_tests(run: TestRun, context: SWTContext, facts: InstanceFacts, repo: RepoFacts,
                  predictor: TestOutcomePredictor, read: FileSource | None = None) -> SWTPrediction:
    """The output of the test command ``run`` in ``context`` (see the module docstring; ``read``:
    the task's base files, to make a test file the context cuts whole, ``fulltext``)."""
    texts = context_texts(context, read, also=evaluated_below(facts.task, run.targets) if run.runner == "pytest" else ())
    chosen = select(run, facts.known_tests(), texts, absent(facts.known_tests(), facts.task, context.diff, texts))
    facts = _named_as(facts, chosen.tests) if run.runner == "sympy" else facts
    rows = [] if chosen.missing or chosen.not_found else statuses(chosen.tests, chosen.static, context, facts, repo, predictor, texts)
    outcomes = [(t, s) for t, s, _, _ in rows]
    duration = median(facts.durations) if facts.durations else 0.01 * max(len(outcomes), 1)
    confidence = min((c for _, _, c, _ in rows), default=0.9 if chosen.missing or chosen.not_found else 0.6)
    failed = [t for t, s in outcomes if s in ("FAILED", "ERROR")]
    got = render(run, outcomes, facts, repo, texts=texts, workdir=context.workdir, duration=duration,
                 chosen=chosen)
    stdout, stderr, code, unrecorded = got.stdout, got.stderr, got.exit_code, got.unrecorded
    if run.filters:
        text = stdout + stderr if run.merged else stdout
        stdout, code, understood = apply_filters(text, run.filters, code)
        stderr = "" if run.merged else stderr
        confidence *= 1.0 if understood else 0.6
    elif run.merged:
        stdout, stderr = stdout + stderr, ""
    confidence *= (1.0 if run.exact else 0.7) * (0.9 if unrecorded and run.tb != "no" else 1.0)
    confidence *= 1.0 if run.wrapper is None else WRAPPED
    detail = {"tests": len(outcomes), "failed": len(failed), "missing": chosen.missing, "not_found": chosen.not_found,
              "why": {why: sum(r[3] == why for r in rows) for why in {r[3] for r in rows}}}
    return SWTPrediction(SWTOutput(stdout=stdout, stderr=stderr, exit_code=code), round(confidence, 4), "tests", detail)
