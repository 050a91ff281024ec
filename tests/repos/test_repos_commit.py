"""commit_tree_changes: deterministic commits on top of a base commit."""

from __future__ import annotations

import pytest

from sweworld.core.errors import RepoError
from sweworld.repos import RepoStore, commit_tree_changes


@pytest.fixture
def mirror_and_commits(tmp_path, make_repo):
    first, second = make_repo(tmp_path / "repos" / "owner__name")
    store = RepoStore(root=tmp_path / "cache", repos_dir=tmp_path / "repos")
    return store, store.mirror("owner/name"), first, second


def test_commit_tree_changes_is_deterministic(mirror_and_commits, tmp_path, make_repo, run_git):
    store, mirror, first, _ = mirror_and_commits
    files = {"pkg.py": "def answer():\n    return 0\n", "new/dir/data.txt": b"\x00\x01bytes", "run.sh": "#!/bin/sh\n"}
    a = commit_tree_changes(mirror, first, files, "inject bug")
    b = commit_tree_changes(mirror, first[:8], dict(reversed(files.items())), "inject bug")
    assert a == b
    # a separate mirror of the same history gives the same sha
    make_repo(tmp_path / "other" / "owner__name")
    other = RepoStore(root=tmp_path / "cache2", repos_dir=tmp_path / "other").mirror("owner/name")
    assert other != mirror and commit_tree_changes(other, first, files, "inject bug") == a
    assert commit_tree_changes(mirror, first, files, "another message") != a

    shown = run_git(mirror, "cat-file", "-p", a)
    assert f"parent {first}" in shown and "author sweworld <sweworld@localhost> 946684800 +0000" in shown
    assert run_git(mirror, "show", f"{a}:pkg.py") == "def answer():\n    return 0"
    listing = run_git(mirror, "ls-tree", "-r", a)
    assert "100755 blob" in next(line for line in listing.splitlines() if line.endswith("\trun.sh"))
    assert "100644 blob" in next(line for line in listing.splitlines() if line.endswith("\tnew/dir/data.txt"))
    assert run_git(mirror, "rev-parse", f"refs/sweworld/commits/{a}") == a
    assert run_git(mirror, "rev-parse", "refs/heads/main") != a  # no branch moved

    tree = store.tree("owner/name", a)
    assert (tree / "new" / "dir" / "data.txt").read_bytes() == b"\x00\x01bytes"
    assert run_git(tree, "rev-list", "--all") == a


def test_commit_tree_changes_deletes(mirror_and_commits, run_git):
    _, mirror, first, _ = mirror_and_commits
    c = commit_tree_changes(mirror, first, {"run.sh": None}, "drop script")
    assert run_git(mirror, "ls-tree", "-r", "--name-only", c).splitlines() == [".gitignore", "pkg.py"]
    with pytest.raises(RepoError, match="cannot delete"):
        commit_tree_changes(mirror, first, {"nope.txt": None}, "x")


@pytest.mark.parametrize("path", ["/etc/passwd", "../x", "a/../../x", ".git/config", ""])
def test_commit_tree_changes_refuses_bad_paths(mirror_and_commits, path):
    _, mirror, first, _ = mirror_and_commits
    with pytest.raises(RepoError, match="bad path"):
        commit_tree_changes(mirror, first, {path: "x"}, "x")


def test_commit_tree_changes_unknown_parent(mirror_and_commits):
    _, mirror, _, _ = mirror_and_commits
    with pytest.raises(RepoError, match="not found"):
        commit_tree_changes(mirror, "f" * 40, {"a": "b"}, "x")
