"""Candidates of one release line share an environment only while their lock files are the same
(``mine.envgroups``): a real history whose uv.lock changes between two fixes gets two environment
commits; one without a lock file keeps one environment for the line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

PYPROJECT = '[project]\nname = "demo"\nversion = "1.0"\nrequires-python = ">=3.9"\n'


def _commit(root: Path, message: str, files: dict[str, str], day: int) -> str:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    stamp = f"2024-03-{day:02d}T12:00:00+00:00"
    env = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_NAME": "d", "GIT_AUTHOR_EMAIL": "d@d",
           "GIT_COMMITTER_NAME": "d", "GIT_COMMITTER_EMAIL": "d@d", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", message], cwd=root, check=True, env=env)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def _history(root: Path, lock: bool) -> None:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    first = {"pyproject.toml": PYPROJECT, "demo/__init__.py": "def one():\n    return 0\n"}
    _commit(root, "Start", {**first, **({"uv.lock": "version = 1\n# pytest 8.0\n"} if lock else {})}, 1)
    _commit(root, "Fix one() (#1)", {"demo/__init__.py": "def one():\n    return 1  # fixed\n",
                                     "tests/test_one.py": "from demo import one\n\n\ndef test_one():\n    assert one() == 1\n"}, 2)
    if lock:
        _commit(root, "Bump pytest in the lock", {"uv.lock": "version = 1\n# pytest 9.1\n"}, 3)
    _commit(root, "Fix two() (#2)", {"demo/__init__.py": "def one():\n    return 1  # fixed\n\n\ndef two():\n    return 2\n",
                                     "tests/test_two.py": "from demo import two\n\n\ndef test_two():\n    assert two() == 2\n"}, 4)


@pytest.mark.parametrize("lock, environments", [(True, 2), (False, 1)])
def test_a_lock_change_inside_a_release_line_splits_its_environment(tmp_path, lock, environments):
    from sweworld.mine.candidates import screen
    from sweworld.mine.repository import open_repository, steps
    from sweworld.mine.rules import Limits
    from sweworld.repos import RepoStore

    _history(tmp_path / "history", lock)
    repos = RepoStore(root=tmp_path / "repos")
    source, label, mirror = open_repository(str(tmp_path / "history"), repos, "demo/demo")
    screened = screen(steps(mirror, rev="HEAD", since=None, until=None, commits=None), mirror=mirror, repo=label,
                      source=source.describe(), limits=Limits(), tree_of=lambda sha: repos.tree(label, sha, source),
                      available_pythons=["3.11"])
    assert [c.task.version for c in screened.candidates] == ["1.0", "1.0"]
    env_commits = {c.task.environment_setup_commit for c in screened.candidates}
    assert len(env_commits) == len(screened.versions) == environments
    assert env_commits == ({c.task.base_commit for c in screened.candidates} if lock else env_commits)
    if lock:
        assert all(name.startswith("1.0 (locks ") for name in screened.versions)
    else:
        assert list(screened.versions) == ["1.0"]
