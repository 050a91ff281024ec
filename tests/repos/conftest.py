"""Fixtures for the repos tests: a persistent SWEWORLD_HOME and small local git repositories."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "2001-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_COMMITTER_DATE": "2001-01-01T00:00:00+0000",
}


@pytest.fixture(scope="session", autouse=True)
def sweworld_home() -> Iterator[Path]:
    """SWEWORLD_HOME for the whole session: a persistent cache, so PyPI downloads are reused."""
    home = Path(os.environ.get("SWEWORLD_TEST_HOME") or os.path.expanduser("~/.cache/sweworld-test"))
    home.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SWEWORLD_HOME", str(home))
        yield home


def _run_git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity and no user config; return stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    proc = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _git_ok(repo: Path, *args: str) -> bool:
    """True when ``git args`` exits 0 in ``repo``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    return subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, check=False).returncode == 0


@pytest.fixture
def run_git() -> Callable[..., str]:
    """``run_git(repo, *args) -> stdout``; raises ``CalledProcessError`` on failure."""
    return _run_git


@pytest.fixture
def git_ok() -> Callable[..., bool]:
    """``git_ok(repo, *args) -> bool``: whether the git command exits 0."""
    return _git_ok


@pytest.fixture
def make_repo() -> Callable[[Path], list[str]]:
    """Create a git clone at a path with two commits (tag ``v1`` on the first); return both shas."""

    def make(path: Path) -> list[str]:
        path.mkdir(parents=True)
        _run_git(path, "init", "-q", "-b", "main")
        (path / "pkg.py").write_text("def answer():\n    return 41\n")
        (path / "run.sh").write_text("#!/bin/sh\necho hi\n")
        (path / "run.sh").chmod(0o755)
        (path / ".gitignore").write_text("*.log\n")
        _run_git(path, "add", "-A")
        _run_git(path, "commit", "-q", "-m", "first")
        _run_git(path, "tag", "v1")
        first = _run_git(path, "rev-parse", "HEAD")
        (path / "pkg.py").write_text("def answer():\n    return 42\n")
        (path / "later.txt").write_text("a file only the second commit has\n")
        _run_git(path, "add", "-A")
        _run_git(path, "commit", "-q", "-m", "second")
        return [first, _run_git(path, "rev-parse", "HEAD")]

    return make
