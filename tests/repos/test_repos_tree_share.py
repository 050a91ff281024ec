"""Base trees of further commits share unchanged files and objects with a finished tree (hard links),
and are still complete, exact, self-contained and removable one by one."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from sweworld.core.errors import RepoError
from sweworld.envs import gc
from sweworld.repos import RepoStore
from sweworld.repos.share import copy_objects, is_shared
from sweworld.repos.tree import build_tree, init


def _commit(run_git, repo: Path, files: dict[str, str | None], message: str,
            modes: dict[str, int] | None = None) -> str:
    for path, text in files.items():
        target = repo / path
        if text is None:
            target.unlink()
            if target.parent != repo and not any(target.parent.iterdir()):
                target.parent.rmdir()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    for path, mode in (modes or {}).items():
        (repo / path).chmod(mode)
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-q", "-m", message)
    return run_git(repo, "rev-parse", "HEAD")


@pytest.fixture
def history(tmp_path, run_git) -> tuple[Path, list[str]]:
    """A clone at ``repos/owner__name`` with three commits: A; B changes, removes, adds files, a mode,
    a file into a directory and back; C adds a ``.gitattributes`` that changes how an unchanged blob
    checks out."""
    repo = tmp_path / "repos" / "owner__name"
    repo.mkdir(parents=True)
    run_git(repo, "init", "-q", "-b", "main")
    (repo / "link").symlink_to("same.txt")
    a = _commit(run_git, repo, {"same.txt": "unchanged\n", "edit.py": "x = 1\n", "run.sh": "echo hi\n",
                                "gone/only.txt": "removed in B\n", "deep/er/keep.txt": "deep\n",
                                "swap": "a file in A\n", "flip/inner.txt": "a directory in A\n"},
                "A", {"run.sh": 0o755})
    b = _commit(run_git, repo, {"edit.py": "x = 2\n", "gone/only.txt": None, "new/file.txt": "new in B\n",
                                "swap": None, "swap/inside.txt": "a directory in B\n", "flip/inner.txt": None,
                                "flip": "a file in B\n"}, "B", {"run.sh": 0o644})
    c = _commit(run_git, repo, {".gitattributes": "*.txt eol=crlf\n"}, "C")
    return tmp_path / "repos", [a, b, c]


def _digest(tree: Path) -> dict[str, tuple[int, str]]:
    """Every worktree path (not .git) with its mode and a hash of its content or link target."""
    found = {}
    for root, dirs, files in os.walk(tree):
        if Path(root) == tree:
            dirs.remove(".git")
        for name in files + [d for d in dirs if (Path(root) / d).is_symlink()]:
            path = Path(root) / name
            body = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            found[str(path.relative_to(tree))] = (path.lstat().st_mode, hashlib.sha256(body).hexdigest())
    return found


def _objects(run_git, tree: Path) -> set[str]:
    listing = run_git(tree, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(listing.split())


def _reachable(run_git, tree: Path, commit: str) -> set[str]:
    listing = run_git(tree, "rev-list", "--objects", commit)
    return {line.split()[0] for line in listing.splitlines()}


def _unshared(tmp_path: Path, repos: Path, commit: str) -> Path:
    """The tree of ``commit`` built alone, in a cache of its own."""
    return RepoStore(root=tmp_path / "alone", repos_dir=repos).tree("owner/name", commit)


def _assert_complete(run_git, git_ok, tree: Path, commit: str, alone: Path) -> None:
    """``tree`` is a finished tree of ``commit`` equal to ``alone`` (the same commit built unshared)."""
    assert run_git(tree, "rev-parse", "HEAD") == commit
    assert run_git(tree, "diff-files", "--name-only") == ""  # the index's stat data still holds (no refresh)
    assert run_git(tree, "status", "--porcelain", "--untracked-files=all", "--ignored") == ""
    assert git_ok(tree, "fsck", "--full", "--strict", "--no-dangling")
    assert _objects(run_git, tree) == _reachable(run_git, tree, commit)  # its own objects, nothing else
    assert run_git(tree, "rev-list", "--all") == commit
    assert run_git(tree, "for-each-ref") == "" and run_git(tree, "remote") == ""
    assert run_git(tree, "log", "-g", "--date=unix", "--format=%gd %gs") == \
        f"HEAD@{{946684800}} checkout: moving from main to {commit}"
    assert not (tree / ".git" / "objects" / "info" / "alternates").exists()
    assert _digest(tree) == _digest(alone)
    assert is_shared(tree)


def test_a_further_commit_shares_unchanged_files_and_objects(tmp_path, history, run_git, git_ok):
    repos, (a, b, _) = history
    store = RepoStore(root=tmp_path / "cache", repos_dir=repos)
    tree_a = store.tree("owner/name", a)
    tree_b = store.tree("owner/name", b)
    _assert_complete(run_git, git_ok, tree_b, b, _unshared(tmp_path, repos, b))
    _assert_complete(run_git, git_ok, tree_a, a, _unshared(tmp_path, repos, a))  # the donor is untouched

    for path in ("same.txt", "deep/er/keep.txt", "link"):  # unchanged: one inode for both trees
        assert (tree_a / path).lstat().st_ino == (tree_b / path).lstat().st_ino
    for path in ("edit.py", "run.sh"):  # content or mode changed: a file of its own
        assert (tree_a / path).stat().st_ino != (tree_b / path).stat().st_ino
    assert (tree_b / "edit.py").read_text() == "x = 2\n" and (tree_a / "edit.py").read_text() == "x = 1\n"
    assert not os.access(tree_b / "run.sh", os.X_OK) and os.access(tree_a / "run.sh", os.X_OK)
    assert not (tree_b / "gone").exists() and (tree_b / "new" / "file.txt").read_text() == "new in B\n"
    assert not (tree_a / "new").exists()
    blob = run_git(tree_b, "rev-parse", "HEAD:same.txt")
    loose = Path(".git") / "objects" / blob[:2] / blob[2:]
    assert (tree_a / loose).stat().st_ino == (tree_b / loose).stat().st_ino
    assert {(tree_b / ".git" / "objects" / oid[:2] / oid[2:]).stat().st_mode & 0o777
            for oid in _objects(run_git, tree_b)} == {0o444}  # read-only, written or linked
    assert not git_ok(tree_b, "cat-file", "-e", run_git(tree_a, "rev-parse", "HEAD:edit.py"))  # A's old blob


def test_an_older_commit_built_from_a_newer_tree_holds_nothing_newer(tmp_path, history, run_git, git_ok):
    repos, (a, b, _) = history
    store = RepoStore(root=tmp_path / "cache", repos_dir=repos)
    tree_b = store.tree("owner/name", b)
    tree_a = store.tree("owner/name", a)
    _assert_complete(run_git, git_ok, tree_a, a, _unshared(tmp_path, repos, a))
    assert (tree_a / "same.txt").stat().st_ino == (tree_b / "same.txt").stat().st_ino
    assert not git_ok(tree_a, "cat-file", "-e", b)
    assert not git_ok(tree_a, "cat-file", "-e", run_git(tree_b, "rev-parse", "HEAD:new/file.txt"))


def test_a_changed_gitattributes_checks_unchanged_blobs_out_again(tmp_path, history, run_git, git_ok):
    repos, (_, b, c) = history
    store = RepoStore(root=tmp_path / "cache", repos_dir=repos)
    tree_b = store.tree("owner/name", b)
    tree_c = store.tree("owner/name", c)
    _assert_complete(run_git, git_ok, tree_c, c, _unshared(tmp_path, repos, c))
    assert (tree_c / "same.txt").read_bytes() == b"unchanged\r\n"
    assert (tree_b / "same.txt").read_bytes() == b"unchanged\n"
    assert (tree_c / "same.txt").stat().st_ino != (tree_b / "same.txt").stat().st_ino


def test_a_donor_missing_files_still_gives_a_complete_tree(tmp_path, history, run_git, git_ok):
    repos, (a, b, _) = history
    store = RepoStore(root=tmp_path / "cache", repos_dir=repos)
    tree_a = store.tree("owner/name", a)
    (tree_a / "same.txt").unlink()  # as if gc were removing the donor while the tree is built
    blob = run_git(repos / "owner__name", "rev-parse", f"{b}:deep/er/keep.txt")
    (tree_a / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    mirror = store.mirror("owner/name")
    dest = tmp_path / "built"
    dest.mkdir()
    build_tree(mirror, b, dest, share_with=[tree_a])
    _assert_complete(run_git, git_ok, dest, b, _unshared(tmp_path, repos, b))
    assert (dest / "edit.py").read_text() == "x = 2\n" and (dest / "same.txt").read_text() == "unchanged\n"


def test_gc_of_the_first_tree_leaves_the_second_intact(tmp_path, history, run_git, git_ok, monkeypatch):
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "home"))
    repos, (a, b, _) = history
    store = RepoStore(repos_dir=repos)
    tree_a = store.tree("owner/name", a)
    tree_b = store.tree("owner/name", b)
    modes = {path: (tree_b / path).lstat().st_mode for path in ("same.txt", "deep/er/keep.txt")}
    (tree_a / "deep" / "er").chmod(0o555)  # (not root:) gc makes the directory writable, not the shared file
    later = time.time() + 10
    stale = [item for item in gc.collect(older_than=1, now=later) if item.path == tree_a]
    assert [item.kind for item in stale] == ["tree"]
    assert gc.remove(stale[0])
    assert not tree_a.exists()
    _assert_complete(run_git, git_ok, tree_b, b, _unshared(tmp_path, repos, b))
    assert {path: (tree_b / path).lstat().st_mode for path in modes} == modes
    assert (tree_b / "same.txt").stat().st_nlink == 1
    # a tree built after the gc shares with the one left
    tree_a = store.tree("owner/name", a)
    assert (tree_a / "same.txt").stat().st_ino == (tree_b / "same.txt").stat().st_ino


@pytest.mark.bwrap
@pytest.mark.parametrize("workspace", ["overlay", "copy"])
def test_episodes_over_a_shared_tree_change_neither_tree(tmp_path, history, run_git, git_ok, workspace):
    from sweworld.sandbox import Layers, Sandbox, SandboxConfig

    repos, (a, b, _) = history
    store = RepoStore(root=tmp_path / "cache", repos_dir=repos)
    tree_a, tree_b = store.tree("owner/name", a), store.tree("owner/name", b)
    before = {tree: (_digest(tree), (tree / "same.txt").stat().st_ino) for tree in (tree_a, tree_b)}
    with Sandbox({"/testbed": Layers([tree_b])}, base_commit=b, config=SandboxConfig(workspace=workspace)) as sb:
        assert sb.info["workspace"] == workspace
        assert sb.run("git status --porcelain && git diff --stat").output == ""
        edits = ("echo more >> same.txt && sed -i s/deep/DEEP/ deep/er/keep.txt && chmod +x same.txt "
                 "&& git stash -q && git stash pop -q && git add -A && git commit -qm edit")
        assert sb.run(edits).exit_code == 0
        assert "+more" in sb.diff()
    assert {tree: (_digest(tree), (tree / "same.txt").stat().st_ino) for tree in (tree_a, tree_b)} == before
    _assert_complete(run_git, git_ok, tree_b, b, _unshared(tmp_path, repos, b))


def test_an_object_missing_from_the_mirror_fails_the_build(tmp_path, history):
    repos, (a, _, _) = history
    mirror = RepoStore(root=tmp_path / "cache", repos_dir=repos).mirror("owner/name")
    with pytest.raises(RepoError, match="0123456789abcdef0123456789abcdef01234567 is missing"):
        copy_objects(mirror, [a, "0123456789abcdef0123456789abcdef01234567"], init(tmp_path / "t", a, raw_attributes=False))
