"""Cached bare mirrors of git sources under ``$SWEWORLD_HOME/repos/mirrors/<name>-<hash>.git``.

A URL is cloned with ``git clone --mirror``. A local clone (``--repos-dir``, or a local directory in
``repo_source``) is mirrored the same way from its path: git then hard-links the clone's object
files when both live on one file system (else copies them). The user's clone is only read, never
written: object files are immutable, and everything sweworld writes later (``commit_tree_changes``,
fetch updates) goes into the mirror. Mirrors are built under a file lock in a temporary directory
and renamed into place; a ``sweworld-complete`` file inside the bare repository marks a finished one.

Cloning and fetching keep the user's git config (credentials, proxies, ``url.insteadOf``,
``safe.directory`` for clones owned by someone else); only inherited ``GIT_*`` variables are dropped.
A mirror holds objects and refs only, so nothing in it depends on that config.

When a commit is missing from an existing mirror, the mirror is fetched once (no pruning, so refs
sweworld added survive) before giving up.
"""

from __future__ import annotations

from pathlib import Path

from sweworld.core.errors import RepoError
from sweworld.repos.cache import area, locked, publish, staging
from sweworld.repos.git import git, resolve_commit
from sweworld.repos.source import RepoSource

MARKER = "sweworld-complete"


def mirror_path(root: Path, source: RepoSource) -> Path:
    """Where the mirror of ``source`` lives under the repos cache ``root``."""
    return area(root, "mirrors") / f"{source.mirror_name()}.git"


def is_complete(mirror: Path) -> bool:
    """True when ``mirror`` was fully built."""
    return (mirror / MARKER).is_file()


def ensure_mirror(root: Path, source: RepoSource, *, timeout: float | None = None) -> Path:
    """The mirror of git or local ``source``, cloned on first use. Clone failures raise ``RepoError``."""
    if source.kind == "pypi":
        raise RepoError("pypi sources have no git mirror to clone; use pypi_repo()", where=source.describe())
    final = mirror_path(root, source)
    if is_complete(final):
        return final
    with locked(root, f"mirror-{final.name}"):
        if is_complete(final):
            return final
        with staging(final) as tmp:
            git("-c", "clone.defaultRemoteName=origin", "clone", "--mirror", "--quiet", "--", source.location,
                tmp, hermetic=False, what=source.describe(), timeout=timeout)
            (tmp / MARKER).write_text(source.location + "\n")
            publish(tmp, final)
    return final


def update_mirror(root: Path, source: RepoSource, *, timeout: float | None = None) -> None:
    """Fetch new refs and commits into the existing mirror of ``source`` (refs are never pruned)."""
    final = mirror_path(root, source)
    with locked(root, f"mirror-{final.name}"):
        git(f"--git-dir={final}", "fetch", "--quiet", "--no-prune", "--tags", "origin",
            hermetic=False, what=source.describe(), timeout=timeout)


def resolve_in_mirror(root: Path, source: RepoSource, mirror: Path, rev: str, *,
                      timeout: float | None = None) -> str | None:
    """The full sha of ``rev`` in ``mirror``, fetching once when it is missing; ``None`` if still missing."""
    sha = resolve_commit(mirror, rev)
    if sha is not None or source.kind == "pypi":
        return sha
    try:
        update_mirror(root, source, timeout=timeout)
    except RepoError:
        return None
    return resolve_commit(mirror, rev)
