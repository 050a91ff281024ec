"""Which release of a PyPI project a tree of a given date would have used.

``release_as_of(name, when, python)``: the highest final release of ``name`` that has an sdist
uploaded no later than ``when`` (PEP 700 ``upload-time`` from the index's simple JSON API) and whose
``requires-python`` admits ``python``. The highest version, not the latest upload: projects
maintain old lines in parallel (astropy-helpers 2.0.x next to 3.x), and a tree follows the newest
line of its time. Without upload times (an index that does not give them) the highest release is
taken (its ``uploaded`` is None); None when no release is that old.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidSdistFilename, parse_sdist_filename
from packaging.version import Version

from sweworld.core.errors import RepoError
from sweworld.repos.pypi import index_files
from sweworld.repos.source import canonical_name


@dataclass(frozen=True)
class Release:
    version: str
    uploaded: datetime | None
    """None when the index gives no upload time (then ``when`` was not applied)."""


def _uploaded(entry: dict) -> datetime | None:
    stamp = str(entry.get("upload-time") or "")
    try:
        return datetime.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _admits(entry: dict, python: str | None) -> bool:
    spec = entry.get("requires-python")
    if not (python and spec):
        return True
    try:
        return Version(python) in SpecifierSet(spec)
    except (InvalidSpecifier, ValueError):
        return True


def sdist_releases(name: str, python: str | None = None) -> list[Release]:
    """Final releases of ``name`` with an sdist (not yanked) that admit ``python``, lowest first."""
    try:
        files = index_files(name)
    except (OSError, ValueError) as exc:
        raise RepoError(f"cannot list the releases of {name} on the package index: {exc}", where=f"pypi:{name}",
                        hint="check that the index (PIP_INDEX_URL or pypi.org) is reachable") from exc
    found: dict[Version, Release] = {}
    for entry in files:
        try:
            project, version = parse_sdist_filename(str(entry.get("filename", "")))
        except InvalidSdistFilename:
            continue
        if (canonical_name(project) != canonical_name(name) or version.is_prerelease or entry.get("yanked")
                or not _admits(entry, python)):
            continue
        uploaded, prior = _uploaded(entry), found.get(version)
        if prior is None or (uploaded and (prior.uploaded is None or uploaded < prior.uploaded)):
            found[version] = Release(str(version), uploaded)  # a release's first upload
    return [found[v] for v in sorted(found)]


def release_as_of(name: str, when: datetime, python: str | None = None) -> Release | None:
    """The release of ``name`` a tree dated ``when`` would have used (see the module docstring)."""
    releases = sdist_releases(name, python)
    if releases and all(r.uploaded is None for r in releases):
        return releases[-1]
    dated = [r for r in releases if r.uploaded is not None and r.uploaded <= when]
    return dated[-1] if dated else None
