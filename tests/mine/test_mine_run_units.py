"""The mining run's diagnostics and accounting, on real inputs: real pytest runs (causes of no
FAIL_TO_PASS), real git diffs (the tests a test patch touches), a real failed pip install (a build's
error line), real child processes (the run's own CPU), the real parallel map (stopping)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from swebench.harness.log_parsers.python import parse_log_pytest

from sweworld.envs.store import error_line
from sweworld.mine.candidates import Candidate, Screen
from sweworld.mine.ledger import Ledger
from sweworld.mine.pipeline import MineOptions, _Run, drop_key
from sweworld.parallel.map import map_ordered
from sweworld.runs.causes import run_cause, touched_tests, touches
from sweworld.runs.validate import Seen, Validation, _decide, no_fail_to_pass_cause
from sweworld.synth.stats import _descendants_cpu, own_cpu_seconds


def _pytest(root: Path, files: dict[str, str]) -> tuple[str, int, dict[str, str]]:
    """(output, exit code, parsed statuses) of a real ``pytest -rA`` over ``files``."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests"], cwd=root,
                          capture_output=True, text=True, check=False)
    output = proc.stdout + proc.stderr
    return output, proc.returncode, parse_log_pytest(output, None)


CASES = {
    "import": ({"tests/test_a.py": "import not_a_module_zz\n\ndef test_a():\n    pass\n"},
               "tests do not import (ModuleNotFoundError: No module named 'not_a_module_zz')"),
    "network": ({"tests/test_a.py": "def test_a():\n    raise OSError(101, 'Network is unreachable')\n"},
                "tests need the network (Network is unreachable)"),
    "empty": ({"tests/test_a.py": "X = 1\n"}, "no tests collected"),
    "errors": ({"tests/test_a.py": "import pytest\n\n@pytest.fixture\ndef f():\n    raise RuntimeError\n\n"
                                   "def test_a(f):\n    pass\n"}, "every test errors"),
    "ran": ({"tests/test_a.py": "def test_a():\n    assert 0\n\ndef test_b():\n    pass\n"}, None),
}


@pytest.mark.parametrize("case", CASES)
def test_cause_of_a_real_pytest_run(tmp_path: Path, case: str):
    files, cause = CASES[case]
    output, code, parsed = _pytest(tmp_path, files)
    assert run_cause(output, code, parsed) == cause, output


def _diff(root: Path, before: str, after: str) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=root, check=True,
                              capture_output=True, text=True).stdout
    git("init", "-q")
    (root / "tests").mkdir()
    (root / "tests" / "test_a.py").write_text(before)
    git("add", ".")
    git("commit", "-qm", "a")
    (root / "tests" / "test_a.py").write_text(after)
    (root / "tests" / "test_new.py").write_text("def test_fresh():\n    pass\n")
    git("add", ".")
    return git("diff", "--cached")


BEFORE = ("from pkg import a\n\nclass TestA:\n    def test_one(self):\n        assert a() == 1\n\n"
          "    def test_two(self):\n        assert True\n\n\ndef test_free():\n    pass\n\n\ndef test_other():\n    pass\n")
AFTER = BEFORE.replace("from pkg import a\n", "from pkg import a, b\n").replace("a() == 1", "a() == 2") \
    .replace("def test_free", "@pytest.mark.skip\ndef test_free") + "\n\ndef test_b():\n    assert b()\n"


def test_tests_a_test_patch_touches(tmp_path: Path):
    touched = touched_tests(_diff(tmp_path, BEFORE, AFTER))
    assert touched == {"tests/test_a.py": {"test_one", "test_free", "test_b"}, "tests/test_new.py": {"test_fresh"}}
    assert touches("tests/test_a.py::TestA::test_one", touched)
    assert touches("tests/test_a.py::test_b[1-2]", touched) and touches("tests/test_new.py::test_fresh", touched)
    assert not touches("tests/test_a.py::TestA::test_two", touched)  # the import changed, not the test
    assert not touches("tests/test_a.py::test_other", touched) and not touches("tests/test_b.py::test_b", touched)
    assert touches("test_one (tests.test_a.TestA)", touched)  # a unittest id


def _seen(statuses: dict[str, str], cause: str | None = None) -> Seen:
    return Seen(statuses=statuses, parsed=dict(statuses), cause=cause, seconds=1.0)


def test_collection_rule_keeps_only_the_tests_the_patch_touches(tmp_path: Path):
    """Before the fix the file fails to import (``from pkg import a, b``): no per-test result. Only the
    tests the test patch adds or changes are FAIL_TO_PASS; the others are noted, not FAIL_TO_PASS."""
    from sweworld.core.types import Task

    task = Task(instance_id="o__r-1", repo="o/r", base_commit="0" * 40, patch="x", test_patch=_diff(tmp_path, BEFORE,
                                                                                                       AFTER))
    names = ["tests/test_a.py::TestA::test_one", "tests/test_a.py::TestA::test_two", "tests/test_a.py::test_other",
             "tests/test_a.py::test_b"]
    crashed = _seen({}, "tests do not import (ImportError: cannot import name 'b' from 'pkg')")
    after = _seen(dict.fromkeys(names, "PASSED"))
    verdict = Validation("o__r-1")
    _decide(verdict, task, [crashed, crashed], [after, after], mined=True)
    assert verdict.kept and verdict.fail_to_pass == ["tests/test_a.py::TestA::test_one", "tests/test_a.py::test_b"]
    assert verdict.uncollected == ["tests/test_a.py::TestA::test_two", "tests/test_a.py::test_other"]
    swebench = Validation("o__r-1")  # sweworld validate: SWE-bench's semantics, every test counts
    _decide(swebench, task, [crashed, crashed], [after, after], mined=False)
    assert swebench.fail_to_pass == sorted(names) and not swebench.uncollected
    untouched = Validation("o__r-1")
    _decide(untouched, task, [crashed, crashed], [_seen(dict.fromkeys(names[1:3], "PASSED"))] * 2, mined=True)
    assert not untouched.kept and untouched.reason == "FAIL_TO_PASS only from a file that failed to collect"
    assert drop_key(untouched) == "FAIL_TO_PASS only from a file that failed to collect"


def test_no_fail_to_pass_names_its_cause():
    passing = _seen({"t::a": "PASSED"})
    assert no_fail_to_pass_cause([passing], [passing], {"t::a": True}, {"t::a": True}, []) == \
        "the tests pass before the fix too"
    broken = _seen({}, "tests do not import (ModuleNotFoundError: No module named 'hypothesis')")
    cause = no_fail_to_pass_cause([broken], [broken], {}, {}, [])
    assert cause == "tests do not import (ModuleNotFoundError: No module named 'hypothesis') with the fix"
    verdict = Validation("x", reason="no test goes fail -> pass with the gold patch", cause=cause)
    assert drop_key(verdict) == f"no FAIL_TO_PASS: {cause}"
    failing = _seen({"t::a": "FAILED"})
    assert no_fail_to_pass_cause([failing], [failing], {"t::a": False}, {"t::a": False}, []) == \
        "the tests fail with the fix too"


def test_build_error_line_of_a_real_failed_pip_install(tmp_path: Path):
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--find-links", str(tmp_path),
                           "not-a-package-zz==1.0"], capture_output=True, text=True, check=False)
    log = tmp_path / "build.log"
    log.write_text(f"### install (1.0s, exit {proc.returncode})\n### script:\npip install x\n### output:\n"
                   + proc.stdout + proc.stderr)
    line = error_line(log)
    assert line.startswith("ERROR: ") and "not-a-package-zz==1.0" in line


def test_own_cpu_counts_children_live_and_reaped():
    start = own_cpu_seconds()
    busy = "i = 0\nwhile i < 3_000_000:\n    i += 1\nimport sys\nsys.stdin.read()\n"
    child = subprocess.Popen([sys.executable, "-c", busy], stdin=subprocess.PIPE)
    while True:  # the child spins, then waits on its stdin: its time shows while it is alive
        with open(f"/proc/{child.pid}/stat") as handle:
            if handle.read().rsplit(")", 1)[1].split()[0] == "S" and _descendants_cpu(os.getpid()) > 0.05:
                break
    alive = own_cpu_seconds() - start
    child.communicate(b"")
    reaped = own_cpu_seconds() - start
    assert alive > 0.05 and reaped >= alive - 0.02  # counted while alive, and once reaped (not twice)


def test_ordered_map_submits_nothing_needless():
    ran: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> int:
        with lock:
            ran.append(i)
        return i
    values = map_ordered(list(range(10)), work, workers=2, needless=lambda i: i >= 3, enough=lambda v: len(v) >= 3)
    assert values == [0, 1, 2] and sorted(ran) == [0, 1, 2]


def test_a_run_stops_past_the_max_th_kept(tmp_path: Path):
    from sweworld.core.types import Task
    from sweworld.mine.history import Commit

    when = "2024-01-01T00:00:00+00:00"
    items = [(f"k{i}", Candidate(commit=Commit(sha=f"{i:040d}", parents=("p",), committed=when, authored=when,
                                               message="m"),
                                 task=Task(instance_id=f"o__r-{i}", repo="o/r", base_commit="0" * 40, patch="x")))
             for i in range(6)]
    run = _Run(items, MineOptions(max_instances=2), Ledger(None), None)
    for i in (3, 1):  # finished out of order, both kept
        run.finished(items[i], Validation(f"o__r-{i}", kept=True, reason="ok", task=items[i][1].task))
    assert [run.needless(i) for i in range(6)] == [False, False, False, False, True, True]
    assert run.kept_at == [3, 1] and Screen().dropped == {}


GO_PATCH = """diff --git a/clamp_test.go b/clamp_test.go
--- a/clamp_test.go
+++ b/clamp_test.go
@@ -1,1 +1,7 @@ package cmp
 import "testing"
+
+func TestClamp(t *testing.T) {
+	if Clamp(5, 0, 3) != 3 {
+		t.Fatal("clamp")
+	}
+}
"""
RUST_PATCH = """diff --git a/tests/recursive.rs b/tests/recursive.rs
--- a/tests/recursive.rs
+++ b/tests/recursive.rs
@@ -10,2 +10,6 @@ mod recursive {
     use super::*;
+    #[test]
+    fn min_depth_1() {
+        assert!(walk(1));
+    }
 }
"""
JS_PATCH = """diff --git a/test/negotiate.test.js b/test/negotiate.test.js
--- a/test/negotiate.test.js
+++ b/test/negotiate.test.js
@@ -3,1 +3,4 @@ const { test } = require('node:test')
 const negotiate = require('..')
+test('ties between equal qualities go to the first supported encoding', () => {
+  assert.equal(negotiate('a;q=0.5, b;q=0.5', ['b', 'a']), 'b')
+})
"""


@pytest.mark.parametrize("patch, test_id, touched", [
    (GO_PATCH, "TestClamp", True), (GO_PATCH, "TestClamp/upper", True), (GO_PATCH, "TestSort", False),
    (RUST_PATCH, "tests::recursive::min_depth_1", True), (RUST_PATCH, "recursive::max_depth", False),
    (JS_PATCH, "- ties between equal qualities go to the first supported encoding", True),
    (JS_PATCH, "- should return gzip", False),
])
def test_the_tests_a_go_rust_or_javascript_test_patch_adds(patch, test_id, touched):
    """The collection rule for other languages: a test package that does not compile before the fix (a
    new API) has no results there; its tests count when the test patch adds or changes them."""
    from sweworld.runs.causes import touched_tests, touches

    assert touches(test_id, touched_tests(patch)) is touched
