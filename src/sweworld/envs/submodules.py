"""Git submodules a base tree lacks, and the table of PyPI releases that stand in for them.

Base trees are exported from a mirror without submodule contents: a gitlink's directory is empty.
SWE-bench's images fetched such submodules from GitHub at build time (old astropy's
``ah_bootstrap.py`` runs ``git submodule update --init astropy_helpers`` from ``setup.py``);
builds here cannot reach GitHub. ``submodule_fill.py`` fills them before the instance-stage
install, from a mirror of the submodule's repository, else from the PyPI stand-in listed here.

| submodule path    | PyPI stand-in     | release                                                      |
| ----------------- | ----------------- | ------------------------------------------------------------ |
| ``astropy_helpers`` | ``astropy-helpers`` | the highest release uploaded before the base commit's date |
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from sweworld.repos.git import try_git

PYPI_STAND_INS: dict[str, str] = {"astropy_helpers": "astropy-helpers"}
"""Submodule path -> PyPI project whose sdist stands in for it when no mirror has the commit."""


@dataclass(frozen=True)
class Submodule:
    """A gitlink of the tree, as ``.gitmodules`` describes it."""

    name: str
    path: str
    url: str
    commit: str


def _gitmodules(tree: Path) -> dict[str, dict[str, str]]:
    """``.gitmodules`` as {name: {"path": ..., "url": ...}} (read by git itself)."""
    out = try_git("config", "--file", str(tree / ".gitmodules"), "--null", "--get-regexp",
                  r"^submodule\..*\.(path|url)$", cwd=tree) or ""
    modules: dict[str, dict[str, str]] = {}
    for record in filter(None, out.split("\0")):
        key, _, value = record.partition("\n")
        name, _, field = key[len("submodule."):].rpartition(".")
        modules.setdefault(name, {})[field] = value
    return modules


def _gitlinks(tree: Path) -> dict[str, str]:
    """Path -> commit of every gitlink in the tree's HEAD."""
    out = try_git("ls-tree", "-r", "-z", "--full-tree", "HEAD", cwd=tree) or ""
    links: dict[str, str] = {}
    for record in filter(None, out.split("\0")):
        meta, _, path = record.partition("\t")
        mode, kind, sha = meta.split()
        if mode == "160000" and kind == "commit":
            links[path] = sha
    return links


def _is_empty(path: Path) -> bool:
    return not path.is_dir() or not any(path.iterdir())


def empty_submodules(tree: Path) -> list[Submodule]:
    """The submodules of ``tree`` whose directory is missing or empty, in path order."""
    if not (tree / ".gitmodules").is_file():
        return []
    links = _gitlinks(tree)
    found = [Submodule(name, entry["path"], entry.get("url", ""), links[entry["path"]])
             for name, entry in _gitmodules(tree).items()
             if entry.get("path") in links and _is_empty(tree / entry["path"])]
    return sorted(found, key=lambda s: s.path)


def url_repo(url: str, superproject: str) -> str | None:
    """``owner/name`` of a submodule URL (``https://github.com/astropy/astropy-helpers.git``,
    ``git@github.com:o/n``, or ``../n.git`` relative to the superproject ``owner/name``)."""
    url = url.strip().rstrip("/")
    if url.startswith(("./", "../")):
        url = posixpath.normpath(posixpath.join(superproject.strip("/"), url))
    parts = [p for p in re.split(r"[/:]", re.sub(r"\.git$", "", url)) if p]
    if len(parts) < 2 or ".." in parts[-2:]:
        return None
    return f"{parts[-2]}/{parts[-1]}"
