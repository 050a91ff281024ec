"""Requirements fetched from a code host (``git+https://...``), for machines that reach a package index
but not the code host (a cluster behind a PyPI proxy).

With ``SWEWORLD_VCS_FROM_INDEX=1`` a VCS requirement read from a requirements file or an environment
yml's pip section is installed from the index instead, by the distribution it names (``name @
git+https://...``, ``git+https://...#egg=name``) or else by its repository's name
(``git+https://github.com/dask/distributed`` -> ``distributed``): the release the build's date cutoff
allows, not the commit the URL names. Off by default: where the code host is reachable the URL is
installed as written.
"""

from __future__ import annotations

import os
import re

from sweworld.envs.shell import command_segments

ENV_VAR = "SWEWORLD_VCS_FROM_INDEX"
_VCS = re.compile(r"(?:^|\s|@\s*)(?:git|hg|svn|bzr)\+[a-z]+://", re.I)
_NAMED = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*@\s*(?:git|hg|svn|bzr)\+", re.I)
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?)")
_REPO = re.compile(r"\+[a-z]+://[^\s#@]+?/([A-Za-z0-9][A-Za-z0-9._-]*?)(?:\.git)?/?(?:[@#\s]|$)", re.I)


def enabled() -> bool:
    return os.environ.get(ENV_VAR, "").strip().lower() in ("1", "true", "yes", "on")


def from_index(line: str) -> str | None:
    """The index requirement standing for the VCS requirement ``line`` (the distribution it names, with
    extras, else its repository's name), or None when ``line`` is no VCS requirement."""
    if not _VCS.search(line):
        return None
    named = _NAMED.match(line)
    if named:
        return named.group(1) + (named.group(2) or "")
    egg = _EGG.search(line)
    if egg:
        return egg.group(1)
    repo = _REPO.search(line)
    return repo.group(1) if repo else None


def rewrite(line: str, where: str, notes: list[str]) -> str:
    """``line``, or its index requirement when ``SWEWORLD_VCS_FROM_INDEX`` is set (with a note)."""
    if not enabled():
        return line
    name = from_index(line)
    if name is None:
        return line
    notes.append(f"{where}: '{line}' installed from the package index as '{name}' ({ENV_VAR})")
    return name


_REQ_FILE = re.compile(r"(?:^|\s)(?:-r|--requirement)(?:\s+|=)(\S+)")
_SED = ("sed -i -E "
        "'s#^[[:space:]]*([A-Za-z0-9][A-Za-z0-9._-]*)[[:space:]]*@[[:space:]]*(git|hg|svn|bzr)\\+[^[:space:]]+#\\1#; "
        "s#^[[:space:]]*(-e[[:space:]]+)?(git|hg|svn|bzr)\\+[^[:space:]]*[\\#\\&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)"
        "[^[:space:]]*#\\3#'")


def install_rewrites(install: str | None, notes: list[str]) -> list[str]:
    """With ``SWEWORLD_VCS_FROM_INDEX`` set: commands for the instance stage that rewrite, in the
    requirement files the install's ``pip install -r FILE`` reads, each VCS requirement naming its
    distribution to that name (the tree's copy; the change is left out of diffs as every install
    change is). Nothing otherwise."""
    if not (enabled() and install):
        return []
    files = [m.group(1) for s in command_segments(install) if " install" in s for m in _REQ_FILE.finditer(s)]
    if not files:
        return []
    notes.append(f"VCS requirements of {' '.join(files)} installed from the package index by name ({ENV_VAR})")
    quoted = " ".join(f"'{f}'" for f in dict.fromkeys(files))
    return [f"for f in {quoted}; do [ -f \"$f\" ] && {_SED} \"$f\"; done; true"]
