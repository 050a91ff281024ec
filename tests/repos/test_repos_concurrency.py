"""Two threads or processes asking for the same tree at once get one build."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from sweworld.repos import RepoStore


def _build(root: str, repos_dir: str, commit: str) -> tuple[str, int]:
    tree = RepoStore(root=root, repos_dir=repos_dir).tree("owner/name", commit)
    return str(tree), (tree / ".git" / "sweworld-complete").stat().st_ino


def _check(tree: Path, commit: str) -> None:
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    status = subprocess.run(["git", "-C", str(tree), "status", "--porcelain"], capture_output=True, text=True,
                            check=True).stdout
    assert head == commit and status == ""


@pytest.mark.parametrize("kind", ["threads", "processes"])
def test_same_tree_concurrently(tmp_path, make_repo, kind):
    first, _ = make_repo(tmp_path / "repos" / "owner__name")
    args = (str(tmp_path / "cache"), str(tmp_path / "repos"), first)
    if kind == "threads":
        pool = ThreadPoolExecutor(max_workers=6)
    else:
        pool = ProcessPoolExecutor(max_workers=6, mp_context=multiprocessing.get_context("fork"))
    with pool:
        results = list(pool.map(_build, *([arg] * 8 for arg in args)))
    final = tmp_path / "cache" / "trees" / "owner__name" / first
    # every caller got the same tree, and no caller's tree was replaced by a second build
    assert {path for path, _ in results} == {str(final)}
    assert {ino for _, ino in results} == {os.stat(final / ".git" / "sweworld-complete").st_ino}
    _check(final, first)
    assert [n for n in os.listdir(final.parent) if not n.endswith(".used")] == [first]  # no temporary dirs left
    assert len(os.listdir(tmp_path / "cache" / "mirrors")) == 1
