"""Base trees: a working tree at one commit whose ``.git`` holds that commit only.

``build_tree(mirror, sha, dest, share_with=())`` fills an empty directory: what ``git init`` makes;
the objects of ``sha`` (its commit, trees and blobs, as loose object files) and nothing else;
``.git/shallow`` recording the cut; a detached ``HEAD`` at ``sha``; then the worktree, by ``git
read-tree --reset -u``. The result has no remote, no branch, no ``FETCH_HEAD``, no alternates (the
tree can be mounted at ``/testbed`` anywhere) and no commit other than ``sha``, so future commits
cannot leak to an agent.

``share_with``: finished trees of the same repository; what the chosen one (the donor) has in
common with ``sha``, files and objects, is hard-linked instead of written (see ``share.py``);
without one, everything comes from the mirror. Either way the config says ``core.trustctime=false``
(linking changes a shared file's ctime, which must not make an index stale) and ``gc.auto=0`` (git
in an episode never repacks the loose objects into the episode's upper layer).
``.git/sweworld-complete`` marks a finished tree; it lives inside ``.git`` so the worktree stays
clean.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from sweworld.repos import share
from sweworld.repos.commit import AUTHOR_EMAIL, AUTHOR_NAME, FIXED_DATE, RAW_ATTRIBUTES
from sweworld.repos.git import git

MARKER = "sweworld-complete"
FIXED_EPOCH = int(datetime.strptime(FIXED_DATE, "%Y-%m-%dT%H:%M:%S%z").timestamp())
CONFIG = ("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
          "\tlogallrefupdates = true\n\tautocrlf = false\n\ttrustctime = false\n[gc]\n\tauto = 0\n")


def is_complete(tree: Path) -> bool:
    """True when ``tree`` was fully built."""
    return (tree / ".git" / MARKER).is_file()


def init(dest: Path, sha: str, *, raw_attributes: bool) -> Path:
    """What ``git init --template=`` makes in ``dest`` (with the config above), ``HEAD`` detached at
    ``sha`` with the reflog line ``git checkout --detach`` writes (``commit.py``'s identity and date);
    returns the git directory."""
    git_dir = dest / ".git"
    for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "logs"):
        (git_dir / sub).mkdir(parents=True)
    (git_dir / "config").write_text(CONFIG)
    (git_dir / "HEAD").write_text(sha + "\n")
    who = f"{AUTHOR_NAME} <{AUTHOR_EMAIL}> {FIXED_EPOCH} +0000"
    (git_dir / "logs" / "HEAD").write_text(f"{'0' * 40} {sha} {who}\tcheckout: moving from main to {sha}\n")
    if raw_attributes:
        (git_dir / "info").mkdir()
        (git_dir / "info" / "attributes").write_text(RAW_ATTRIBUTES)
    return git_dir


def build_tree(mirror: Path, sha: str, dest: Path, *, what: str = "", raw_attributes: bool = False,
               share_with: Iterable[Path] = ()) -> None:
    """Materialise commit ``sha`` of ``mirror`` into the empty directory ``dest``.

    ``raw_attributes``: check files out byte for byte, ignoring in-tree ``.gitattributes`` (as
    ``pypi_repo`` committed them), via ``.git/info/attributes``. ``share_with``: finished trees of the
    same repository to share files with (``share.plan`` chooses the donor among them).
    """
    where = what or sha
    git_dir = init(dest, sha, raw_attributes=raw_attributes)
    plan = share.plan(mirror, sha, share_with, what=where)
    if plan.parents:
        (git_dir / "shallow").write_text(sha + "\n")
    listing = share.entries(mirror, sha, what=where)
    objects = [sha, plan.root, *(e.oid for e in listing if e.kind != "commit")]
    missing = (share.link_objects(plan.donor / ".git" / "objects", git_dir / "objects", objects)
               if plan.donor is not None else objects)
    share.copy_objects(mirror, missing, git_dir, what=where)
    run = (f"--git-dir={git_dir}", f"--work-tree={dest}")
    if share.same_attributes(plan, dest):
        share.link_worktree(plan, listing, dest)
    git(*run, "read-tree", "--reset", "-u", sha, cwd=dest, what=where)
    git(*run, "update-index", "-q", "--refresh", cwd=dest, what=where)
    (git_dir / share.SHARED).write_text("loose objects, core.trustctime=false\n")
    (git_dir / MARKER).write_text(sha + "\n")
