"""PyPI sources: real sdists, committed deterministically; base trees from them."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from sweworld.core import paths
from sweworld.core.errors import RepoError
from sweworld.core.types import Task
from sweworld.repos import RepoStore, download_sdist, pypi_repo

pytestmark = pytest.mark.network


def _seed(repos_root, archive) -> None:
    """Put an already downloaded sdist into a fresh repos cache (so the test downloads once)."""
    dest = repos_root / "sdists" / archive.parent.name
    dest.mkdir(parents=True)
    shutil.copy2(archive, dest / archive.name)


def test_pypi_commit_is_reproducible(tmp_path, monkeypatch, run_git):
    archive = download_sdist("six", "1.16.0")
    assert archive.name == "six-1.16.0.tar.gz"
    assert archive.is_relative_to(paths.home() / "repos" / "sdists")

    results = []
    for i in range(2):
        home = tmp_path / f"home{i}"
        _seed(home / "repos", archive)
        monkeypatch.setenv("SWEWORLD_HOME", str(home))
        if i == 1:  # user config, umask and inherited git variables must not matter
            (tmp_path / "gitconfig").write_text(
                "[user]\n\tname = Someone Else\n\temail = x@y\n[core]\n\tautocrlf = true\n\tfileMode = false\n")
            monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
            monkeypatch.setenv("GIT_AUTHOR_DATE", "2020-02-02T00:00:00+0000")
            monkeypatch.setenv("GIT_COMMITTER_NAME", "intruder")
            old = os.umask(0o077)
        try:
            mirror, commit = pypi_repo("six", "1.16.0")
        finally:
            if i == 1:
                os.umask(old)
        assert mirror == home / "repos" / "mirrors" / "pypi__six__1.16.0.git"
        results.append(commit)
    assert results[0] == results[1]
    assert len(results[0]) == 40

    monkeypatch.delenv("GIT_CONFIG_GLOBAL")
    shown = run_git(mirror, "cat-file", "-p", results[0])
    assert "author sweworld <sweworld@localhost> 946684800 +0000" in shown
    assert "committer sweworld <sweworld@localhost> 946684800 +0000" in shown
    assert shown.endswith("pypi six==1.16.0") and "parent" not in shown
    assert run_git(mirror, "rev-parse", "refs/tags/1.16.0") == results[0]
    # a cached mirror answers without rebuilding
    assert pypi_repo("six", "1.16.0") == (mirror, results[0])


def test_pypi_tree_keeps_gitignored_files(tmp_path, run_git):
    store = RepoStore(root=tmp_path / "cache")
    archive = download_sdist("iniconfig", "2.0.0")
    _seed(tmp_path / "cache", archive)
    mirror, commit = pypi_repo("iniconfig", "2.0.0", root=tmp_path / "cache")
    assert mirror == tmp_path / "cache" / "mirrors" / "pypi__iniconfig__2.0.0.git"
    task = Task(instance_id="iniconfig-0", repo="pytest-dev/iniconfig", base_commit=commit[:12],
                repo_source="pypi:iniconfig==2.0.0")
    tree = store.base_tree(task)
    assert tree.name == commit
    # .gitignore lists src/iniconfig/_version.py, the sdist ships it: it must be committed
    assert "src/iniconfig/_version.py" in (tree / ".gitignore").read_text()
    assert "src/iniconfig/_version.py" in run_git(tree, "ls-files").splitlines()
    assert (tree / "pyproject.toml").is_file() and not (tree / "iniconfig-2.0.0").exists()
    assert run_git(tree, "status", "--porcelain", "--untracked-files=all", "--ignored") == ""
    assert run_git(tree, "rev-list", "--all") == commit
    assert not (tree / ".git" / "objects" / "info" / "alternates").exists()


def test_pypi_modes_and_attributes(run_git):
    mirror, commit = pypi_repo("more-itertools", "10.5.0")
    listing = run_git(mirror, "ls-tree", "-r", commit)
    modes = {line.split("\t")[1]: line.split()[0] for line in listing.splitlines()}
    assert modes["more_itertools/more.py"] == "100755"  # executable in the archive
    assert modes["more_itertools/recipes.py"] == "100644"
    assert set(modes.values()) <= {"100644", "100755"}
    assert ".gitattributes" in modes and "PKG-INFO" in modes
    # blobs are stored byte for byte: the blob equals the archive member
    data = subprocess.run(["tar", "xzf", str(download_sdist("more-itertools", "10.5.0")), "-O",
                           "more-itertools-10.5.0/more_itertools/recipes.py"], capture_output=True, check=True).stdout
    blob = subprocess.run(["git", f"--git-dir={mirror}", "cat-file", "blob", f"{commit}:more_itertools/recipes.py"],
                          capture_output=True, check=True).stdout
    assert blob == data


def test_pypi_missing_release_raises(tmp_path):
    with pytest.raises(RepoError) as info:
        pypi_repo("six", "0.0.0.999", root=tmp_path / "cache")
    assert "six==0.0.0.999" in str(info.value) and "pip" in str(info.value)
    assert info.value.hint and "--repos-dir" in info.value.hint
    assert not (tmp_path / "cache" / "mirrors" / "pypi__six__0.0.0.999.git").exists()
    assert list((tmp_path / "cache" / "sdists").iterdir()) == []
