"""One copy of each file: the built layers (``envs.build``) and the unpacked image layers (``oci.pull``)
share identical files through a content-addressed store of hard links, as uv's cache links into its
venvs.

An instance's install layer holds what its install wrote: for SWE-Gym's specs (the install runs per
instance) that is nearly every dependency, the same files in every instance of a version. After a
layer is published, ``dedup(layer)`` hashes each regular file and makes it a hard link to
``$SWEWORLD_HOME/cas/<2>/<sha256>-<mode>``: the first layer to hold a content gives the store its
inode; the next ones link to it, so N copies are one on disk. Published layers are never written
again (episodes write their own upper layer, and a copy-up copies the content), so sharing inodes is
safe.

- **Modes** are part of the key (a hard link shares them); so is nothing else: a file takes the
  stored inode's modification time. A Python source whose time changes would make its timestamp
  ``.pyc`` stale (every episode would compile it again), so each ``__pycache__/NAME.*.pyc`` of a
  linked ``NAME.py`` has its header's source time set to the linked file's: it stays valid, and the
  ``.pyc`` files, now the same bytes in every layer, are linked too.
- **Left alone:** links, empty files, files with extended attributes (overlay's whiteouts and its
  own attributes live there, and attributes are shared by links), files of another file system, an
  inode at the file system's link limit.
- ``gc()`` removes the store's entries no layer links any more (link count 1).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

from sweworld.core import paths

log = logging.getLogger(__name__)

_CHUNK = 1 << 20


def cas_root() -> Path:
    return paths.subdir("cas")


@dataclass
class Saved:
    """What one ``dedup`` did: files linked to the store (``linked``), bytes that are now shared
    (``bytes``: they were a copy), files kept as they are (``kept``)."""

    linked: int = 0
    bytes: int = 0
    kept: int = 0


def _digest(path: str) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            sha.update(chunk)
    return sha.hexdigest()


def _plain(path: str, info: os.stat_result) -> bool:
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return False
    try:
        return not os.listxattr(path, follow_symlinks=False)
    except OSError:
        return False


def _link(path: str, info: os.stat_result, store: Path, saved: Saved) -> os.stat_result | None:
    """``path`` made a link of its content's store entry; the entry's stat, or None when kept."""
    key = f"{_digest(path)}-{stat.S_IMODE(info.st_mode):o}"
    entry = store / key[:2] / key
    try:
        held = os.stat(entry)
    except FileNotFoundError:
        entry.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, entry)
        except FileExistsError:  # another build stored it meanwhile
            held = os.stat(entry)
        except OSError:
            saved.kept += 1
            return None
        else:
            return os.stat(entry)
    if held.st_ino == info.st_ino and held.st_dev == info.st_dev:
        return held
    tmp = f"{path}.sweworld-link"
    try:
        os.link(entry, tmp)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if exc.errno not in (errno.EXDEV, errno.EMLINK, errno.EPERM, errno.EACCES, errno.ENOENT):  # ENOENT: gc took it
            raise
        saved.kept += 1
        return None
    saved.linked += 1
    saved.bytes += info.st_size
    return held


def _fix_pyc(source: str, mtime: float, size: int) -> None:
    """The timestamp ``.pyc`` files of ``source`` say ``mtime`` (they were valid for its old time)."""
    folder, name = os.path.split(source)
    cache = os.path.join(folder, "__pycache__")
    stem = name[:-3] + "."
    try:
        entries = [e for e in os.scandir(cache) if e.name.startswith(stem) and e.name.endswith(".pyc")]
    except OSError:
        return
    for pyc in entries:
        try:
            if pyc.stat(follow_symlinks=False).st_nlink > 1:  # already shared: never written in place
                continue
            with open(pyc.path, "r+b") as handle:
                header = handle.read(16)
                if len(header) < 16:
                    continue
                flags, _, recorded = struct.unpack("<III", header[4:16])
                if flags != 0 or recorded != size & 0xFFFFFFFF:  # a hash-based pyc, or not of this source
                    continue
                handle.seek(8)
                handle.write(struct.pack("<I", int(mtime) & 0xFFFFFFFF))
        except OSError:
            continue


def dedup(directory: Path) -> Saved:
    """Every plain file under ``directory`` linked to the store (see the module docstring): sources
    first, then the ``.pyc`` files their new times made identical."""
    store, saved = cas_root(), Saved()
    later: list[tuple[str, os.stat_result]] = []
    for folder, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        for name in files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if not _plain(path, info):
                continue
            if name.endswith(".pyc"):
                later.append((path, info))
                continue
            held = _link(path, info, store, saved)
            if held is not None and name.endswith(".py") and held.st_mtime_ns != info.st_mtime_ns:
                _fix_pyc(path, held.st_mtime, held.st_size)
    for path, _ in later:
        _link(path, os.lstat(path), store, saved)
    return saved


def share(directory: Path, where: str) -> Saved | None:
    """``dedup(directory)`` of a layer just published (never written again); a failure is logged and
    leaves the layer as it is (None)."""
    try:
        saved = dedup(directory)
    except OSError as exc:
        log.warning("%s: files not shared with other layers (%s)", where, exc)
        return None
    if saved.bytes:
        log.info("%s: %d files (%.1f MiB) shared with other layers", where, saved.linked, saved.bytes / 2**20)
    return saved


def gc(*, dry_run: bool = False) -> dict[str, int]:
    """Remove the store's entries no layer links (link count 1): their count and bytes."""
    freed = {"files": 0, "bytes": 0}
    root = paths.home() / "cas"
    if not root.is_dir():
        return freed
    for entry in root.glob("*/*"):
        with contextlib.suppress(FileNotFoundError):
            info = entry.lstat()
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                freed["files"] += 1
                freed["bytes"] += info.st_size
                if not dry_run:
                    entry.unlink()
    return freed
