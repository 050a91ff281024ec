"""Derived commits: a synthesized instance's base commit is rebuilt on a machine that never saw it."""

from __future__ import annotations

import subprocess

import pytest

from realtasks import FIRST_BUG, MODULE, real_tasks
from sweworld.core.errors import RepoError
from sweworld.repos import RepoStore

pytestmark = pytest.mark.network


def test_fresh_machine_rebuilds_the_same_buggy_commit(tmp_path, monkeypatch):
    task = real_tasks()["first"]
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "fresh"))
    tree = RepoStore().base_tree(task)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True, text=True).stdout.strip()
    assert head == task.base_commit
    assert FIRST_BUG[1] in (tree / MODULE).read_text()
    assert str(tree).startswith(str(tmp_path / "fresh"))


def test_a_wrong_base_commit_is_still_a_clear_error(tmp_path, monkeypatch):
    task = real_tasks()["first"].model_copy(update={"base_commit": "1" * 40})
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "fresh"))
    with pytest.raises(RepoError) as info:
        RepoStore().base_tree(task)
    assert "1" * 12 in str(info.value) and "pypi:" in str(info.value)
