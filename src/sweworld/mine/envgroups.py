"""Which candidates share an environment: those of one release line whose lock files are the same.

A release line (``version``) shares one environment, built at its newest candidate's base commit, as
SWE-bench's rows do. But a repository that locks its dependencies (``uv.lock``, ``poetry.lock``,
``package-lock.json``, ``go.sum``, ``Cargo.lock``...) changes them inside a release line: a test
suite written against one pytest, or one jest, fails under the next. So the candidates of a line are
grouped by the blobs of the lock files at their base commits: one environment per group, one group
per line when the repository locks nothing (as before).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from sweworld.repos.git import try_git

LOCK_FILES = ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "package-lock.json", "npm-shrinkwrap.json",
              "yarn.lock", "pnpm-lock.yaml", "go.sum", "Cargo.lock")
"""Lock files at the root of a tree, of every language mined."""


def lock_state(mirror: Path, sha: str) -> str:
    """A short digest of the lock files' blobs at ``sha``; "" when it has none."""
    listed = try_git("ls-tree", sha, "--", *LOCK_FILES, cwd=mirror) or ""
    lines = sorted(line for line in listed.splitlines() if line.strip())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:8] if lines else ""


def group_name(version: str, state: str) -> str:
    """The key of an environment group: the release line, and its locks' digest when it has any."""
    return f"{version} (locks {state})" if state else version
