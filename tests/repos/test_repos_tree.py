"""Base trees from local clones: clean, at the commit, self-contained, holding that commit only."""

from __future__ import annotations

import pytest

from sweworld.core.errors import RepoError
from sweworld.core.types import Task
from sweworld.repos import RepoStore


def _task(base_commit: str, **extra) -> Task:
    return Task(instance_id="owner__name-1", repo="owner/name", base_commit=base_commit, **extra)


@pytest.mark.parametrize("layout", ["owner__name", "owner/name"])
def test_base_tree_at_first_commit(tmp_path, make_repo, run_git, git_ok, layout):
    first, second = make_repo(tmp_path / "repos" / layout)
    store = RepoStore(root=tmp_path / "cache", repos_dir=tmp_path / "repos")
    tree = store.base_tree(_task(first))

    assert tree == tmp_path / "cache" / "trees" / "owner__name" / first
    assert run_git(tree, "rev-parse", "HEAD") == first
    assert run_git(tree, "status", "--porcelain", "--untracked-files=all") == ""
    assert (tree / "pkg.py").read_text() == "def answer():\n    return 41\n"
    assert not (tree / "later.txt").exists()
    assert run_git(tree, "ls-files", "-s", "run.sh").startswith("100755")
    # self-contained, no remote, no branch, nothing but the one commit
    assert not (tree / ".git" / "objects" / "info" / "alternates").exists()
    assert not (tree / ".git" / "FETCH_HEAD").exists()
    assert run_git(tree, "remote") == ""
    assert run_git(tree, "for-each-ref") == ""
    assert run_git(tree, "rev-list", "--all") == first
    assert not git_ok(tree, "cat-file", "-e", second)
    assert not git_ok(tree, "cat-file", "-e", f"{second}:later.txt")
    # the completion marker is inside .git, the worktree holds only the repository's files
    assert (tree / ".git" / "sweworld-complete").read_text().strip() == first
    assert sorted(p.name for p in tree.iterdir()) == [".git", ".gitignore", "pkg.py", "run.sh"]
    # git diff against the base commit works for an agent's edits
    (tree / "pkg.py").write_text("def answer():\n    return 0\n")
    assert "-    return 41" in run_git(tree, "diff", first)
    run_git(tree, "checkout", "--", "pkg.py")


def test_tree_is_reused_and_user_clone_untouched(tmp_path, make_repo, run_git):
    _, second = make_repo(tmp_path / "repos" / "owner__name")
    clone = tmp_path / "repos" / "owner__name"
    before = (run_git(clone, "for-each-ref"), run_git(clone, "status", "--porcelain"),
              sorted(p.name for p in (clone / ".git").iterdir()))
    store = RepoStore(root=tmp_path / "cache", repos_dir=tmp_path / "repos")
    tree = store.tree("owner/name", second)
    marker = (tree / ".git" / "sweworld-complete").stat()
    assert store.tree("owner/name", second) == tree
    assert (tree / ".git" / "sweworld-complete").stat().st_ino == marker.st_ino
    assert (tree / "later.txt").exists()
    after = (run_git(clone, "for-each-ref"), run_git(clone, "status", "--porcelain"),
             sorted(p.name for p in (clone / ".git").iterdir()))
    assert after == before
    leftovers = [p.name for p in (tmp_path / "cache" / "trees" / "owner__name").iterdir()
                 if p.name.startswith(".") and not p.name.endswith(".used")]  # use stamps are kept
    assert leftovers == []


def test_abbreviated_sha_and_tag_resolve(tmp_path, make_repo, run_git):
    first, second = make_repo(tmp_path / "repos" / "owner__name")
    store = RepoStore(root=tmp_path / "cache", repos_dir=tmp_path / "repos")
    assert store.resolve("owner/name", first[:7]) == first
    tree = store.tree("owner/name", second[:10])
    assert tree.name == second and run_git(tree, "rev-parse", "HEAD") == second
    assert store.tree("owner/name", "v1").name == first


def test_git_url_source(tmp_path, make_repo, run_git):
    first, _ = make_repo(tmp_path / "src")
    run_git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "src"), str(tmp_path / "served.git"))
    for i, source in enumerate((f"file://{tmp_path}/served.git", str(tmp_path / "served.git"))):
        store = RepoStore(root=tmp_path / f"cache{i}")
        tree = store.base_tree(_task(first, repo_source=source))
        assert run_git(tree, "rev-parse", "HEAD") == first
        assert not (tree / ".git" / "objects" / "info" / "alternates").exists()
        mirrors = [p.name for p in (tmp_path / f"cache{i}" / "mirrors").iterdir()]
        assert len(mirrors) == 1 and mirrors[0].startswith("test_git_url_source0__served-")
        # a finished tree is found again without the mirror
        store.mirror("owner/name", source).rename(tmp_path / f"moved{i}.git")
        assert store.base_tree(_task(first, repo_source=source)) == tree


def test_new_commit_in_clone_is_fetched_into_mirror(tmp_path, make_repo, run_git):
    first, _ = make_repo(tmp_path / "repos" / "owner__name")
    clone = tmp_path / "repos" / "owner__name"
    store = RepoStore(root=tmp_path / "cache", repos_dir=tmp_path / "repos")
    store.tree("owner/name", first)
    (clone / "third.txt").write_text("3\n")
    run_git(clone, "add", "third.txt")
    run_git(clone, "commit", "-q", "-m", "third")
    third = run_git(clone, "rev-parse", "HEAD")
    assert (store.tree("owner/name", third) / "third.txt").read_text() == "3\n"


def _assert_names_three_ways(err: RepoError) -> None:
    assert err.hint is not None
    assert "--repos-dir" in err.hint and "owner__name" in err.hint
    assert "git URL" in err.hint and "repo_source" in err.hint
    assert "pypi:NAME==VERSION" in err.hint


def test_missing_commit_raises_repo_error(tmp_path, make_repo):
    make_repo(tmp_path / "repos" / "owner__name")
    store = RepoStore(root=tmp_path / "cache", repos_dir=tmp_path / "repos")
    missing = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(RepoError) as info:
        store.base_tree(_task(missing))
    text = str(info.value)
    assert "owner__name-1" in text and "owner/name" in text and missing in text and "commit not found" in text
    _assert_names_three_ways(info.value)
    assert not (tmp_path / "cache" / "trees" / "owner__name" / missing).exists()


def test_missing_repo_raises_repo_error(tmp_path):
    store = RepoStore(root=tmp_path / "cache", repos_dir=tmp_path / "empty")
    gone = tmp_path / "gone.git"
    with pytest.raises(RepoError) as info:
        store.base_tree(_task("abc1234", repo_source=str(gone)))
    text = str(info.value)
    assert "owner__name-1" in text and "owner/name" in text and "abc1234" in text
    assert "repository not found" in text and "clone --mirror" in text and "does not exist" in text  # cmd, stderr
    _assert_names_three_ways(info.value)
    assert [p.name for p in (tmp_path / "cache" / "mirrors").iterdir()] == []


def test_bad_local_source_raises_repo_error(tmp_path):
    store = RepoStore(root=tmp_path / "cache")
    with pytest.raises(RepoError) as info:
        store.base_tree(_task("abc1234", repo_source=str(tmp_path / "not-there")))
    assert "owner__name-1" in str(info.value) and "does not exist" in str(info.value)
    _assert_names_three_ways(info.value)
