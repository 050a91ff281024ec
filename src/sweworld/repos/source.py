"""Where a repository comes from: ``RepoSource``, parsed from a string, and the default for a task.

Accepted forms of ``repo_source``:

- ``pypi:NAME==VERSION``: the sdist of that release, committed into a fresh git repository;
- a git URL: ``https://...``, ``http://...``, ``ssh://...``, ``git://...``, ``file://...``,
  ``git@host:owner/name(.git)``, or a path ending in ``.git``;
- a local directory that is a git repository (a clone or a bare repository).

Without ``repo_source``: ``repos_dir/owner__name`` or ``repos_dir/owner/name`` when it is a git
repository (no network), else ``https://github.com/{repo}.git``.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sweworld.core.errors import RepoError
from sweworld.repos.git import is_git_repo

_URL_RE = re.compile(r"^(https?|ssh|git|file)://", re.IGNORECASE)
_SCP_RE = re.compile(r"^[\w.-]+@[\w.-]+:")
_PYPI_RE = re.compile(r"^pypi:\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([A-Za-z0-9][A-Za-z0-9.+!_-]*)\s*$")


def canonical_name(name: str) -> str:
    """PEP 503 normalised project name: lower case, runs of ``-_.`` become ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def safe_name(label: str) -> str:
    """A file-name-safe form of a repository label: ``owner/name`` -> ``owner__name``."""
    text = label.strip().strip("/")
    text = re.sub(r"\.git$", "", text)
    text = text.replace("/", "__")
    text = re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("._") or "repo"
    return text[:100]


def hints() -> str:
    """The three ways to provide a repository, for error hints."""
    return ("provide the repository in one of three ways: (1) --repos-dir DIR with a clone at "
            "DIR/owner__name (or DIR/owner/name); (2) a git URL in the task's repo_source (or network "
            "access to github.com for the default https://github.com/{repo}.git); (3) repo_source: "
            "pypi:NAME==VERSION for a release on PyPI")


def missing_error(what: str, *, repo: str, commit: str | None = None, instance_id: str | None = None,
                  source: RepoSource | None = None, detail: str = "") -> RepoError:
    """A ``RepoError`` naming the instance, the repository and the commit, with :func:`hints`."""
    parts = [what, f"repo {repo!r}"]
    if commit:
        parts.append(f"commit {commit!r}")
    if source is not None:
        parts.append(f"source {source.describe()}")
    message = ", ".join(parts)
    if detail:
        message += "\n" + detail
    return RepoError(message, where=f"instance {instance_id}" if instance_id else None, hint=hints())


class RepoSource(BaseModel):
    """A parsed repository source."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["pypi", "git", "local"] = Field(description="pypi sdist, git URL, or local git directory.")
    location: str = Field(description="The URL, the absolute path, or 'NAME==VERSION' for pypi.")
    name: str | None = Field(default=None, description="PyPI project name (canonical), for kind 'pypi'.")
    version: str | None = Field(default=None, description="PyPI version, for kind 'pypi'.")

    @classmethod
    def parse(cls, text: str, *, base: Path | None = None) -> RepoSource:
        """Parse ``text``; relative paths are taken from ``base`` (default: the current directory)."""
        raw = text.strip()
        if not raw:
            raise RepoError("empty repo_source", hint=hints())
        if raw.lower().startswith("pypi:"):
            match = _PYPI_RE.match(raw)
            if not match:
                raise RepoError(f"bad pypi source {raw!r}: expected 'pypi:NAME==VERSION'", hint=hints())
            name, version = canonical_name(match.group(1)), match.group(2)
            return cls(kind="pypi", location=f"{name}=={version}", name=name, version=version)
        if _URL_RE.match(raw) or _SCP_RE.match(raw):
            return cls(kind="git", location=raw)
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = (base or Path.cwd()) / path
        path = path.resolve()
        if raw.rstrip("/").endswith(".git"):
            return cls(kind="git", location=str(path))
        if is_git_repo(path):
            return cls(kind="local", location=str(path))
        reason = "does not exist" if not path.exists() else "is not a git repository"
        raise RepoError(f"repo_source {raw!r}: {path} {reason}", hint=hints())

    @property
    def is_url(self) -> bool:
        """True for a remote URL (network needed), false for local paths and pypi."""
        return self.kind == "git" and not self.location.startswith("/") and not self.location.lower().startswith(
            "file://")

    def describe(self) -> str:
        """A short human-readable form, e.g. ``pypi:six==1.16.0`` or the URL/path."""
        return f"pypi:{self.location}" if self.kind == "pypi" else self.location

    def mirror_name(self) -> str:
        """Name of this source's mirror under ``repos/mirrors``: readable label + hash of the location."""
        if self.kind == "pypi":
            return safe_name(f"pypi__{self.name}__{self.version}")
        digest = hashlib.sha256(self.location.encode()).hexdigest()[:10]
        tail = re.split(r"[/:]", self.location.rstrip("/"))[-2:]
        return f"{safe_name('__'.join(p for p in tail if p))}-{digest}"


def find_in_repos_dir(repos_dir: Path | str, repo: str) -> Path | None:
    """The clone of ``repo`` (``owner/name``) in ``repos_dir``: ``owner__name`` or ``owner/name``."""
    root = Path(repos_dir).expanduser()
    label = repo.strip().strip("/")
    candidates = [root / label.replace("/", "__"), root / label, root / f"{label.replace('/', '__')}.git",
                  root / f"{label}.git"]
    for candidate in candidates:
        if is_git_repo(candidate):
            return candidate.resolve()
    return None


def default_source(repo: str, repos_dir: Path | str | None = None) -> RepoSource:
    """The source of ``repo`` when a task has no ``repo_source`` (see the module docstring)."""
    if repos_dir is not None:
        found = find_in_repos_dir(repos_dir, repo)
        if found is not None:
            return RepoSource(kind="local", location=str(found))
    return RepoSource(kind="git", location=f"https://github.com/{repo.strip().strip('/')}.git")


def source_for(repo: str, source: str | RepoSource | None, repos_dir: Path | str | None = None) -> RepoSource:
    """``source`` parsed (relative paths against ``repos_dir``), or :func:`default_source`."""
    if isinstance(source, RepoSource):
        return source
    if source and source.strip():
        return RepoSource.parse(source, base=Path(repos_dir) if repos_dir else None)
    return default_source(repo, repos_dir)
