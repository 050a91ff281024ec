"""The embedded SWT and the tests a task's lists leave out: a test of an evaluated test file that is
in neither FAIL_TO_PASS nor PASS_TO_PASS did not pass where the lists were made, so it is predicted
failing (or skipped, or xfailed, as its text marks it); the test file the context cuts short is
read whole from the base commit; a file whose whole run failed before the fix (every listed test
FAIL_TO_PASS) runs its old version; a parameter case the test patch adds is not found. Checked
against real pytest runs of the same states."""

from __future__ import annotations

import pytest
from tests.conftest import make_git_tree
from world_direxec import DirExecutor
from world_tasks import _diff_of

from sweworld.agents.explorer import reproduction_script
from sweworld.core.types import Task
from sweworld.repos.blobs import GitBlobs
from sweworld.surrogates.swt import EmbeddedSWT
from sweworld.world.context import swt_context
from sweworld.world.metrics import final_counts
from sweworld.world.swt import to_result
from world_embedded import PY, PYTEST

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
PADDING = "\n".join(f"# {k:04d} " + "notes on the cases below " * 3 for k in range(250))
"""Over the context's 16,000 characters of a file: the tests between it and the end are cut."""
TESTS = f"""import pytest

from pkg import add


def test_zero():
    assert add(0, 0) == 0

{PADDING}


def test_add():
    assert add(3, 0) == 3


def test_needs_a_module():
    import a_module_not_installed_here  # noqa: F401


@pytest.mark.skip(reason="needs a display")
def test_draws():
    assert False


@pytest.mark.xfail(reason="known bug")
def test_known_bug():
    assert add(2, 2) == 5


def test_old_name():
    assert add(1, 0) == 1


{PADDING}


def test_last():
    assert add(2, 0) == 2
"""
AFTER = TESTS.replace("    assert add(3, 0) == 3\n", "    assert add(3, 0) == 3\n    assert add(1, 2) == 3\n").replace(
    "def test_old_name", "def test_new_name")
"""The test file after the test patch: test_add asserts more (its old version passes at the base),
test_old_name is renamed."""
FILE = "tests/test_env.py::"


@pytest.fixture
def episode(tmp_path):
    tree, commit = make_git_tree(tmp_path / "tree", {"pkg/__init__.py": BUGGY, "tests/test_env.py": TESTS,
                                                     ".gitignore": "__pycache__/\n"})
    task = Task(instance_id="local__env-1", repo="local/env", base_commit=commit, problem_statement="add subtracts",
                patch=_diff_of(tree, {"pkg/__init__.py": FIXED}), test_patch=_diff_of(tree, {"tests/test_env.py": AFTER}), FAIL_TO_PASS=[f"{FILE}test_add"],
                PASS_TO_PASS=[f"{FILE}test_zero", f"{FILE}test_new_name", f"{FILE}test_last"])
    blobs = GitBlobs(tree)
    yield DirExecutor(tree, commit), task, blobs
    blobs.close()


@pytest.mark.parametrize("edit", ["none", "gold", "agent test"])
def test_tests_the_lists_leave_out_do_not_pass(episode, edit):
    executor, task, blobs = episode
    model = EmbeddedSWT(sources=lambda task: blobs.source(task.base_commit))
    model.add_tasks([task])
    if edit == "gold":
        executor.write_file("pkg/__init__.py", FIXED)
    elif edit == "agent test":  # a test the agent writes is not left out by the lists: it runs
        executor.write_file("tests/test_env.py", TESTS + "\n\ndef test_mine():\n    assert add(1, 1) == 0\n")
    script = reproduction_script("pkg/__init__.py", "add", [f"{FILE}test_needs_a_module"])
    executor.write_file("repro_issue.py", script)
    for command in (f"{PYTEST} -q tests/test_env.py", f"{PYTEST} -rA tests", f"{PYTEST} -q {FILE}test_needs_a_module",
                    f"{PYTEST} -q {FILE}test_draws {FILE}test_old_name"):
        context = swt_context(task, command, executor)
        assert [f.truncated for f in context.files] == ([] if command.endswith(" tests") else [True])
        got, real = model.predict(context), executor.run(command)
        assert got.source == "tests" and got.output.exit_code == real.exit_code, (command, real.output)
        assert final_counts(to_result(got.output).output) == final_counts(real.output), (command, real.output)
        assert "unlisted" in got.detail["why"] or "draws" in command
    got, real = model.predict(swt_context(task, f"{PY} repro_issue.py", executor)), executor.run(f"{PY} repro_issue.py")
    assert (got.source, got.output.exit_code, real.exit_code) == ("script", 1, 1)
    assert got.detail["why"] == {"unlisted": 1}


def _as_pytest_runs_them(executor: DirExecutor, task: Task, commands: list[str]) -> None:
    """The SWT that knows only ``task``'s row predicts each command's exit code and final counts as
    the real run gives them."""
    model = EmbeddedSWT()
    model.add_tasks([task])
    for command in commands:
        got, real = model.predict(swt_context(task, command, executor)), executor.run(command)
        assert got.output.exit_code == real.exit_code, (command, real.output)
        assert final_counts(to_result(got.output).output) == final_counts(real.output), (command, real.output)


MODULE_TESTS = "from pkg import add\n\n\n" + "".join(f"def test_{k}():\n    assert add({k}, 0) == {k}\n\n\n" for k in range(3))


def test_a_file_whose_whole_run_failed_before_the_fix_runs_its_old_version(tmp_path):
    """The test patch imports a name only the fix defines, so before the fix every test of the file
    failed (FAIL_TO_PASS, none PASS_TO_PASS); the workspace's file is the old one, whose tests pass."""
    tree, commit = make_git_tree(tmp_path / "tree", {"pkg/__init__.py": BUGGY, "tests/test_mod.py": MODULE_TESTS,
                                                     ".gitignore": "__pycache__/\n"})
    after = MODULE_TESTS.replace("import add", "import add, sub") + "def test_sub():\n    assert sub(2, 1) == 1\n"
    task = Task(instance_id="local__env-2", repo="local/env", base_commit=commit, problem_statement="no sub",
                patch=_diff_of(tree, {"pkg/__init__.py": FIXED + "\n\ndef sub(a, b):\n    return a - b\n"}),
                test_patch=_diff_of(tree, {"tests/test_mod.py": after}),
                FAIL_TO_PASS=[f"tests/test_mod.py::test_{k}" for k in (0, 1, 2, "sub")], PASS_TO_PASS=[])
    _as_pytest_runs_them(DirExecutor(tree, commit), task, [f"{PYTEST} -q tests/test_mod.py", f"{PYTEST} -q tests/test_mod.py::test_1",
                                                          f"{PYTEST} -q tests/test_mod.py::test_sub"])


PARAMETRIZED = ("import pytest\n\nfrom pkg import add\n\n\n@pytest.mark.parametrize(('a', 'b'), [\n    (1, 0),\n    (2, 0),\n])\n"
                "def test_case(a, b):\n    assert add(a, b) == a + b\n")


def test_a_parameter_case_the_test_patch_adds_is_not_found(tmp_path):
    """The test patch adds a case to a parametrized test and nothing to its body: the FAIL_TO_PASS
    case is not in the workspace (pytest: "not found", exit 4), its file runs the old cases."""
    tree, commit = make_git_tree(tmp_path / "tree", {"pkg/__init__.py": BUGGY, "tests/test_p.py": PARAMETRIZED,
                                                     ".gitignore": "__pycache__/\n"})
    task = Task(instance_id="local__env-3", repo="local/env", base_commit=commit, problem_statement="add subtracts",
                patch=_diff_of(tree, {"pkg/__init__.py": FIXED}),
                test_patch=_diff_of(tree, {"tests/test_p.py": PARAMETRIZED.replace("    (2, 0),\n", "    (2, 0),\n    (2, 3),\n")}),
                FAIL_TO_PASS=["tests/test_p.py::test_case[2-3]"],
                PASS_TO_PASS=["tests/test_p.py::test_case[1-0]", "tests/test_p.py::test_case[2-0]"])
    _as_pytest_runs_them(DirExecutor(tree, commit), task, [
        f"{PYTEST} -q 'tests/test_p.py::test_case[2-3]'", f"{PYTEST} -q tests/test_p.py",
        f"{PYTEST} -q 'tests/test_p.py::test_case[2-0]' 'tests/test_p.py::test_case[2-3]'"])
