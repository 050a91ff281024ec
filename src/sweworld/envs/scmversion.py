"""The version a setuptools_scm (or hatch-vcs) project gets when built from a tree without history.

Base trees hold one commit and no tags (nothing of the future may leak into an episode), so a
project that takes its version from git history would install as ``0.1.dev1``; pytest then refuses
its own ``tox.ini`` (``requires pytest-2.0, actual pytest-0.1.dev1``). SWE-bench's images clone
the whole repository, so the version there comes from the nearest tag. Here it is computed the same
way from the mirror (``git describe --tags``, setuptools_scm's default "guess-next-dev" scheme:
``5.4.1`` at the tag, ``5.4.2.devN+gSHA`` N commits after it) or, when the mirror has no tags (a
shallow fetch), from the task's ``version`` field (the release line: ``5.4`` -> ``5.4.0``). Builds
receive it as ``SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<DIST>`` (only this project is affected, not
dependencies built from source) or, when the distribution name cannot be read, the global
``SETUPTOOLS_SCM_PRETEND_VERSION``.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

from packaging.version import InvalidVersion, Version

from sweworld.repos.git import try_git

_SCM_MARKERS = ("setuptools_scm", "setuptools-scm", "use_scm_version", "hatch-vcs", "hatch_vcs")
_PACKAGING_FILES = ("pyproject.toml", "setup.py", "setup.cfg")


def _read(tree: Path, name: str) -> str:
    path = tree / name
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def uses_scm_version(tree: Path) -> bool:
    """Whether the project's packaging files mention setuptools_scm or hatch-vcs."""
    return any(marker in _read(tree, name) for name in _PACKAGING_FILES for marker in _SCM_MARKERS)


def distribution_name(tree: Path) -> str | None:
    """The project's distribution name from pyproject.toml, setup.cfg or setup.py; None if unread."""
    match = re.search(r'(?ms)^\[project\].*?^name\s*=\s*["\']([^"\']+)["\']', _read(tree, "pyproject.toml"))
    if match:
        return match.group(1)
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(_read(tree, "setup.cfg"))
        if parser.has_option("metadata", "name"):
            return parser.get("metadata", "name").strip() or None
    except configparser.Error:
        pass
    match = re.search(r"""\bname\s*=\s*['"]([A-Za-z0-9][A-Za-z0-9._-]*)['"]""", _read(tree, "setup.py"))
    return match.group(1) if match else None


def env_var_name(dist: str | None) -> str:
    """``SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<DIST>`` (normalised as setuptools_scm does), or the global one."""
    if not dist:
        return "SETUPTOOLS_SCM_PRETEND_VERSION"
    return "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_" + re.sub(r"[-_.]+", "_", dist).upper()


def next_dev_version(tag: str, distance: int, sha: str) -> str | None:
    """setuptools_scm's guess-next-dev version for ``distance`` commits after ``tag``."""
    try:
        version = Version(tag.rsplit("/", 1)[-1].lstrip("vV"))
    except InvalidVersion:
        return None
    if distance == 0:
        return str(version)
    release = list(version.release) + [0] * (3 - len(version.release))
    if version.is_prerelease or version.is_devrelease:
        base = ".".join(str(p) for p in version.release)
    else:
        release[-1] += 1
        base = ".".join(str(p) for p in release)
    return f"{base}.dev{distance}+g{sha[:8]}"


def from_mirror(mirror: Path, commit: str) -> str | None:
    """The version at ``commit`` from the mirror's nearest tag; None when there is no usable tag."""
    out = try_git(f"--git-dir={mirror}", "describe", "--tags", "--long", "--match", "*[0-9]*", commit)
    match = re.fullmatch(r"(.+)-(\d+)-g([0-9a-f]+)", out or "")
    return next_dev_version(match.group(1), int(match.group(2)), commit) if match else None


def from_release_line(version: str | None) -> str | None:
    """``'5.4'`` -> ``'5.4.0'``; None when the task has no usable version."""
    if not version:
        return None
    try:
        parsed = Version(str(version).lstrip("vV"))
    except InvalidVersion:
        return None
    return ".".join(str(p) for p in [*parsed.release, 0, 0][:max(3, len(parsed.release))])


def pretend_version_env(tree: Path, mirror: Path | None, commit: str, release_line: str | None) -> dict[str, str]:
    """The environment variable that gives an scm-versioned project its version ({} otherwise)."""
    if not uses_scm_version(tree):
        return {}
    version = (from_mirror(mirror, commit) if mirror is not None else None) or from_release_line(release_line)
    return {env_var_name(distribution_name(tree)): version} if version else {}
