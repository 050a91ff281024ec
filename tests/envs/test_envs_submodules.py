"""Empty submodules of base trees: which there are, and where each is filled from (no builds here)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from tests.conftest import make_git_tree
from tests.envs.gitlinks import HELPERS_URL, superproject

from sweworld.envs import submodule_fill
from sweworld.envs.submodules import empty_submodules, url_repo
from sweworld.repos import RepoStore, releases

OTHER = "0123456789abcdef0123456789abcdef01234567"


def test_empty_submodules_come_from_gitmodules_and_gitlinks(tmp_path: Path) -> None:
    repo, _ = superproject(tmp_path / "sp", {"astropy_helpers": (HELPERS_URL, OTHER), "extern/lib": ("../lib.git", "1" * 40),
                                             "full": ("https://example.org/x/full.git", "2" * 40)},
                           {"setup.py": "print(1)\n"})
    (repo / "full" / "kept.txt").write_text("a checked-out submodule is left alone\n")
    found = empty_submodules(repo)
    assert [(s.name, s.path, s.url, s.commit) for s in found] == [
        ("astropy_helpers", "astropy_helpers", HELPERS_URL, OTHER), ("extern/lib", "extern/lib", "../lib.git", "1" * 40)]
    plain, _ = make_git_tree(tmp_path / "plain", {"setup.py": "print(1)\n"})
    assert empty_submodules(plain) == []


def test_submodule_urls_map_to_owner_and_name() -> None:
    assert url_repo(HELPERS_URL, "astropy/astropy") == "astropy/astropy-helpers"
    assert url_repo("git@github.com:astropy/astropy-helpers", "x/y") == "astropy/astropy-helpers"
    assert url_repo("git://github.com/astropy/astropy-helpers.git/", "x/y") == "astropy/astropy-helpers"
    assert url_repo("../astropy-helpers.git", "astropy/astropy") == "astropy/astropy-helpers"
    assert url_repo("../../x.git", "astropy/astropy") is None and url_repo("", "a/b") is None


def test_a_mirror_with_the_commit_first_then_the_pypi_stand_in_then_missing(tmp_path: Path) -> None:
    _, commit = make_git_tree(tmp_path / "repos" / "astropy__astropy-helpers", {"README": "helpers\n"})
    store = RepoStore(root=tmp_path / "store", repos_dir=tmp_path / "repos")
    links = {"astropy_helpers": (HELPERS_URL, commit), "extern/lib": ("../lib.git", OTHER)}
    repo, _ = superproject(tmp_path / "sp", links, {"setup.py": "print(1)\n"})
    fills = submodule_fill.plan(repo, "owner/proj", store)
    assert [(f.submodule.path, f.kind, f.repo, f.stand_in) for f in fills] == [
        ("astropy_helpers", "mirror", "astropy/astropy-helpers", ""), ("extern/lib", "missing", "owner/lib", "")]
    # a gitlink the mirror does not have: the PyPI stand-in of that path
    other, _ = superproject(tmp_path / "sp2", {"astropy_helpers": (HELPERS_URL, OTHER)}, {"setup.py": "print(1)\n"})
    [fill] = submodule_fill.plan(other, "owner/proj", store)
    assert (fill.kind, fill.stand_in) == ("pypi", "astropy-helpers")
    # the instance key changes only for trees with empty submodules, and with how they are filled
    assert submodule_fill.key_suffix([]) == ""
    assert submodule_fill.key_suffix(fills) != submodule_fill.key_suffix([fill])


def test_a_missing_submodule_is_named_in_the_build_log_with_what_to_do(tmp_path: Path) -> None:
    repo, _ = superproject(tmp_path / "sp", {"extern/lib": ("../lib.git", OTHER)}, {"setup.py": "print(1)\n"})
    store = RepoStore(root=tmp_path / "store", repos_dir=tmp_path / "repos")
    prepared = submodule_fill.prepare(submodule_fill.plan(repo, "owner/proj", store), repo, store)
    assert submodule_fill.mounts(prepared) == {}
    [line] = submodule_fill.script_lines(prepared)
    assert line.startswith("echo ") and line.endswith(" >&2")
    for words in ("submodule extern/lib (../lib.git) at 0123456789ab is empty", "--repos-dir DIR/owner__lib",
                  "PYPI_STAND_INS"):
        assert words in line


def _files(*rows: tuple[str, str, str | None]) -> list[dict]:
    return [{"filename": name, "upload-time": when, "requires-python": python, "yanked": name.endswith(".zip")}
            for name, when, python in rows]


def test_the_stand_in_is_the_highest_release_uploaded_before_the_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(releases, "index_files", lambda name: _files(
        ("astropy-helpers-2.0.2.tar.gz", "2017-10-13T16:51:01.267294Z", None),
        ("astropy_helpers-2.0.3.tar.gz", "2018-01-22T20:33:41.634377Z", None),
        ("astropy-helpers-3.0rc1.tar.gz", "2018-01-07T23:37:39Z", None),
        ("astropy-helpers-3.0.tar.gz", "2018-02-09T16:47:00.379976Z", ">=3.5"),
        ("astropy-helpers-3.1.zip", "2018-12-05T02:20:56Z", ">=3.5"),
        ("astropy-helpers-2.0.4-py2.py3-none-any.whl", "2018-02-09T16:47:51Z", None)))
    def pick(day: str, python: str | None = None) -> str | None:
        release = releases.release_as_of("astropy-helpers", datetime.fromisoformat(day).replace(tzinfo=timezone.utc),
                                         python)
        return release.version if release else None
    assert pick("2017-12-20") == "2.0.2" and pick("2018-01-23") == "2.0.3"  # no pre-release
    assert pick("2019-01-01") == "3.0" and pick("2019-01-01", "2.7") == "2.0.3"  # not yanked; requires-python
    assert pick("2010-01-01") is None
    monkeypatch.setattr(releases, "index_files", lambda name: [{"filename": "astropy-helpers-1.3.tar.gz"},
                                                               {"filename": "astropy-helpers-2.0.tar.gz"}])
    assert pick("2010-01-01") == "2.0"  # an index without upload times: the highest release
