"""Real traces of small local tasks for the trace, replay and fidelity tests: commands really run
(bash, python, pytest) through a ``TracingExecutor`` over a git tree, and an evaluation really run
(the test patch applied, pytest -rA, graded by the harness's code) recorded as an ``EvalTrace``."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from tests.conftest import make_git_tree
from world_direxec import DirExecutor
from world_tasks import FIXED, NEW_TEST, SCRIPT, TESTS, _diff_of

from sweworld.core.types import Task
from sweworld.harness.evalscript import END_MARKER, EXIT_CODE_MARKER, START_MARKER, marker
from sweworld.harness.grade import extract_test_run, grade
from sweworld.harness.report import InstanceReport
from sweworld.world.replay import NONCE_MASK
from sweworld.world.traces import TraceStore
from sweworld.world.tracing import TracingExecutor, eval_trace

PY = shlex.quote(sys.executable)
BUGS = {"local/calc": "def add(a, b):\n    return a - b\n", "local/mul": "def add(a, b):\n    return a * b\n"}
WRONG = "def add(a, b):\n    return a + b + (a == 0)\n"
COMMANDS_BEFORE = [f"{PY} reproduce.py", "cat pkg/__init__.py", "ls pkg | sort"]
COMMANDS_AFTER = [f"{PY} reproduce.py", f"{PY} -m pytest -q -p no:cacheprovider tests 2>&1 | tail -1"]


def make_task(root: Path, repo: str) -> tuple[DirExecutor, Task]:
    """A git tree whose ``add`` has ``BUGS[repo]``; the task, its fix and a test patch."""
    tree, commit = make_git_tree(root, {"pkg/__init__.py": BUGS[repo], "tests/test_add.py": TESTS,
                                        "reproduce.py": SCRIPT, ".gitignore": "__pycache__/\n"})
    task = Task(instance_id=f"{repo.replace('/', '__')}-1", repo=repo, base_commit=commit,
                problem_statement="add(1, 2) does not return 3.", patch=_diff_of(tree, {"pkg/__init__.py": FIXED}),
                test_patch=_diff_of(tree, {"tests/test_add.py": NEW_TEST}),
                FAIL_TO_PASS=["tests/test_add.py::test_add"], PASS_TO_PASS=["tests/test_add.py::test_zero"],
                test_cmd="pytest -rA")
    return DirExecutor(tree, commit), task


def evaluate_here(executor: DirExecutor, task: Task, patch: str) -> tuple[InstanceReport, str]:
    """The tests really run on the workspace as it is + the test patch, graded like the harness
    grades them; (report, test_output.txt as the harness writes it). The tree is put back."""
    executor.write_file("tests/test_add.py", NEW_TEST)
    result = executor.run(f"{PY} -m pytest -rA -p no:cacheprovider tests/test_add.py")
    executor.run(f"git checkout -q {task.base_commit} -- tests")
    text = (f"+ git apply test.patch\n{marker(START_MARKER, NONCE_MASK)}\n{result.output.rstrip()}\n"
            f"{marker(END_MARKER, NONCE_MASK)}\n{marker(EXIT_CODE_MARKER, NONCE_MASK)} {result.exit_code}\n")
    graded = grade(task, extract_test_run(text, NONCE_MASK))
    return InstanceReport.build(task.instance_id, patch, patch_applied=True, graded=graded), text


def record_episode(root: Path, store: TraceStore, repo: str = "local/calc", fix: str = FIXED
                   ) -> tuple[DirExecutor, Task]:
    """One real episode on a fresh tree of ``repo`` (look, edit with ``fix``, run again), traced, then
    its real evaluation traced; the tree keeps the fix."""
    executor, task = make_task(root, repo)
    traced = TracingExecutor(executor, task, store)
    for command in COMMANDS_BEFORE:
        traced.run(command)
    traced.write_file("pkg/__init__.py", fix)
    for command in COMMANDS_AFTER:
        traced.run(command)
    patch = traced.diff()
    report, text = evaluate_here(executor, task, patch)
    store.append(eval_trace(task, patch, report, text, executor))
    return executor, task
