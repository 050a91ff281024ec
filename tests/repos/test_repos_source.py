"""Parsing repository sources and the default source of a task (no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweworld.core.errors import RepoError
from sweworld.repos import RepoSource, RepoStore, default_source, find_in_repos_dir


def test_parse_pypi_normalises_the_name():
    src = RepoSource.parse("pypi:More_Itertools==10.5.0")
    assert (src.kind, src.name, src.version) == ("pypi", "more-itertools", "10.5.0")
    assert src.describe() == "pypi:more-itertools==10.5.0"
    assert src.mirror_name() == "pypi__more-itertools__10.5.0"


@pytest.mark.parametrize("text", ["pypi:six", "pypi:six>=1", "pypi:==1.0"])
def test_parse_bad_pypi_raises(text):
    with pytest.raises(RepoError, match="pypi:NAME==VERSION"):
        RepoSource.parse(text)


@pytest.mark.parametrize("url", [
    "https://github.com/psf/requests.git", "git@github.com:psf/requests.git",
    "file:///srv/git/requests.git", "ssh://git@host/x/y"])
def test_parse_git_urls(url):
    src = RepoSource.parse(url)
    assert src.kind == "git" and src.location == url
    assert src.is_url == (not url.startswith("file://"))


def test_parse_paths(tmp_path, make_repo):
    make_repo(tmp_path / "clone")
    assert RepoSource.parse(str(tmp_path / "clone")) == RepoSource(kind="local", location=str(tmp_path / "clone"))
    bare = RepoSource.parse("mirror.git", base=tmp_path)
    assert bare.kind == "git" and bare.location == str(tmp_path / "mirror.git") and not bare.is_url
    with pytest.raises(RepoError, match="does not exist"):
        RepoSource.parse(str(tmp_path / "nowhere"))
    (tmp_path / "plain").mkdir()
    with pytest.raises(RepoError, match="not a git repository"):
        RepoSource.parse(str(tmp_path / "plain"))


def test_mirror_names_differ_per_location():
    a = RepoSource.parse("https://github.com/a/x.git").mirror_name()
    b = RepoSource.parse("https://gitlab.com/a/x.git").mirror_name()
    assert a != b and a.startswith("a__x-") and b.startswith("a__x-")


@pytest.mark.parametrize("layout", ["owner__name", "owner/name"])
def test_repos_dir_layouts(tmp_path, make_repo, layout):
    make_repo(tmp_path / "repos" / layout)
    found = find_in_repos_dir(tmp_path / "repos", "owner/name")
    assert found == (tmp_path / "repos" / layout).resolve()
    assert default_source("owner/name", tmp_path / "repos").kind == "local"


def test_default_is_github_when_not_in_repos_dir(tmp_path):
    src = default_source("owner/name", tmp_path)
    assert src.kind == "git" and src.location == "https://github.com/owner/name.git" and src.is_url
    assert RepoStore(root=tmp_path / "c").source("owner/name").location == "https://github.com/owner/name.git"


def test_explicit_source_wins_over_repos_dir(tmp_path, make_repo):
    make_repo(tmp_path / "repos" / "owner__name")
    store = RepoStore(root=tmp_path / "c", repos_dir=tmp_path / "repos")
    assert store.source("owner/name", "pypi:six==1.16.0").kind == "pypi"
    assert store.source("owner/name").location == str((tmp_path / "repos" / "owner__name").resolve())


def test_relative_source_is_taken_from_repos_dir(tmp_path, make_repo):
    make_repo(tmp_path / "repos" / "elsewhere")
    store = RepoStore(root=tmp_path / "c", repos_dir=tmp_path / "repos")
    assert store.source("owner/name", "elsewhere").location == str(Path(tmp_path / "repos" / "elsewhere").resolve())
