"""Sharing between base trees of one repository: hard links to a finished tree's files.

Base trees are read-only caches: episodes mount them as overlay lowers or copy them, git replaces a
file by unlink + create and never rewrites one in place, and ``sweworld env gc`` unlinks. So a tree
of a further commit hard-links what it has in common with a finished tree of the same repository
(the *donor*) instead of writing it:

- object files: each loose object of the new commit that the donor holds (an id names its bytes);
  the others are packed from the mirror (``pack-objects``) and unpacked as loose objects. Nothing
  else of the donor is linked, so a tree still holds its own commit's objects only;
- worktree files: each path whose blob and mode the donor's commit has too, with the donor's index
  copied so that their stat data is known; ``git read-tree --reset -u`` then writes the files that
  changed. Skipped when a ``.gitattributes`` (or ``info/attributes``) differs, as a blob may then
  check out differently.

Removing a tree unlinks its names: a file shared with another tree lives on there. A donor removed
while a tree is built from it costs sharing only: what fails to link comes from the mirror or from
``read-tree`` (which rewrites any file whose stat data does not match). Linking changes a shared
file's ctime, so trees say ``core.trustctime=false``; only trees built that way
(``.git/sweworld-shared``) lend files. The donor: of the finished trees nearest in commit date,
the one whose commit differs from the new one in the fewest files.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sweworld.core.errors import RepoError
from sweworld.repos.git import CORE_FLAGS, SHA_RE, git, git_env, tail

SHARED = "sweworld-shared"
NEAREST = 8  # finished trees nearest in date whose differences are counted to choose the donor


@dataclass(frozen=True)
class Entry:
    """One line of ``git ls-tree -r -t``: ``kind`` is blob, tree or commit (a submodule)."""

    mode: str
    kind: str
    oid: str
    path: str


@dataclass(frozen=True)
class Plan:
    """What a tree of ``sha`` is built from: its root tree and parents, and the donor (if any) with
    the paths where the donor's commit differs."""

    sha: str
    root: str
    parents: tuple[str, ...]
    donor: Path | None = None
    changed: frozenset[str] = frozenset()


def _reading(mirror: Path) -> tuple[str, str]:
    """Options for reading ``mirror`` as it is: a replace ref in it must not change what a tree holds."""
    return "--no-replace-objects", f"--git-dir={mirror}"


def is_shared(tree: Path) -> bool:
    """True when ``tree`` is finished and may lend its files (loose objects, ``core.trustctime=false``)."""
    return (tree / ".git" / SHARED).is_file() and (tree / ".git" / "sweworld-complete").is_file()


def plan(mirror: Path, sha: str, trees: Iterable[Path] = (), *, what: str = "") -> Plan:
    """The plan for commit ``sha`` of ``mirror``, its donor chosen among ``trees`` (named by their commit)."""
    candidates = {t.name: t for t in trees if t.name != sha and SHA_RE.match(t.name) and is_shared(t)}
    out = git(*_reading(mirror), "log", "--no-walk", "--ignore-missing", "--stdin",
              "--format=%H %ct %T %P", input="\n".join([sha, *candidates]).encode(), what=what or str(mirror))
    lines = (line.split() for line in out.splitlines())
    commits = {fields[0]: fields[1:] for fields in lines if len(fields) >= 3}
    if sha not in commits:
        raise RepoError(f"commit {sha} not found in {mirror}", where=what or None)
    date, root, *parents = commits[sha]
    base = Plan(sha, root, tuple(parents))
    nearest = sorted((name for name in candidates if name in commits),
                     key=lambda name: (abs(int(commits[name][0]) - int(date)), name))[:NEAREST]
    if not nearest:
        return base
    try:
        diffs = _changed_paths(mirror, sha, nearest)
    except RepoError:
        return base
    best = min(nearest, key=lambda name: len(diffs[name]))
    return Plan(sha, root, tuple(parents), candidates[best], frozenset(diffs[best]))


def _changed_paths(mirror: Path, sha: str, others: list[str]) -> dict[str, list[str]]:
    """For each commit of ``others``, the paths where it differs from ``sha`` (one ``diff-tree``: a
    header per input line, in order, then a meta and a path token per changed file)."""
    out = git(*_reading(mirror), "diff-tree", "--stdin", "--always", "-r", "-z", "--no-renames",
              input="".join(f"{sha} {other}\n" for other in others).encode(), what=str(mirror))
    groups: list[list[str]] = []
    tokens = iter(out.split("\0"))
    for token in tokens:
        if token.startswith(":"):
            groups[-1].append(next(tokens, ""))
        elif token.strip():
            groups.append([])
    if len(groups) != len(others):
        raise RepoError(f"diff-tree gave {len(groups)} diffs for {len(others)} commits", where=str(mirror))
    return dict(zip(others, groups, strict=True))


def entries(mirror: Path, sha: str, *, what: str = "") -> list[Entry]:
    """Every tree, blob and submodule under commit ``sha``, parents before children."""
    out = git(*_reading(mirror), "ls-tree", "-r", "-t", "-z", sha, what=what)
    found = []
    for line in out.split("\0"):
        meta, _, path = line.partition("\t")
        fields = meta.split(" ")
        if path and len(fields) == 3:
            found.append(Entry(fields[0], fields[1], fields[2], path))
    return found


def _link(source: str, dest: str) -> bool:
    """Hard-link ``source`` (a symlink itself, not its target) at ``dest``; False when it cannot."""
    try:
        os.link(source, dest, follow_symlinks=False)
    except FileExistsError:
        return True
    except OSError:
        return False
    return True


def link_objects(source: Path, dest: Path, ids: list[str]) -> list[str]:
    """Hard-link the loose objects ``ids`` from the objects directory ``source`` into ``dest``; return
    the ids that could not be linked (not there, or the donor went meanwhile)."""
    missing = []
    for fan in sorted({oid[:2] for oid in ids}):
        (dest / fan).mkdir(exist_ok=True)
    for oid in sorted(set(ids)):  # in id order: one fan-out directory after the other
        name = f"{oid[:2]}/{oid[2:]}"
        if not _link(f"{source}/{name}", f"{dest}/{name}"):
            missing.append(oid)
    return missing


def copy_objects(mirror: Path, ids: list[str], git_dir: Path, *, what: str = "") -> None:
    """Write the objects ``ids`` of ``mirror`` into the repository ``git_dir`` as loose objects: one
    ``git pack-objects`` of exactly those ids (no delta search) piped into ``git unpack-objects``,
    which writes each one read-only, zlib level 1, as git writes loose objects."""
    if not ids:
        return
    wanted = "".join(f"{oid}\n" for oid in sorted(set(ids))).encode()
    env = git_env()
    pack = subprocess.Popen(["git", *CORE_FLAGS, *_reading(mirror), "pack-objects", "--stdout", "-q",
                             "--window=0", "--depth=0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    unpack = subprocess.Popen(["git", *CORE_FLAGS, f"--git-dir={git_dir}", "unpack-objects", "-q"],
                              stdin=pack.stdout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert pack.stdin and pack.stdout
    pack.stdout.close()  # unpack-objects holds the read end
    with contextlib.suppress(BrokenPipeError):
        pack.stdin.write(wanted)
    pack.stdin.close()
    _, err = unpack.communicate()
    if pack.wait() != 0 or unpack.returncode != 0:
        checked = git(*_reading(mirror), "cat-file", "--batch-check", input=wanted, what=what)
        missing = [line.split()[0] for line in checked.splitlines() if line.endswith(" missing")]
        if missing:
            raise RepoError(f"object {missing[0]} is missing from {mirror}"
                            + (f" ({len(missing) - 1} more)" if len(missing) > 1 else ""), where=what or None)
        raise RepoError(f"copying {len(ids)} objects from {mirror} failed: {tail(err.decode(errors='replace'))}",
                        where=what or None)


def same_attributes(plan: Plan, dest: Path) -> bool:
    """True when the donor's files check out as ``plan.sha``'s would: no ``.gitattributes`` differs
    between the two commits, nor ``info/attributes`` between the two trees."""
    def info(tree: Path) -> str | None:
        with contextlib.suppress(OSError):
            return (tree / ".git" / "info" / "attributes").read_text()
        return None
    return (plan.donor is not None and info(plan.donor) == info(dest)
            and not any(path.rsplit("/", 1)[-1] == ".gitattributes" for path in plan.changed))


def link_worktree(plan: Plan, listing: list[Entry], dest: Path) -> None:
    """Copy the donor's index and hard-link each of its files that ``plan.sha`` has unchanged into
    ``dest`` (directories made as listed); what fails is left to ``read-tree``."""
    donor = plan.donor
    if donor is None:
        return
    index = dest / ".git" / "index"
    try:
        shutil.copyfile(donor / ".git" / "index", index)
    except OSError:
        index.unlink(missing_ok=True)
        return
    for entry in listing:  # parents come first
        if entry.kind != "blob":  # a directory, or a submodule's empty one
            (dest / entry.path).mkdir()
        elif entry.path not in plan.changed:
            _link(f"{donor}/{entry.path}", f"{dest}/{entry.path}")
