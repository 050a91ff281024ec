"""Derived commits: a synthesized instance's buggy ``base_commit`` rebuilt from its release.

Synthesized instances (``patch`` = the fix) live on top of a release commit (their
``environment_setup_commit``) that any machine can rebuild from PyPI. Their base commit is that
release with the fix reversed, committed deterministically (see ``commit.py``) with the message
``derived_message(instance_id)``; so a fresh machine recreates exactly the same sha and checks it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from sweworld.core.errors import RepoError
from sweworld.repos.commit import keep, write_commit
from sweworld.repos.git import git, resolve_commit


def derived_message(instance_id: str) -> str:
    return f"sweworld: {instance_id}"


def derive_commit(mirror: Path, parent: str, fix_patch: str, message: str) -> str:
    """``parent`` with ``fix_patch`` applied in reverse, committed deterministically; returns the sha."""
    with tempfile.TemporaryDirectory(prefix="sweworld-derive-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        patch_file = Path(tmp) / "fix.diff"
        patch_file.write_text(fix_patch if fix_patch.endswith("\n") else fix_patch + "\n", encoding="utf-8")
        git(f"--git-dir={mirror}", "read-tree", parent, env=env, what=str(mirror))
        git(f"--git-dir={mirror}", "apply", "--cached", "-R", str(patch_file), env=env, what=str(mirror))
        tree = git(f"--git-dir={mirror}", "write-tree", env=env, what=str(mirror))
    commit = write_commit(mirror, tree, [parent], message)
    keep(mirror, commit)
    return commit


def ensure_derived(mirror: Path, *, instance_id: str, base_commit: str, parent: str, fix_patch: str) -> bool:
    """Recreate ``base_commit`` in ``mirror`` when it is missing; True when it exists afterwards."""
    if resolve_commit(mirror, base_commit):
        return True
    if not (parent and fix_patch.strip() and resolve_commit(mirror, parent)):
        return False
    try:
        made = derive_commit(mirror, parent, fix_patch, derived_message(instance_id))
    except RepoError:
        return False
    return made.startswith(base_commit)
