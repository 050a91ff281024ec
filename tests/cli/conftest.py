"""What the CLI tests share: one instance of a small local repository whose gold patch fixes ``add``."""

from __future__ import annotations

import pytest
from badinput import row, write_jsonl
from tests.conftest import git, make_git_tree

INSTANCE = "org__repo-1"


@pytest.fixture
def data(tmp_path):
    """One instance of a local repository whose gold patch fixes ``add``."""
    tree, commit = make_git_tree(tmp_path / "repo", {
        "pkg/__init__.py": "def add(a, b):\n    return a - b\n",
        "tests/test_add.py": "from pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"})
    (tree / "pkg/__init__.py").write_text("def add(a, b):\n    return a + b\n")
    patch = git(tree, "diff") + "\n"
    git(tree, "checkout", "-q", ".")
    return write_jsonl(tmp_path / "data.jsonl", [row(INSTANCE, str(tree), base_commit=commit, patch=patch,
                                                     FAIL_TO_PASS=["tests/test_add.py::test_add"])])

