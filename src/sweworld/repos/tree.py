"""Base trees: a working tree at one commit whose ``.git`` holds that commit only.

``build_tree(mirror, sha, dest)``: ``git init``, ``git fetch --depth 1 <mirror> <sha>`` (upload-pack
told to accept any sha), ``git checkout --detach <sha>``. The result has no remote, no branch, no
``FETCH_HEAD``, no alternates (objects are copied by the fetch, so the tree can be mounted at
``/testbed`` anywhere) and no commit other than ``sha`` (``.git/shallow`` records the cut), so future
commits cannot leak to an agent. ``.git/sweworld-complete`` marks a finished tree; it lives inside
``.git`` so the worktree stays clean.
"""

from __future__ import annotations

from pathlib import Path

from sweworld.errors import RepoError
from sweworld.repos.commit import RAW_ATTRIBUTES, commit_env
from sweworld.repos.git import UPLOAD_PACK, git

MARKER = "sweworld-complete"


def is_complete(tree: Path) -> bool:
    """True when ``tree`` was fully built."""
    return (tree / ".git" / MARKER).is_file()


def build_tree(mirror: Path, sha: str, dest: Path, *, what: str = "", raw_attributes: bool = False) -> None:
    """Materialise commit ``sha`` of ``mirror`` into the empty directory ``dest``.

    ``raw_attributes``: check files out byte for byte, ignoring in-tree ``.gitattributes`` (as
    ``pypi_repo`` committed them), via ``.git/info/attributes``.
    """
    where = what or sha
    git("init", "--quiet", "--template=", dest, what=where)
    if raw_attributes:
        (dest / ".git" / "info").mkdir(exist_ok=True)
        (dest / ".git" / "info" / "attributes").write_text(RAW_ATTRIBUTES)
    run = (f"--git-dir={dest / '.git'}", f"--work-tree={dest}")
    git(*run, "fetch", "--quiet", "--depth", "1", "--no-tags", "--no-write-fetch-head",
        f"--upload-pack={UPLOAD_PACK}", str(mirror), sha, cwd=dest, what=where)
    git(*run, "checkout", "--quiet", "--detach", sha, cwd=dest, env=commit_env(), what=where)
    git(*run, "config", "core.autocrlf", "false", cwd=dest, what=where)
    head = git(*run, "rev-parse", "HEAD", cwd=dest, what=where)
    if head != sha:
        raise RepoError(f"checkout of {sha} gave HEAD {head}", where=where)
    git(*run, "update-index", "-q", "--refresh", cwd=dest, what=where)
    (dest / ".git" / MARKER).write_text(sha + "\n")
