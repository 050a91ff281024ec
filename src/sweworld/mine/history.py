"""Candidate commits from a repository's history: the first-parent chain of a branch.

Every commit on the first-parent chain is one step of the branch: a direct commit, a squash merge,
or a merge commit (whose change is its diff against the first parent, the state of the branch
before the merge). Commits reached only through a merge's second parent are not candidates: what
they changed arrives on the branch as that merge; except pull request merges ("Merge pull request
#N"), wherever they are: a fix merged into a maintenance branch (flask's ``2.0.x``, sphinx's ``3.x``)
reaches the default branch only through a later merge of that whole branch, so its own merge commit
is the step (``steps`` adds them; the branch merges are then skipped: ``rules``). One ``git log`` call
lists the steps with the files each changes (``--numstat``, renames off, so a rename is a delete plus
an add, the way the patch is written).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sweworld.core.errors import RepoError
from sweworld.repos.git import CORE_FLAGS, git, git_env, run_cmd

_RECORD = "\x1e"
_FIELD = "\x00"
_FORMAT = "%x1e" + "%x00".join(("%H", "%P", "%cI", "%aI", "%B")) + "%x00"  # git writes the separators


@dataclass(frozen=True)
class FileChange:
    """One file of a step: lines added and removed (``None`` for a binary file)."""

    path: str
    added: int | None
    removed: int | None

    @property
    def binary(self) -> bool:
        return self.added is None

    @property
    def lines(self) -> int:
        return (self.added or 0) + (self.removed or 0)


@dataclass(frozen=True)
class Commit:
    """A step of the first-parent chain."""

    sha: str
    parents: tuple[str, ...]
    committed: str
    authored: str
    message: str
    files: tuple[FileChange, ...] = field(default=())

    @property
    def first_parent(self) -> str | None:
        return self.parents[0] if self.parents else None

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    @property
    def subject(self) -> str:
        return self.message.strip().splitlines()[0] if self.message.strip() else ""


def _numstat(lines: list[str]) -> tuple[FileChange, ...]:
    out = []
    for line in lines:
        parts = line.split("\t", 2)
        if len(parts) != 3:
            continue
        added, removed, path = parts
        out.append(FileChange(path, None if added == "-" else int(added), None if removed == "-" else int(removed)))
    return tuple(out)


PULL_REQUEST_MERGE = "^Merge pull request #[0-9]"


def first_parent_chain(mirror: Path, rev: str = "HEAD", *, since: str | None = None,
                       until: str | None = None, max_count: int | None = None,
                       pull_request_merges: bool = False) -> list[Commit]:
    """The steps of ``rev``'s first-parent chain, newest first, committed in [since, until]; with
    ``pull_request_merges``, instead every pull request's merge commit reachable from ``rev`` (those
    of maintenance branches merged in later included)."""
    walk = ["--merges", f"--grep={PULL_REQUEST_MERGE}"] if pull_request_merges else ["--first-parent"]
    args = ["log", *walk, "--diff-merges=first-parent", "--no-renames", "--numstat", f"--format={_FORMAT}"]
    if max_count:
        args.append(f"--max-count={max_count}")
    if since:
        args.append(f"--since={since}")
    if until:
        args.append(f"--until={until}")
    text = git(f"--git-dir={mirror}", *args, rev, "--", what=f"history of {rev}")
    commits = []
    for record in text.split(_RECORD):
        if not record.strip():
            continue
        parts = record.split(_FIELD)
        if len(parts) < 6:
            raise RepoError(f"unexpected git log record in {mirror}: {record[:200]!r}")
        sha, parents, committed, authored, message, rest = parts[:6]
        commits.append(Commit(sha=sha, parents=tuple(parents.split()), committed=committed, authored=authored,
                              message=message.strip(), files=_numstat(rest.strip().splitlines())))
    return commits


def commits_by_sha(mirror: Path, shas: list[str]) -> list[Commit]:
    """The given commits (each one step, diffed against its first parent), in the order given."""
    return [c for sha in shas for c in first_parent_chain(mirror, sha, max_count=1)]


def step_diff(mirror: Path, commit: Commit) -> str:
    """The whole change of ``commit`` against its first parent, as a git patch (renames off)."""
    if commit.first_parent is None:
        raise RepoError(f"commit {commit.sha} has no parent to diff against")
    argv = ["git", *CORE_FLAGS, f"--git-dir={mirror}", "diff", "--no-color", "--no-ext-diff", "--no-textconv",
            "--no-renames", commit.first_parent, commit.sha, "--"]
    # not git(): it strips the output, and a patch may end in a context line that is one space
    return run_cmd(argv, env=git_env(), what=f"diff of {commit.sha}").decode("utf-8", "replace")


MAX_MERGED_MESSAGES = 10


def step_message(mirror: Path, commit: Commit) -> str:
    """The message of a step: a merge's own message, then those of the commits it brings (a pull
    request's commits carry its details and ``Fixes #N``), at most ``MAX_MERGED_MESSAGES`` of them."""
    if not commit.is_merge:
        return commit.message
    text = git(f"--git-dir={mirror}", "log", "--no-merges", f"--max-count={MAX_MERGED_MESSAGES}", "--format=%B%x00",
               f"{commit.first_parent}..{commit.sha}", what=f"messages merged by {commit.sha}")
    merged = [m.strip() for m in text.split("\x00") if m.strip() and m.strip() not in commit.message]
    return "\n\n".join([commit.message, *merged])
