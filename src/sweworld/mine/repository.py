"""The repository a mining run reads: its source, its mirror, its name and the steps to look at."""

from __future__ import annotations

import re
from pathlib import Path

from sweworld.core.errors import RepoError, SWEWorldError
from sweworld.mine.history import Commit, commits_by_sha, first_parent_chain
from sweworld.repos import RepoSource, RepoStore
from sweworld.repos.git import try_git
from sweworld.repos.mirror import is_complete, mirror_path, update_mirror

_OWNER_NAME = re.compile(r"[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")


def repo_name(source: RepoSource) -> str:
    """``owner/name`` of a git URL, of a local clone's ``origin``, else the directory's name."""
    location = source.location
    if source.kind == "local":
        location = try_git("config", "--get", "remote.origin.url", cwd=source.location) or location
    match = _OWNER_NAME.search(location)
    if match and (source.kind == "git" or location != source.location):
        return f"{match.group(1)}/{match.group(2)}"
    return Path(source.location).name.removesuffix(".git") or "repo"


def open_repository(text: str, repos: RepoStore, name: str | None = None) -> tuple[RepoSource, str, Path]:
    """(source, ``owner/name``, mirror) of ``--repo TEXT``; a mirror made before is fetched again so
    that new commits are seen. A path that is not a repository and a URL that cannot be cloned are
    one ``RepoError`` each."""
    source = RepoSource.parse(text)
    if source.kind == "pypi":
        raise RepoError(f"--repo {text}: a PyPI release has no history to mine",
                        hint="give a local clone, a bare mirror or a git URL")
    label = name or repo_name(source)
    existed = is_complete(mirror_path(repos.root, source))
    mirror = repos.mirror(label, source)
    if existed:
        try:
            update_mirror(repos.root, source, timeout=repos.timeout)
        except RepoError:
            pass  # offline: mine what the mirror has
    return source, label, mirror


def steps(mirror: Path, *, rev: str, since: str | None, until: str | None,
          commits: list[str] | None) -> list[Commit]:
    """The steps to screen, newest first: the commits named, or ``rev``'s first-parent chain in [since,
    until] with the pull request merges of the branches merged into it (``history``)."""
    if commits:
        found = []
        for sha in commits:
            if try_git(f"--git-dir={mirror}", "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}") is None:
                raise RepoError(f"commit {sha} is not in the repository", where=str(mirror),
                                hint="check the sha, or fetch the branch that holds it")
            found.extend(commits_by_sha(mirror, [sha]))
        return found
    if try_git(f"--git-dir={mirror}", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}") is None:
        raise RepoError(f"--rev {rev} names no commit of the repository", where=str(mirror),
                        hint="give a branch, tag or sha of it (default HEAD)")
    chain = first_parent_chain(mirror, rev, since=since, until=until)
    on_chain = {c.sha for c in chain}
    merged = [c for c in first_parent_chain(mirror, rev, since=since, until=until, pull_request_merges=True)
              if c.sha not in on_chain]
    chain = sorted(chain + merged, key=lambda c: c.committed, reverse=True)  # stable: chain order on ties
    if not chain:
        window = f"since {since or 'the start'} until {until or 'now'}"
        raise SWEWorldError(f"no commits on the first-parent chain of {rev} {window}", where=str(mirror),
                            hint="widen --since/--until (dates like 2023-01-01), or check --rev")
    return chain
