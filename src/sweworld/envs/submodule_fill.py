"""Filling a base tree's empty submodules before the instance-stage install.

For each submodule the tree lacks (``submodules.empty_submodules``), first match wins:

(a) ``mirror``: a mirror of the submodule's repository (its URL mapped to ``owner/name``: a clone at
    ``--repos-dir DIR/owner__name``, or a mirror already in the repository store) holds the gitlink
    commit. The submodule is checked out at that commit, with its own one-commit ``.git``, and
    registered in the tree's ``.git/config``: ``git submodule status`` reports it up to date, so a
    build never tries to fetch it (this is what SWE-bench's images had after their online build).
(b) ``pypi``: the path has a PyPI stand-in (``submodules.PYPI_STAND_INS``). The sdist of the highest
    release uploaded before the base commit's date (and admitting the environment's Python) is
    downloaded on the host, cached under ``$SWEWORLD_HOME/repos`` like every sdist, and its files
    are copied in without a ``.git``: git keeps the submodule uninitialised (no diff, no untracked
    files), and a build's ``git submodule update --init`` fails without touching them ("already
    exists and is not an empty directory"), after which ``ah_bootstrap`` imports the directory.
(c) ``missing``: the build log says which submodule is missing and what to do.

The decision (``plan``) reads only local state, so a built layer is found without the network; the
download happens when the layer is built (``prepare``). Filling happens inside the build sandbox,
in the layer's own copy-on-write upper: the shared base tree is never written.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from sweworld.core.errors import RepoError
from sweworld.envs.submodules import PYPI_STAND_INS, Submodule, empty_submodules, url_repo
from sweworld.repos import RepoStore, pypi_repo
from sweworld.repos.git import resolve_commit, try_git
from sweworld.repos.mirror import is_complete, mirror_path
from sweworld.repos.releases import release_as_of
from sweworld.repos.source import safe_name
from sweworld.sandbox import Dir

MOUNT = "/sweworld/submodules"


@dataclass(frozen=True)
class Fill:
    """How one empty submodule is filled: ``repo`` is the ``owner/name`` of its URL ('' when it has
    none), ``stand_in`` the PyPI project of a ``pypi`` fill."""

    submodule: Submodule
    kind: Literal["mirror", "pypi", "missing"]
    repo: str
    stand_in: str = ""

    @property
    def key(self) -> str:
        return f"{self.submodule.path}@{self.submodule.commit}={self.kind}:{self.repo}:{self.stand_in}"


@dataclass(frozen=True)
class Prepared:
    """A fill ready to run: ``content`` is the host directory copied in (None: nothing to copy)."""

    fill: Fill
    content: Path | None
    note: str


def _local_mirror(store: RepoStore, repo: str, commit: str) -> bool:
    """Whether a clone in the repos dir, or a mirror already in the store, holds ``commit``."""
    source = store.source(repo)
    path = Path(source.location) if source.kind == "local" else mirror_path(store.root, source)
    return (source.kind == "local" or is_complete(path)) and resolve_commit(path, commit) is not None


def plan(tree: Path, repo: str, store: RepoStore) -> list[Fill]:
    """How each empty submodule of ``tree`` (of repository ``repo``) will be filled; no network."""
    fills = []
    for sub in empty_submodules(tree):
        owner_name = url_repo(sub.url, repo) or ""
        if owner_name and _local_mirror(store, owner_name, sub.commit):
            fills.append(Fill(sub, "mirror", owner_name))
        elif sub.path in PYPI_STAND_INS:
            fills.append(Fill(sub, "pypi", owner_name, PYPI_STAND_INS[sub.path]))
        else:
            fills.append(Fill(sub, "missing", owner_name))
    return fills


def key_suffix(fills: list[Fill]) -> str:
    """What the fills add to the instance key ('' without any, so other keys stay as they were)."""
    return ":submodules=" + ",".join(f.key for f in fills) if fills else ""


def _commit_date(tree: Path) -> datetime:
    stamp = try_git("log", "-1", "--format=%ct", "HEAD", cwd=tree)
    return datetime.fromtimestamp(int(stamp), timezone.utc) if stamp else datetime.now(timezone.utc)


def _missing_note(fill: Fill, why: str) -> str:
    sub, repo = fill.submodule, fill.repo or "its repository"
    clone = f"--repos-dir DIR/{safe_name(fill.repo)}" if fill.repo else "--repos-dir"
    return (f"submodule {sub.path} ({sub.url or 'no url'}) at {sub.commit[:12]} is empty: {why}; builds cannot "
            f"fetch it. Put a clone of {repo} that has this commit at {clone}, or list a PyPI stand-in for "
            f"path '{sub.path}' in PYPI_STAND_INS (sweworld/envs/submodules.py), then rebuild")


def _pypi(fill: Fill, tree: Path, store: RepoStore, python: str | None) -> Prepared:
    sub, name = fill.submodule, fill.stand_in
    when = _commit_date(tree)
    release = release_as_of(name, when, python)
    how = f"the highest release uploaded before the base commit's date {when:%Y-%m-%d}"
    if release is None:  # a tree older than every release (e.g. a derived commit, dated 2000)
        release = release_as_of(name, datetime.max.replace(tzinfo=timezone.utc), python)
        how = "the highest release: none is older than the base commit"
    elif release.uploaded is None:
        how = "the highest release: the index gives no upload dates"
    if release is None:
        raise RepoError(f"the package index has no sdist release of {name}", where=f"pypi:{name}")
    _, commit = pypi_repo(name, release.version, root=store.root)
    content = store.tree(f"pypi/{name}", commit, f"pypi:{name}=={release.version}")
    return Prepared(fill, content, f"submodule {sub.path} ({sub.url}) at {sub.commit[:12]}: no mirror of "
                    f"{fill.repo or 'it'} has that commit here; filled from the PyPI sdist of "
                    f"{name}=={release.version} as a stand-in ({how}); not a git checkout, so git keeps it "
                    "uninitialised")


def _prepare(fill: Fill, tree: Path, store: RepoStore, python: str | None) -> Prepared:
    sub = fill.submodule
    if fill.kind == "mirror":
        content = store.tree(fill.repo, sub.commit)
        return Prepared(fill, content, f"submodule {sub.path} ({sub.url}) at {sub.commit[:12]}: checked out "
                        f"from the mirror of {fill.repo}")
    if fill.kind == "pypi":
        return _pypi(fill, tree, store, python)
    return Prepared(fill, None, _missing_note(fill, f"no mirror of {fill.repo or 'its URL'} has that commit"))


def prepare(fills: list[Fill], tree: Path, store: RepoStore, python: str | None = None) -> list[Prepared]:
    """Mirror checkouts and downloaded stand-ins for ``fills`` (a failure becomes a 'missing' note)."""
    prepared = []
    for fill in fills:
        try:
            prepared.append(_prepare(fill, tree, store, python))
        except RepoError as exc:
            source = f"PyPI stand-in {fill.stand_in}" if fill.kind == "pypi" else f"mirror of {fill.repo}"
            why = f"its {source} failed: {exc.message.splitlines()[0]}"
            prepared.append(Prepared(Fill(fill.submodule, "missing", fill.repo), None, _missing_note(fill, why)))
    return prepared


def mounts(prepared: list[Prepared]) -> dict[str, Dir]:
    """The contents to copy in, read-only at ``MOUNT/<n>`` in the build sandbox."""
    return {f"{MOUNT}/{n}": Dir(p.content) for n, p in enumerate(prepared) if p.content is not None}


def script_lines(prepared: list[Prepared]) -> list[str]:
    """Instance-stage lines (run in /testbed before ``pre_install``) that fill the submodules."""
    lines: list[str] = []
    for n, p in enumerate(prepared):
        sub, path = p.fill.submodule, shlex.quote(p.fill.submodule.path)
        lines.append(f"echo {shlex.quote('sweworld: ' + p.note)}" + (" >&2" if p.content is None else ""))
        if p.content is None:
            continue
        lines.append(f"mkdir -p {path} && cp -a {MOUNT}/{n}/. {path}/")
        if p.fill.kind == "mirror":
            lines += [f"git config {shlex.quote(f'submodule.{sub.name}.url')} {shlex.quote(sub.url)}",
                      f"git config {shlex.quote(f'submodule.{sub.name}.active')} true"]
        else:
            lines.append(f"rm -rf {path}/.git")
    return lines
