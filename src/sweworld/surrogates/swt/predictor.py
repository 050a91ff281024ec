"""The per-test outcome predictor the embedded SWT asks when a diff touches what a test runs.

``TestOutcomePredictor.predict(task, diff, test_ids) -> {test_id: (status, confidence)}`` with a
status of ``sweworld.surrogates.swt.pytestlog.STATUSES``. The embedded SWR provides the real one;
``GoldTouchPredictor`` is the default: a FAIL_TO_PASS test fails unless the diff touches the gold
patch's changed regions (its hunks, in the same files), every other test passes; confidence 0.5.
``load_predictor("pkg.module:factory", model)`` builds one named in a configuration.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from sweworld.core.registry import load
from sweworld.core.types import Task
from sweworld.surrogates.swt.affected import change_signature, changed_lines, file_sections
from sweworld.surrogates.swt.testsource import is_test_file

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? ", re.MULTILINE)


@runtime_checkable
class TestOutcomePredictor(Protocol):
    """Predicts the status of tests on a task's base commit with ``diff`` applied."""

    def predict(self, task: Task, diff: str, test_ids: Sequence[str]) -> dict[str, tuple[str, float]]: ...


TestOutcomePredictor.__test__ = False  # type: ignore[attr-defined]


def gold_regions(patch: str) -> dict[str, list[tuple[int, int]]]:
    """Path -> old-side line spans of the patch's hunks (context lines included)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for path, block in file_sections(patch):
        if path:
            out[path] = [(int(m.group(1)), int(m.group(1)) + max(int(m.group(2) or 1), 1) - 1)
                         for m in _HUNK.finditer(block)]
    return out


def touches(diff: str, patch: str) -> bool:
    """Whether ``diff`` changes a line inside one of ``patch``'s hunks (or a file it creates)."""
    regions = gold_regions(patch)
    for path, lines in changed_lines(diff).items():
        spans = regions.get(path)
        if spans is None:
            continue
        if not lines or any(a <= n <= b for n in lines for a, b in spans):
            return True
    return False


def state_class(diff: str, patch: str) -> str:
    """How a workspace relates to the fix: ``base`` (no existing non-test file changed), ``gold``
    (the gold patch's change exactly), ``near`` (a change inside its hunks), ``away`` (elsewhere)."""
    existing = {p for p, lines in changed_lines(diff).items() if lines and not is_test_file(p)}
    mine = {p: lines for p, lines in change_signature(diff).items() if p in existing}
    if not mine:
        return "base"
    if patch and mine == change_signature(patch):
        return "gold"
    return "near" if patch and touches(diff, patch) else "away"


class GoldTouchPredictor:
    """The default predictor (see the module docstring)."""

    confidence = 0.5

    def predict(self, task: Task, diff: str, test_ids: Sequence[str]) -> dict[str, tuple[str, float]]:
        fixed = touches(diff, task.patch)
        failing = set(task.FAIL_TO_PASS)
        return {t: ("FAILED" if t in failing and not fixed else "PASSED", self.confidence) for t in test_ids}


def load_predictor(spec: str | None, model: str | None = None) -> TestOutcomePredictor:
    """The predictor ``"module:factory"`` names (called with ``model``, a model file, when given),
    else the default."""
    if not spec:
        return GoldTouchPredictor()
    factory = load(spec)
    return factory(model) if model else factory()
