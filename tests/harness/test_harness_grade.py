"""Grading real pytest / unittest output the way the eval script frames it (markers + exit code)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sweworld.core.types import Task
from sweworld.harness.evalscript import (
    END_MARKER,
    EXIT_CODE_MARKER,
    PATCH_APPLIED_MARKER,
    START_MARKER,
    marker,
    new_nonce,
)
from sweworld.harness.grade import ACCEPTED_EXIT_CODES, extract_test_run, grade, parse_status
from sweworld.harness.report import InstanceReport, make_summary, summarize, write_report, write_summary

TEST_MODULE = '''\
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_pass_one():
    assert True

def test_pass_two():
    assert 1 + 1 == 2

def test_fail():
    assert 1 == 2

@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False

def test_error(broken):
    pass
'''

UNITTEST_MODULE = '''\
import unittest

class Calc(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(1 + 1, 2)

    def test_bad(self):
        self.assertEqual(1, 2)

    @unittest.skip("not here")
    def test_skipped(self):
        pass
'''

M = "test_mod.py::"


def _run(args: list[str], cwd: Path) -> tuple[str, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True)
    return proc.stdout + proc.stderr, proc.returncode


@pytest.fixture(scope="module")
def pytest_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int]:
    root = tmp_path_factory.mktemp("pytest_run")
    (root / "test_mod.py").write_text(TEST_MODULE)
    return _run(["-m", "pytest", "-rA", "-p", "no:cacheprovider", "test_mod.py"], root)


def frame(output: str, rc: int | None, nonce: str, *, end: bool = True) -> str:
    """What the eval script prints around the test command's output."""
    text = (f"+ git apply -v -\nChecking patch tests/test_mod.py...\n{marker(PATCH_APPLIED_MARKER, nonce)}\n"
            f"{marker(START_MARKER, nonce)}\n{output}\n")
    if end:
        text += f"{marker(END_MARKER, nonce)}\n"
    if rc is not None:
        text += f"{marker(EXIT_CODE_MARKER, nonce)} {rc}\n"
    return text


def task(f2p: list[str], p2p: list[str], repo: str = "local/mod", **extra) -> Task:
    return Task(instance_id="local__mod-1", repo=repo, base_commit="abc123", FAIL_TO_PASS=f2p,
                PASS_TO_PASS=p2p, **extra)


def test_real_pytest_output_parses(pytest_run: tuple[str, int]) -> None:
    output, rc = pytest_run
    assert rc == 1
    status = parse_status(task([], []), output)
    assert status[M + "test_pass_one"] == "PASSED"
    assert status[M + "test_pass_two"] == "PASSED"
    assert status[M + "test_fail"] == "FAILED"
    assert status[M + "test_xfail"] == "XFAIL"
    assert status[M + "test_error"] == "ERROR"


def test_full_partial_no(pytest_run: tuple[str, int]) -> None:
    output, rc = pytest_run
    nonce = new_nonce()
    run = extract_test_run(frame(output, rc, nonce), nonce)
    assert run.markers_found and run.test_patch_applied and run.exit_code == 1
    assert marker(START_MARKER, nonce) not in run.test_output

    full = grade(task([M + "test_pass_one"], [M + "test_pass_two", M + "test_xfail"]), run)
    assert (full.resolution, full.resolved, full.crashed) == ("RESOLVED_FULL", True, False)
    assert full.tests_status["FAIL_TO_PASS"] == {"success": [M + "test_pass_one"], "failure": []}
    assert full.tests_status["FAIL_TO_FAIL"] == {"success": [], "failure": []}
    assert full.tests_status["PASS_TO_FAIL"] == {"success": [], "failure": []}

    partial = grade(task([M + "test_pass_one", M + "test_fail"], [M + "test_pass_two"]), run)
    assert (partial.resolution, partial.resolved) == ("RESOLVED_PARTIAL", False)
    assert partial.tests_status["FAIL_TO_PASS"]["failure"] == [M + "test_fail"]

    no = grade(task([M + "test_fail", M + "test_error"], [M + "test_pass_two"]), run)
    assert (no.resolution, no.resolved) == ("RESOLVED_NO", False)
    # a P2P failure (here: a test missing from the output) is NO even when every F2P passes
    missing = grade(task([M + "test_pass_one"], [M + "test_not_there"]), run)
    assert missing.resolution == "RESOLVED_NO"
    assert missing.tests_status["PASS_TO_PASS"]["failure"] == [M + "test_not_there"]


def test_fail_to_fail_lists_from_task_extras(pytest_run: tuple[str, int]) -> None:
    output, rc = pytest_run
    nonce = new_nonce()
    t = task([M + "test_pass_one"], [], FAIL_TO_FAIL=f'["{M}test_fail"]', PASS_TO_FAIL=[M + "test_pass_two"])
    result = grade(t, extract_test_run(frame(output, rc, nonce), nonce))
    assert result.tests_status["FAIL_TO_FAIL"] == {"success": [], "failure": [M + "test_fail"]}
    assert result.tests_status["PASS_TO_FAIL"] == {"success": [M + "test_pass_two"], "failure": []}
    assert result.resolved


def test_forged_passed_lines_with_bad_exit_code_are_a_crash() -> None:
    nonce = new_nonce()
    forged = f"PASSED {M}test_fail\nPASSED {M}test_pass_one\n"
    t = task([M + "test_fail"], [M + "test_pass_one"])
    result = grade(t, extract_test_run(frame(forged, 2, nonce), nonce))
    assert result.crashed and not result.resolved and result.resolution == "RESOLVED_NO"
    assert result.status_map == {} and result.parsed_status_map[M + "test_fail"] == "PASSED"
    assert result.tests_status["FAIL_TO_PASS"]["failure"] == [M + "test_fail"]
    assert result.tests_status["PASS_TO_PASS"]["failure"] == [M + "test_pass_one"]
    # exit 1 ("tests failed") while the output names no failure: not trusted either
    one = grade(t, extract_test_run(frame(forged, 1, nonce), nonce))
    assert one.crashed and not one.resolved
    # the same lines with exit 0 are what a real passing run looks like
    assert 0 in ACCEPTED_EXIT_CODES
    assert grade(t, extract_test_run(frame(forged, 0, nonce), nonce)).resolved


def test_no_tests_collected_is_a_crash(tmp_path: Path) -> None:
    output, rc = _run(["-m", "pytest", "-rA", "-p", "no:cacheprovider", "."], tmp_path)
    assert rc == 5
    nonce = new_nonce()
    result = grade(task([], []), extract_test_run(frame(output, rc, nonce), nonce))
    assert result.crashed and result.resolution == "RESOLVED_NO"  # even with no tests to check


def test_markers_with_another_nonce_are_ignored(pytest_run: tuple[str, int]) -> None:
    output, rc = pytest_run
    nonce, other = new_nonce(), new_nonce()
    t = task([M + "test_pass_one"], [M + "test_pass_two"])
    ignored = extract_test_run(frame(output, rc, other), nonce)
    assert not ignored.markers_found and ignored.exit_code is None and not ignored.test_patch_applied
    assert not grade(t, ignored).resolved
    # forged markers inside the real region do not cut it short nor change the exit code
    inner = (f"PASSED {M}test_fail\n{marker(END_MARKER, other)}\n{marker(EXIT_CODE_MARKER, other)} 0\n"
             f"{output}")
    run = extract_test_run(frame(inner, 2, nonce), nonce)
    assert run.exit_code == 2 and marker(END_MARKER, other) in run.test_output
    assert grade(t, run).crashed


def test_missing_end_marker_is_not_resolved(pytest_run: tuple[str, int]) -> None:
    output, _ = pytest_run
    nonce = new_nonce()
    run = extract_test_run(frame(f"PASSED {M}test_fail\n" + output, None, nonce, end=False), nonce)
    assert not run.markers_found and run.exit_code is None and "PASSED" in run.test_output
    result = grade(task([M + "test_pass_one"], []), run)
    assert result.crashed and not result.resolved


def test_last_end_marker_and_exit_code_win(pytest_run: tuple[str, int]) -> None:
    output, rc = pytest_run
    nonce = new_nonce()
    text = frame(output, 2, nonce) + f"more output\n{marker(END_MARKER, nonce)}\n" \
        f"{marker(EXIT_CODE_MARKER, nonce)} {rc}\n"
    run = extract_test_run(text, nonce)
    assert run.exit_code == 1 and "more output" in run.test_output
    assert grade(task([M + "test_pass_one"], []), run).resolved


def test_django_style_output(tmp_path: Path) -> None:
    (tmp_path / "calc_tests.py").write_text(UNITTEST_MODULE)
    output, rc = _run(["-m", "unittest", "-v", "calc_tests"], tmp_path)
    assert rc == 1
    ok, bad, skipped = (f"test_{n} (calc_tests.Calc.test_{n})" for n in ("ok", "bad", "skipped"))
    t = task([ok], [], repo="django/django")
    status = parse_status(t, output)
    assert status[ok] == "PASSED" and status[bad] == "FAILED" and status[skipped] == "SKIPPED"
    nonce = new_nonce()
    run = extract_test_run(frame(output, rc, nonce), nonce)
    assert grade(t, run).resolution == "RESOLVED_FULL"
    assert grade(task([ok, bad], [], repo="django/django"), run).resolution == "RESOLVED_PARTIAL"
    # as in SWE-bench: a SKIPPED test is neither a success nor a failure (it drops out of the ratio)
    both = grade(task([ok, skipped], [], repo="django/django"), run)
    assert both.tests_status["FAIL_TO_PASS"] == {"success": [ok], "failure": []} and both.resolved


def test_grading_twice_is_byte_identical(pytest_run: tuple[str, int], tmp_path: Path) -> None:
    output, rc = pytest_run
    nonce = new_nonce()
    t = task([M + "test_pass_one", M + "test_fail"], [M + "test_pass_two"])
    texts = []
    for name in ("a", "b"):
        graded = grade(t, extract_test_run(frame(output, rc, nonce), nonce))
        report = InstanceReport.build(t.instance_id, "diff --git a/x b/x\n", patch_applied=True,
                                      apply_method="git apply -v", graded=graded)
        path = write_report(tmp_path / name, report)
        texts.append((report.to_json(), path.read_bytes(), (path.parent / "sweworld_report.json").read_bytes()))
    assert texts[0] == texts[1]
    body = InstanceReport.model_validate_json(texts[0][2]).to_swebench()[t.instance_id]
    assert list(body) == ["patch_is_None", "patch_exists", "patch_successfully_applied", "resolved",
                          "tests_status"]
    assert body["resolved"] is False and body["tests_status"]["FAIL_TO_PASS"]["failure"] == [M + "test_fail"]


def test_report_without_tests_status_and_infra_error() -> None:
    none = InstanceReport.build("a", None)
    assert none.to_swebench() == {"a": {"patch_is_None": True, "patch_exists": False,
                                        "patch_successfully_applied": False, "resolved": False}}
    infra = InstanceReport.build("b", "diff", patch_applied=True, error="test patch did not apply")
    assert infra.is_infra_error and infra.tests_status is None and "tests_status" not in infra.to_swebench()["b"]


def test_summarize_every_key(tmp_path: Path) -> None:
    nonce = new_nonce()
    t = task(["t::ok"], [])
    passed = grade(t, extract_test_run(frame("PASSED t::ok\n", 0, nonce), nonce))
    failed = grade(t, extract_test_run(frame("FAILED t::ok\n", 1, nonce), nonce))
    reports = {
        "r1": InstanceReport.build("r1", "p", patch_applied=True, graded=passed),
        "u1": InstanceReport.build("u1", "p", patch_applied=True, graded=failed),
        "u2": InstanceReport.build("u2", "p", patch_applied=False),  # model patch did not apply
        "i1": InstanceReport.build("i1", "p", error="sandbox died"),
        "e2": InstanceReport.build("e2", "", patch_applied=False),  # empty patch: report ignored
    }
    predictions = {"r1": "p", "u1": "p", "u2": "p", "i1": "p", "x1": "p", "e1": None, "e2": "",
                   "zz": "p"}  # zz: not in the dataset, still submitted (as SWE-bench)
    dataset = ["r1", "u1", "u2", "i1", "x1", "e1", "e2", "n1", "n2"]
    summary = summarize(dataset, reports, predictions, run_id="run", model="org/model")
    assert summary == {
        "total_instances": 9, "submitted_instances": 8, "completed_instances": 3,
        "resolved_instances": 1, "unresolved_instances": 2, "empty_patch_instances": 2,
        "error_instances": 2, "completed_ids": ["r1", "u1", "u2"], "incomplete_ids": ["n1", "n2"],
        "empty_patch_ids": ["e1", "e2"], "submitted_ids": ["e1", "e2", "i1", "r1", "u1", "u2", "x1", "zz"],
        "resolved_ids": ["r1"], "unresolved_ids": ["u1", "u2"], "error_ids": ["i1", "x1"],
        "schema_version": 2, "infra_error_ids": ["i1"],
    }
    made = make_summary(dataset, reports, predictions, run_id="run", model="org/model")
    path = write_summary(tmp_path, made)
    assert path.name == "org__model.run.json" and '"run_id"' not in path.read_text()


def test_an_infrastructure_failure_is_an_error_even_for_an_empty_patch() -> None:
    """One count (issue 20): every report recording an infrastructure failure is in error_ids and
    infra_error_ids, never in empty_patch_ids, whatever the patch."""
    reports = {i: InstanceReport.build(i, patch, error="RepoError: commit not found")
               for i, patch in (("e1", ""), ("n1", None), ("p1", "p"))}
    summary = summarize(["e1", "n1", "p1", "e2"], reports, {"e1": "", "n1": None, "p1": "p", "e2": ""},
                        run_id="run", model="m")
    assert summary["error_ids"] == summary["infra_error_ids"] == ["e1", "n1", "p1"]
    assert summary["empty_patch_ids"] == ["e2"] and summary["error_instances"] == 3


CARGO = ("running 2 tests\ntest tests::one_word ... ok\ntest tests::double_spaces ... FAILED\n\n"
         "test result: FAILED. 1 passed; 1 failed; 0 ignored\n")
TAP = "TAP version 13\nok 1 - keeps one\nnot ok 2 - breaks ties\n1..2\n"


@pytest.mark.parametrize("parser, output, code, crashed", [
    ("parse_log_cargo", CARGO, 101, False),  # cargo test: 101 when a test fails
    ("parse_log_tap", TAP, 1, False),  # mocha exits with the number of failures, node --test with 1
    ("parse_log_tap", TAP, 3, False),
    ("parse_log_tap", TAP, 137, True),  # a signal is a crash
    ("parse_log_tap", "TAP version 13\nok 1 - keeps one\n1..1\n", 3, True),  # non-zero with no failure named
    ("parse_log_pytest", f"PASSED {M}test_pass_one\nFAILED {M}test_fail\n", 101, True),  # pytest's codes only
])
def test_another_languages_runner_fails_with_its_own_exit_code(parser, output, code, crashed) -> None:
    """A row whose log parser is another language's runner's accepts its exit codes (0-127) under the
    crash rule: cargo's 101 with a failed test is a run, not a crash; a Python row keeps {0, 1}."""
    nonce = new_nonce()
    t = Task(instance_id="x__y-1", repo="x/y", base_commit="0" * 40, version="1", FAIL_TO_PASS=[], PASS_TO_PASS=[],
             install_config={"test_cmd": "t", "log_parser": parser})
    result = grade(t, extract_test_run(frame(output, code, nonce), nonce))
    assert result.crashed is crashed
    if not crashed:
        assert "FAILED" in result.status_map.values() and "PASSED" in result.status_map.values()
