"""Files of a commit read through git's objects (``repos.blobs``), on a repository the test builds."""

from __future__ import annotations

import subprocess

import pytest

from sweworld.core.errors import RepoError
from sweworld.repos.blobs import GitBlobs


def _git(cwd, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_files_of_each_commit_are_read_without_a_checkout(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "a.py").write_text("x = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "a.py").write_text("x = 2  # é\n")
    _git(repo, "commit", "-qam", "two")
    second = _git(repo, "rev-parse", "HEAD")
    bare = tmp_path / "bare.git"
    _git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    for where in (repo, bare):
        blobs = GitBlobs(where)
        assert blobs.read(first, "pkg/a.py") == "x = 1\n" and blobs.source(second)("pkg/a.py") == "x = 2  # é\n"
        assert blobs.read(first, "pkg/missing.py") is None and blobs.read(first, "pkg") is None
        assert blobs.has(second) and not blobs.has("0" * 40)
        blobs.close()
    with pytest.raises(RepoError, match="not a git repository"):
        GitBlobs(tmp_path / "nowhere")
