"""Context builders over a real git tree through a real-directory Executor; command parsing."""

from __future__ import annotations

import pytest
from tests.conftest import git
from world_tasks import FIXED, NEW_TEST, SCRIPT, TESTS, calc_task

from sweworld.world.commands import executed_code
from sweworld.world.context import (
    INLINE_PATH,
    ContextLimits,
    HistoryStep,
    swr_context,
    swt_context,
    test_command,
)
from sweworld.world.testfiles import inspect_patch

COMMANDS = [
    ("python reproduce.py", ["reproduce.py"], []),
    ("python3 -u reproduce.py --flag", ["reproduce.py"], []),
    ("/usr/bin/python3.11 -W ignore x.py", ["x.py"], []),
    ("cd /testbed && python -m pytest tests/a.py::T::test -k 'a or b' tests/b.py -x", ["/testbed/tests/a.py", "/testbed/tests/b.py"], []),
    ("pytest -q tests/a.py::test_x", ["tests/a.py"], []),
    ("py.test --tb=short -p no:cacheprovider tests/", ["tests"], []),
    ("python -c 'import pkg; print(pkg.add(1, 2))'", [], ["import pkg; print(pkg.add(1, 2))"]),
    ("PYTHONPATH=. timeout 30 python x.py 2>&1 | tail -n 5", ["x.py"], []),
    ("cd sub && python run.py; cd .. && python top.py", ["sub/run.py", "top.py"], []),
    ("python -m pkg.tool --help", ["pkg/tool.py", "pkg/tool/__main__.py"], []),
    ("coverage run -m pytest tests/a.py", ["tests/a.py"], []),
    ("ls -la && grep -rn add pkg", [], []),
    ("python - <<'EOF'\nprint(1)\nEOF", [], []),
]


@pytest.mark.parametrize(("command", "files", "inline"), COMMANDS)
def test_executed_code(command, files, inline):
    code = executed_code(command)
    assert (code.files, code.inline) == (files, inline)


def test_swt_context_reads_executed_files_diff_and_history(tmp_path):
    executor, task = calc_task(tmp_path)
    executor.write_file("pkg/__init__.py", FIXED)
    history = [HistoryStep(command=f"echo {i}", output="x" * 5000, exit_code=0) for i in range(8)]
    limits = ContextLimits(history_steps=3, step_chars=100)
    ctx = swt_context(task, "python reproduce.py && python -c 'print(2)' && python missing.py", executor, history,
                      limits=limits)
    assert [(f.path, f.content) for f in ctx.files] == [("reproduce.py", SCRIPT), (INLINE_PATH, "print(2)")]
    assert "+    return a + b" in ctx.diff and "-    return a - b" in ctx.diff
    assert [s.command for s in ctx.history] == ["echo 5", "echo 6", "echo 7"]
    assert all(len(s.output) < 200 and "characters cut" in s.output for s in ctx.history)
    assert ctx.workdir == executor.workdir and ctx.task.problem_statement == task.problem_statement
    assert (ctx.privileged, ctx.gold_patch, ctx.fail_to_pass, ctx.hints) == (False, "", [], "")


def test_swt_context_privileged_and_bounded(tmp_path):
    executor, task = calc_task(tmp_path)
    executor.write_file("big.py", "# line\n" * 10_000)
    limits = ContextLimits(file_chars=500, max_files=1)
    ctx = swt_context(task, "python big.py && python reproduce.py", executor, limits=limits, privileged=True)
    assert len(ctx.files) == 1 and ctx.files[0].truncated and len(ctx.files[0].content) < 600
    assert ctx.gold_patch == task.patch and ctx.hints == task.hints_text
    assert (ctx.fail_to_pass, ctx.pass_to_pass) == (task.FAIL_TO_PASS, task.PASS_TO_PASS)


def test_swr_context_shows_test_files_after_the_test_patch(tmp_path):
    executor, task = calc_task(tmp_path)
    executor.write_file("tests/test_add.py", "# the agent rewrote the tests\n")  # the harness resets them
    ctx = swr_context(task, task.patch, executor)
    assert [(f.path, f.content) for f in ctx.test_files] == [("tests/test_add.py", NEW_TEST)]
    assert ctx.test_command == "pytest -rA tests/test_add.py" == test_command(task)
    assert (ctx.patch, ctx.gold_patch) == (task.patch, task.patch)
    assert (ctx.fail_to_pass, ctx.pass_to_pass) == (task.FAIL_TO_PASS, task.PASS_TO_PASS)


def test_inspect_patch_leaves_the_workspace_as_it_was(tmp_path):
    executor, task = calc_task(tmp_path)
    executor.write_file("pkg/__init__.py", FIXED)
    before = (git(executor.root, "status", "--porcelain"), executor.diff())
    view = inspect_patch(executor, task, task.patch, ["tests/test_add.py", "tests/absent.py"])
    assert (view.git, view.applied, view.test_patch_applied) == (True, True, True)
    assert view.files == [("tests/test_add.py", NEW_TEST)]
    assert (git(executor.root, "status", "--porcelain"), executor.diff()) == before
    assert executor.read_file("tests/test_add.py") == TESTS


def test_inspect_patch_says_when_a_patch_does_not_apply(tmp_path):
    executor, task = calc_task(tmp_path)
    bad = task.patch.replace("-    return a - b", "-    return a * b")
    assert inspect_patch(executor, task, bad, []).applied is False


def test_inspect_patch_without_git_reads_files_as_they_are(tmp_path):
    executor, task = calc_task(tmp_path)
    task = task.model_copy(update={"base_commit": "0" * 40})  # unknown commit: no git view
    view = inspect_patch(executor, task, task.patch, ["tests/test_add.py"])
    assert (view.git, view.applied, view.files) == (False, None, [("tests/test_add.py", TESTS)])


def test_inspect_patch_judges_against_the_base_when_the_index_holds_something_else(tmp_path):
    """The repository's index is copied only when it holds exactly the base commit: with the fix
    staged (``git add`` in an episode), the gold patch still applies to the base and the test files
    are the base's after the test patch."""
    executor, task = calc_task(tmp_path)
    executor.write_file("pkg/__init__.py", FIXED)
    git(executor.root, "add", "pkg/__init__.py")
    view = inspect_patch(executor, task, task.patch, ["tests/test_add.py"])
    assert (view.git, view.applied, view.test_patch_applied) == (True, True, True)
    assert view.files == [("tests/test_add.py", NEW_TEST)]
    assert git(executor.root, "diff", "--cached", "--name-only").strip() == "pkg/__init__.py"  # left staged
