"""A small real task for the world's tests: a git tree with a bug, its fix and a test patch."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, make_git_tree
from world_direxec import DirExecutor

from sweworld.core.types import Task
from sweworld.world.worldmodels import OpenAIWorldConfig, OpenAIWorldModel

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = "from pkg import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
NEW_TEST = TESTS + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"
SCRIPT = "from pkg import add\nprint(add(1, 2))\n"


def _diff_of(tree: Path, changes: dict[str, str]) -> str:
    """The git diff that ``changes`` make to ``tree``, which is then put back."""
    for name, text in changes.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    git(tree, "add", "-A")
    patch = git(tree, "diff", "--cached") + "\n"
    git(tree, "reset", "-q", "--hard")
    git(tree, "clean", "-qfd")
    return patch


def calc_task(tmp_path: Path) -> tuple[DirExecutor, Task]:
    """(executor over a fresh tree at the base commit, the task)."""
    tree, commit = make_git_tree(tmp_path / "calc", {"pkg/__init__.py": BUGGY, "tests/test_add.py": TESTS,
                                                     "reproduce.py": SCRIPT})
    task = Task(instance_id="local__calc-1", repo="local/calc", base_commit=commit,
                problem_statement="add(1, 2) returns -1 instead of 3.",
                patch=_diff_of(tree, {"pkg/__init__.py": FIXED}),
                test_patch=_diff_of(tree, {"tests/test_add.py": NEW_TEST}),
                FAIL_TO_PASS=["tests/test_add.py::test_add"], PASS_TO_PASS=["tests/test_add.py::test_zero"],
                hints_text="look at the operator", test_cmd="pytest -rA")
    return DirExecutor(tree, commit), task


def world_model(*urls: str, cache_dir: Path | None = None, **config) -> OpenAIWorldModel:
    """An OpenAI world model on ``urls``; no backoff sleeps; cached only when ``cache_dir`` is given."""
    return OpenAIWorldModel(OpenAIWorldConfig(urls=list(urls), model="world", backoff=0.0, cache=cache_dir is not None,
                                              cache_dir=str(cache_dir) if cache_dir else None, **config))


def swt_reply(stdout: str = "", stderr: str = "", exit_code: int = 0) -> str:
    return json.dumps({"stdout": stdout, "stderr": stderr, "exit_code": exit_code})


def swr_reply(test_report: str, reward: int, reasoning: str = "The fix changes the operator.", **extra) -> str:
    return f"<think>{reasoning}</think>\n" + json.dumps({"test_report": test_report, "reward": reward, **extra})
