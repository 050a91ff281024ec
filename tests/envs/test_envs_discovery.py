"""Interpreter discovery against the interpreters really installed on this machine."""

from __future__ import annotations

import subprocess

import pytest

from sweworld.core.errors import EnvBuildError
from sweworld.envs.discovery import find_interpreter, list_interpreters


@pytest.mark.parametrize("version", ["3.11", "3.12"])
def test_finds_interpreter_and_reports_its_version(version: str) -> None:
    interp = find_interpreter(version)
    assert interp.version == version
    assert interp.full_version.startswith(version + ".")
    assert interp.path.is_absolute() and not interp.path.is_symlink()
    assert interp.path.resolve() == interp.path
    out = subprocess.run([str(interp.path), "-c", "import sys; print(sys.version_info[:2], sys.base_prefix)"],
                         capture_output=True, text=True, check=True).stdout
    major, minor = version.split(".")
    assert out.startswith(f"({major}, {minor})")
    assert interp.prefix.is_dir() and interp.path.is_relative_to(interp.prefix)


def test_patch_and_prefix_spellings_are_accepted_and_cached() -> None:
    assert find_interpreter("python3.11") is find_interpreter("3.11.0") is find_interpreter("3.11")


def test_missing_version_names_where_it_looked() -> None:
    with pytest.raises(EnvBuildError) as info:
        find_interpreter("3.99")
    text = str(info.value)
    assert "3.99" in text and "uv python find" in text and "pyenv" in text.lower()
    assert "python3.99 on PATH" in text and "uv python install 3.99" in text


def test_not_a_version_is_rejected() -> None:
    with pytest.raises(EnvBuildError, match="not a Python version"):
        find_interpreter("latest")


def test_list_interpreters_is_sorted_unique_and_verified() -> None:
    found = list_interpreters()
    versions = [i.version for i in found]
    assert {"3.11", "3.12"} <= set(versions)
    assert len(versions) == len(set(versions))
    assert [i.version_tuple for i in found] == sorted(i.version_tuple for i in found)
    assert all(i.path.exists() for i in found)
