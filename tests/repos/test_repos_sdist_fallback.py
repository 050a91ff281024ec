"""Old releases whose setup.py the host interpreter cannot run still come from PyPI."""

from __future__ import annotations

import subprocess

import pytest

from sweworld.repos import pypi_repo
from sweworld.repos.pypi import fetch_from_index

pytestmark = pytest.mark.network


def test_release_pip_cannot_build_metadata_for_is_fetched_from_the_index(tmp_path, monkeypatch):
    # requests 2.0.1's setup.py imports collections.MutableMapping: pip download fails on Python >= 3.10
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "home"))
    mirror, commit = pypi_repo("requests", "2.0.1")
    files = subprocess.run(["git", "--git-dir", str(mirror), "ls-tree", "-r", "--name-only", commit],
                           capture_output=True, text=True, check=True).stdout.split()
    assert "test_requests.py" in files and "requests/packages/urllib3/_collections.py" in files


def test_fetch_from_index_checks_the_release_exists(tmp_path):
    assert not fetch_from_index("requests", "0.0.0-does-not-exist", tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert fetch_from_index("six", "1.16.0", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["six-1.16.0.tar.gz"]
