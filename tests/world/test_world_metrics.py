"""Fidelity measures: a test run's closing counts and the outcome two runs of a command agree on."""

from __future__ import annotations

import pytest

from sweworld.world.metrics import CHARS_AT_MOST, final_counts, same_outcome, similarity

PYTEST_END = "FAILED t.py::a - assert 0\n==== 1 failed, 3 passed, 1 warning in 0.21s ====\n"


def test_final_counts_reads_the_last_closing_line():
    assert final_counts(PYTEST_END) == {"failed": 1, "passed": 3}
    assert final_counts("3 passed in 1.0s\nthen\n2 errors in 0.1s\n\n") == {"error": 2}
    assert final_counts("no tests here\n") == final_counts("1 passed in 0.1s\n0 failing\n") == {}


@pytest.mark.parametrize(("predicted", "code", "agree"), [
    (PYTEST_END, 0, True),
    ("1 failed, 3 passed in 9.9s", 0, True),  # timings and the rest of the output do not matter
    ("2 errors, 5 passed in 1s", 0, True),  # whether tests failed, not how many
    ("4 passed in 0.2s", 0, False),  # `| tail` exits 0 either way: whether tests failed decides
    (PYTEST_END, 1, False),
])
def test_same_outcome_needs_the_exit_code_and_whether_tests_failed(predicted, code, agree):
    assert same_outcome(predicted, code, PYTEST_END, 0) is agree
    assert same_outcome("anything", 3, "not a test run", 3)


def test_auc_ece_and_the_majority_baseline_beside_the_verdicts():
    from sweworld.world.metrics import auc, ece, scored

    assert auc([(0.9, True), (0.8, True), (0.3, False), (0.1, False)]) == 1.0
    assert auc([(0.5, True), (0.5, False)]) == 0.5 and auc([(0.2, True)]) is None
    assert auc([(0.1, True), (0.9, False), (0.5, True), (0.4, False)]) == 0.25
    assert ece([(1.0, True), (0.0, False)]) == 0.0 and ece([]) is None
    assert abs(ece([(0.9, False), (0.9, True)]) - 0.4) < 1e-9  # one bin: mean .9 against half positive
    always_no = scored([(0.0, False)] * 8 + [(0.0, True)] * 2)
    assert always_no["accuracy"] == always_no["majority_accuracy"] == 0.8 and always_no["auc"] == 0.5
    assert always_no["recall"] == 0.0 and always_no["ece"] == 0.2


def test_similarity_of_long_logs_is_taken_over_lines():
    log = "".join(f"tests/test_x.py::test_{k} PASSED [{k % 100:3d}%]\n" for k in range(2000))
    other = log.replace("test_7 PASSED", "test_7 FAILED")
    assert len(log) > CHARS_AT_MOST and similarity(log, log) == 1.0
    assert similarity(log, other) == pytest.approx(1 - 1 / 2000, abs=1e-6)
    assert similarity("a\nb\n", "a\nc\n") == pytest.approx(2 / 3)  # short texts: characters ("a\n" of 3 each)
