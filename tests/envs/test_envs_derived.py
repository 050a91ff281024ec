"""Which commit pairs may share an install layer (derived layers, see sweworld.envs.derived)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sweworld.envs.derived import changed_sources


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}).stdout.strip()


def _commit(repo: Path, files: dict[str, str | None]) -> str:
    for path, text in files.items():
        if text is None:
            (repo / path).unlink()
        else:
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "c", "--allow-empty")
    return _git(repo, "rev-parse", "HEAD")


def test_only_modified_python_sources_are_derivable(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    base = _commit(repo, {"pkg/a.py": "x = 1\n", "pkg/b.py": "y = 1\n", "setup.py": "", "README": "r\n"})
    git_dir = repo / ".git"
    assert changed_sources(git_dir, base, _commit(repo, {"pkg/a.py": "x = 2\n"})) == ["pkg/a.py"]
    two = _commit(repo, {"pkg/a.py": "x = 3\n", "pkg/b.py": "y = 3\n"})
    assert changed_sources(git_dir, base, two) == ["pkg/a.py", "pkg/b.py"]
    assert changed_sources(git_dir, two, _commit(repo, {"setup.py": "# changed\n"})) is None
    assert changed_sources(git_dir, two, _commit(repo, {"README": "changed\n"})) is None
    assert changed_sources(git_dir, two, _commit(repo, {"pkg/new.py": "z = 1\n"})) is None
    assert changed_sources(git_dir, two, _commit(repo, {"pkg/b.py": None})) is None
    head = _git(repo, "rev-parse", "HEAD")
    assert changed_sources(git_dir, head, head) is None
    assert changed_sources(git_dir, head, "0" * 40) is None
