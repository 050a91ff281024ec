"""PyPI sources: a release's sdist, committed into a fresh git repository, deterministically.

``pypi_repo(name, version)`` downloads the sdist with
``python -m pip download --no-binary NAME --no-deps`` (the sdist of NAME only; build requirements
used by pip to read the sdist's metadata may come as wheels, which is much faster than building
setuptools or hatchling from source and changes nothing about the archive), caches the archive under
``$SWEWORLD_HOME/repos/sdists/NAME-VERSION/``, and builds a bare repository at
``$SWEWORLD_HOME/repos/mirrors/pypi__NAME__VERSION.git`` holding one root commit (also
``refs/heads/main`` and tag ``VERSION``).

The commit id is a pure function of (canonical NAME, VERSION, sdist bytes):

- the archive is unpacked by sweworld (not by ``tar``), stripping the single top-level directory;
  files get mode 755 when any execute bit is set in the archive, else 644 (git keeps only these);
  symlinks pointing outside the tree, devices and fifos are skipped; umask and timestamps play no part;
- files are committed with ``git add -f -A`` (gitignored files included) into a throw-away index,
  with ``info/attributes`` unsetting text/eol/filter/ident/encoding attributes so bytes are stored
  as they are;
- git runs with no global or system config (``GIT_CONFIG_GLOBAL=/dev/null``,
  ``GIT_CONFIG_NOSYSTEM=1``), ``core.autocrlf=false``, ``core.fileMode=true``, ``core.symlinks=true``;
- author and committer are ``sweworld <sweworld@localhost>``, both dates 2000-01-01T00:00:00+0000,
  the message ``pypi NAME==VERSION``, no parent, no signature (see ``commit.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import shutil
import stat
import sys
import tarfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

from sweworld.core.errors import RepoError
from sweworld.repos.cache import area, locked, publish, repos_root, staging
from sweworld.repos.commit import commit_directory
from sweworld.repos.git import SHA_RE, git, run_cmd, try_git
from sweworld.repos.source import RepoSource, canonical_name, hints

SDIST_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip", ".tar")
MIRROR_MARKER = "sweworld-complete"


def _archives(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and p.name.lower().endswith(SDIST_SUFFIXES))


def index_url(name: str) -> str:
    """The project page of ``name`` on the index (``$PIP_INDEX_URL`` or PyPI)."""
    return os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/") + f"/{name}/"


def index_files(name: str) -> list[dict]:
    """The files of project ``name`` from the index's simple JSON API (PEP 691; with PEP 700's
    ``upload-time`` where the index gives it). Raises OSError or ValueError."""
    request = urllib.request.Request(index_url(name), headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return list(json.load(response).get("files", []))


def fetch_from_index(name: str, version: str, dest: Path) -> bool:
    """Download the sdist of ``name==version`` through the index's simple JSON API (PEP 691), checking
    its sha256. The index is ``$PIP_INDEX_URL`` or PyPI. False when it is not there."""
    try:
        files = index_files(name)
        prefix = {f"{stem}-{version}" for stem in (name, name.replace("-", "_"), name.replace("-", "."))}
        for entry in files:
            filename = entry.get("filename", "")
            base = filename[:-7] if filename.endswith(".tar.gz") else filename.rsplit(".", 1)[0]
            if base.lower() not in {p.lower() for p in prefix} or not filename.endswith((".tar.gz", ".zip", ".tgz")):
                continue
            with urllib.request.urlopen(urllib.parse.urljoin(index_url(name), entry["url"]), timeout=300) as got:
                data = got.read()
            expected = entry.get("hashes", {}).get("sha256")
            if expected and hashlib.sha256(data).hexdigest() != expected:
                return False
            (dest / filename).write_bytes(data)
            return True
    except (OSError, ValueError, KeyError):
        return False
    return False


def download_sdist(name: str, version: str, *, root: Path | str | None = None) -> Path:
    """The cached sdist archive of ``name==version``; downloaded with pip on first use."""
    name = canonical_name(name)
    final = area(repos_root(root), "sdists") / f"{name}-{version}"
    found = _archives(final)
    if len(found) == 1:
        return found[0]
    with locked(repos_root(root), f"sdist-{name}-{version}"):
        found = _archives(final)
        if len(found) == 1:
            return found[0]
        with staging(final) as tmp:
            argv = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-input",
                    "--quiet", "--no-deps", "--no-binary", name, "--dest", str(tmp), f"{name}=={version}"]
            try:
                run_cmd(argv, what=f"pypi:{name}=={version}", label=" ".join(argv[1:]))
            except RepoError as exc:
                # pip builds the sdist's metadata to check it, which fails for releases the host
                # interpreter cannot run (old setup.py); the index's JSON API needs no build
                if not fetch_from_index(name, version, tmp):
                    raise RepoError(f"could not download the sdist of {name}=={version} from PyPI\n{exc.message}",
                                    where=f"pypi:{name}=={version}",
                                    hint="check the name and version on pypi.org and that the index is reachable; "
                                    + hints()) from exc
            got = _archives(tmp)
            if len(got) != 1:
                raise RepoError(f"pip download of {name}=={version} gave {[p.name for p in tmp.iterdir()]}, "
                                "expected one sdist archive", where=f"pypi:{name}=={version}",
                                hint="the release may publish wheels only; pick a version with an sdist")
            publish(tmp, final)
        return _archives(final)[0]


def _safe_member(name: str) -> PurePosixPath | None:
    pure = PurePosixPath(name.replace("\\", "/"))
    parts = [p for p in pure.parts if p not in ("", ".", "/")]
    if pure.is_absolute() or ".." in parts or not parts:
        return None
    return PurePosixPath(*parts)


def _read_members(archive: Path) -> list[tuple[PurePosixPath, str, int, bytes]]:
    """(path, kind 'file'|'dir'|'link', mode, data-or-link-target) for each usable archive member."""
    out: list[tuple[PurePosixPath, str, int, bytes]] = []
    if archive.name.lower().endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                path = _safe_member(info.filename)
                mode = (info.external_attr >> 16) & 0o7777
                if path is None:
                    continue
                if info.is_dir():
                    out.append((path, "dir", 0o755, b""))
                elif stat.S_ISLNK(info.external_attr >> 16):
                    out.append((path, "link", 0, zf.read(info)))
                else:
                    out.append((path, "file", mode, zf.read(info)))
        return out
    with tarfile.open(archive) as tf:
        for member in tf.getmembers():
            path = _safe_member(member.name)
            if path is None:
                continue
            if member.isdir():
                out.append((path, "dir", 0o755, b""))
            elif member.issym():
                out.append((path, "link", 0, member.linkname.encode("utf-8", "surrogateescape")))
            elif member.isfile() or member.islnk():
                handle = tf.extractfile(member)
                out.append((path, "file", member.mode, handle.read() if handle else b""))
    return out


def unpack_sdist(archive: Path, dest: Path) -> None:
    """Unpack ``archive`` into ``dest`` (see the module docstring for the rules)."""
    try:
        members = _read_members(archive)
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise RepoError(f"cannot read sdist {archive}: {exc}", where=str(archive),
                        hint="delete the archive so that it is downloaded again") from exc
    tops = {m[0].parts[0] for m in members}
    strip = len(tops) == 1 and any(len(m[0].parts) > 1 for m in members)
    dest.mkdir(parents=True, exist_ok=True)
    for path, kind, mode, data in members:
        parts = path.parts[1:] if strip else path.parts
        if not parts or ".git" in parts:
            continue
        target = dest.joinpath(*parts)
        if kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        if kind == "link":
            link = data.decode("utf-8", "surrogateescape")
            inside = posixpath.normpath(posixpath.join(*parts[:-1], link) if parts[:-1] else link)
            if link and not link.startswith("/") and inside != ".." and not inside.startswith("../"):
                target.symlink_to(link)
            continue
        target.write_bytes(data)
        target.chmod(0o755 if mode & 0o111 else 0o644)


def _mirror_commit(mirror: Path) -> str | None:
    if not (mirror / MIRROR_MARKER).is_file():
        return None
    sha = try_git(f"--git-dir={mirror}", "rev-parse", "--verify", "--quiet", "refs/heads/main^{commit}")
    return sha if sha and SHA_RE.match(sha) else None


def pypi_repo(name: str, version: str, *, root: Path | str | None = None) -> tuple[Path, str]:
    """The bare repository of release ``name==version`` and its single commit's sha."""
    source = RepoSource.parse(f"pypi:{name}=={version}")
    name, version = source.name or name, source.version or version
    base = repos_root(root)
    final = area(base, "mirrors") / f"{source.mirror_name()}.git"
    commit = _mirror_commit(final)
    if commit:
        return final, commit
    archive = download_sdist(name, version, root=base)
    with locked(base, f"mirror-{final.name}"):
        commit = _mirror_commit(final)
        if commit:
            return final, commit
        with staging(final) as tmp:
            work, bare = tmp / "src", tmp / "repo.git"
            unpack_sdist(archive, work)
            git("init", "--bare", "--quiet", "--template=", bare, what=f"pypi:{name}=={version}")
            commit = commit_directory(bare, work, f"pypi {name}=={version}")
            git(f"--git-dir={bare}", "update-ref", "refs/heads/main", commit)
            git(f"--git-dir={bare}", "symbolic-ref", "HEAD", "refs/heads/main")
            if try_git(f"--git-dir={bare}", "check-ref-format", f"refs/tags/{version}") is not None:
                git(f"--git-dir={bare}", "update-ref", f"refs/tags/{version}", commit)
            (bare / MIRROR_MARKER).write_text(f"pypi:{name}=={version} {archive.name}\n")
            publish(bare, final)
    return final, commit
