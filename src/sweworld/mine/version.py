"""The ``version`` of a commit, filled the way SWE-bench fills it: the release line (``X.Y``) that the
tree at that commit says it is.

Read, first found wins: a version literal in the package's own files (``__init__.py``,
``version.py``, ``_version.py``, ``__version__.py``, ``__pkginfo__.py`` at most three levels deep:
``pkg/``, ``src/pkg/``), then ``pyproject.toml``/``setup.cfg``/``setup.py``, then the nearest tag
(``git describe --tags``: projects whose version comes from setuptools_scm). A repository with
install specs for known release lines (swebench's, SWE-Gym's) snaps to the newest known line not
after the one read (SWE-bench's own rows do the same: xarray 0.15 commits are version "0.12").
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from packaging.version import InvalidVersion, Version

from sweworld.repos.git import try_git

VERSION_FILES = frozenset({"__init__.py", "version.py", "_version.py", "__version__.py", "__pkginfo__.py"})
_LITERAL = re.compile(r"""^\s*(?:__version__|version|VERSION)\s*(?::\s*str\s*)?=\s*['"]v?(\d+)\.(\d+)""", re.M)
_TUPLE = re.compile(r"^\s*(?:numversion|version_info|__version_info__)\s*=\s*\(\s*(\d+)\s*,\s*(\d+)", re.M)
_SETUP = re.compile(r"""\bversion\s*=\s*['"]v?(\d+)\.(\d+)""")
_TAG = re.compile(r"(\d+)\.(\d+)")


def _show(mirror: Path, sha: str, path: str) -> str:
    return try_git(f"--git-dir={mirror}", "show", f"{sha}:{path}") or ""


def _from_text(text: str, *patterns: re.Pattern) -> str | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return f"{int(match.group(1))}.{match.group(2)}"
    return None


def read_version(mirror: Path, sha: str) -> tuple[str | None, str]:
    """(``X.Y`` or None, where it was read) at commit ``sha`` of the bare repository ``mirror``."""
    listing = (try_git(f"--git-dir={mirror}", "ls-tree", "-r", "--name-only", sha) or "").splitlines()
    files = [p for p in listing if PurePosixPath(p).name in VERSION_FILES and len(PurePosixPath(p).parts) <= 3
             and not any(part.startswith(("test", "doc", ".")) for part in PurePosixPath(p).parts[:-1])]
    for path in sorted(files, key=lambda p: (len(PurePosixPath(p).parts), PurePosixPath(p).name != "__init__.py", p)):
        found = _from_text(_show(mirror, sha, path), _LITERAL, _TUPLE)
        if found:
            return found, path
    for path in ("pyproject.toml", "setup.cfg", "setup.py"):
        if path in listing:
            found = _from_text(_show(mirror, sha, path), _LITERAL if path != "setup.py" else _SETUP)
            if found:
                return found, path
    tag = try_git(f"--git-dir={mirror}", "describe", "--tags", "--abbrev=0", sha)
    if tag:
        match = _TAG.search(tag)
        if match:
            return f"{int(match.group(1))}.{match.group(2)}", f"tag {tag}"
    return None, "no version literal and no tag"


def _parse(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def snap(version: str, known: list[str]) -> str | None:
    """The newest of ``known`` (release lines with install specs) not after ``version``; the oldest
    known when ``version`` precedes them all; None when nothing is known."""
    parsed = [(v, _parse(v)) for v in known]
    parsed = sorted(((k, p) for k, p in parsed if p is not None), key=lambda kp: kp[1])
    if not parsed:
        return None
    if version in known:
        return version
    mine = _parse(version)
    if mine is None:
        return parsed[-1][0]
    before = [k for k, p in parsed if p <= mine]
    return before[-1] if before else parsed[0][0]
