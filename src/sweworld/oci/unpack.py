"""One image layer unpacked as an ordinary user into a directory that an overlay stacks as a lower layer.

The layer is read as a stream, hashed on the way (its uncompressed digest must be the image config's
``diff_id``) and written into a temporary directory renamed into place when whole, so a layer
directory is complete or absent. What an ordinary user cannot or must not keep is recorded in the
layer's ``meta.json`` rather than written:

- OCI whiteouts become overlayfs whiteouts: ``.wh.NAME`` a character device 0/0 named ``NAME``
  (an ordinary user may make that one device), or, where ``mknod`` is refused, an empty file with the
  ``user.overlay.whiteout`` attribute under a directory marked ``user.overlay.opaque=x``;
  ``.wh..wh..opq`` marks its directory ``user.overlay.opaque=y`` (the overlay is mounted with
  ``userxattr``);
- names are read as Docker reads them: ``a/../b`` is ``b``, an absolute ``/etc/x`` is ``etc/x``;
  a name that climbs out of the layer (``../../etc/x``) or whose parent is a link or a file is
  skipped: nothing is written outside the layer or through a link, and no link is followed when
  writing (a link itself is kept as it is, whatever it points to: it is resolved inside the episode);
- a hard link to a file of the same layer is a hard link; one to a lower layer's file is copied
  from that layer, found without following any link; one out of the layer is skipped;
- ``meta["unsafe"]``: every entry of those kinds (skipped, rewritten, or a relative link that climbs
  out of the layer), which ``pull`` reports in one warning;
- device nodes are skipped, setuid and setgid bits dropped, owners recorded (every file is the
  episode's root's);
- extended attributes: ``user.*`` kept, except any overlay attribute an image would inject.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import hashlib
import json
import os
import posixpath
import shutil
import stat
import subprocess
import tarfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from sweworld.core.errors import ImageError
from sweworld.core.paths import remove_tree

_REDO = ("remove the image (`sweworld env rm IMAGE`, if it was pulled before) and the blobs no image holds "
         "(`sweworld env gc`), then pull it again (`sweworld env pull IMAGE`)")
WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"


class _Hashing:
    """A stream hashing what is read through it."""

    def __init__(self, stream: IO[bytes]):
        self.stream, self.sha, self.size = stream, hashlib.sha256(), 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.sha.update(data)
        self.size += len(data)
        return data

    def drain(self) -> None:
        while self.read(1 << 20):
            pass


def _decompressed(blob: Path) -> tuple[IO[bytes], subprocess.Popen | None]:
    raw = open(blob, "rb")  # noqa: SIM115 - closed by the caller with the stream
    magic = raw.read(4)
    raw.seek(0)
    if magic[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw), None
    if magic == b"\x28\xb5\x2f\xfd":
        zstd = shutil.which("zstd")
        if zstd is None:
            raw.close()
            raise ImageError(f"layer {blob.name} is zstd-compressed and `zstd` is not installed",
                             hint="apt-get install zstd")
        proc = subprocess.Popen([zstd, "-dc"], stdin=raw, stdout=subprocess.PIPE)
        raw.close()
        assert proc.stdout is not None
        return proc.stdout, proc
    return raw, None


def _clean(name: str) -> tuple[str | None, str | None]:
    """The path a tar name stands for inside the layer (None: the root, or out of it), and what is
    unsafe about the name (None: nothing)."""
    norm = posixpath.normpath(name.lstrip("/") or ".")
    if norm == ".":
        return None, None
    if norm == ".." or norm.startswith("../"):
        return None, "a path out of the layer"
    return norm, (f"an absolute path, written as {norm}" if name.startswith("/") else None)


def _held(layer: Path, rel: str) -> tuple[bool, Path | None]:
    """Whether ``layer`` holds ``rel`` (or hides it: a parent replaced by a link or a file), and the
    regular file it is when it is one; read with ``lstat`` only, never through a link."""
    here = layer
    for part in rel.split("/")[:-1]:
        here = here / part
        try:
            if not stat.S_ISDIR(here.lstat().st_mode):
                return True, None
        except FileNotFoundError:
            return False, None
    here = here / rel.rsplit("/", 1)[-1]
    try:
        return True, here if stat.S_ISREG(here.lstat().st_mode) else None
    except FileNotFoundError:
        return False, None


class _Layer:
    def __init__(self, dest: Path, lowers: Iterable[Path]):
        self.dest = dest
        self.lowers = list(lowers)
        self.dirs: dict[str, tuple[int, int]] = {}
        self.xwhiteout_parents: set[str] = set()
        self.chardev = True
        self.meta: dict = {"owners": {}, "skipped": [], "unsafe": [], "setuid_dropped": [], "xattrs_dropped": {}}

    def _unsafe(self, name: str, what: str, *, skipped: bool) -> None:
        self.meta["unsafe"].append([name, what])
        if skipped:
            self.meta["skipped"].append([name, what])

    def _is_dir(self, rel: str) -> bool:
        """``rel`` and each of its parents are real directories of the layer (no link on the way)."""
        return self._parents_ok(f"{rel}/.", create=False) if rel else True

    def _parents_ok(self, rel: str, create: bool = True) -> bool:
        """Every parent of ``rel`` is a real directory of the layer (made when missing), never a link."""
        here = self.dest
        for part in rel.split("/")[:-1]:
            here = here / part
            try:
                mode = here.lstat().st_mode
            except FileNotFoundError:
                if not create:
                    return False
                here.mkdir(0o755)
                continue
            if not stat.S_ISDIR(mode):
                return False
        return True

    def _clear(self, path: Path, keep_dir: bool) -> None:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(path.lstat().st_mode):
                if not keep_dir:
                    remove_tree(path)
            else:
                path.unlink()

    def _whiteout(self, rel: str) -> None:
        parent, name = os.path.split(rel)
        target = self.dest / parent / name[len(WHITEOUT):]
        if os.path.lexists(target):
            return  # an entry of this layer already hides the lower one
        if self.chardev:
            try:
                os.mknod(target, stat.S_IFCHR, os.makedev(0, 0))
                return
            except PermissionError:
                self.chardev = False
        fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        os.setxattr(target, "user.overlay.whiteout", b"", follow_symlinks=False)
        self.xwhiteout_parents.add(parent)

    def _xattrs(self, member: tarfile.TarInfo, path: Path, rel: str) -> None:
        for key, value in (member.pax_headers or {}).items():
            if not key.startswith("SCHILY.xattr."):
                continue
            name = key[len("SCHILY.xattr."):]
            if name.startswith("user.") and ".overlay." not in name:
                with contextlib.suppress(OSError):
                    os.setxattr(path, name, value.encode("utf-8", "surrogateescape"), follow_symlinks=False)
                    continue
            self.meta["xattrs_dropped"].setdefault(rel, []).append(name)

    def _hardlink(self, member: tarfile.TarInfo, path: Path, rel: str) -> bool:
        target, _ = _clean(member.linkname)
        if target is None:
            self._unsafe(rel, f"a hard link out of the layer: {member.linkname}", skipped=True)
            return False
        source = self.dest / target
        if _held(self.dest, target)[0]:  # this layer's own entry (or a link over its parent) decides
            if self._parents_ok(target, create=False) and not stat.S_ISDIR(source.lstat().st_mode):
                os.link(source, path, follow_symlinks=False)
                return True
        else:
            for lower in self.lowers:  # the topmost layer holding the name decides, as the overlay shows it
                held, file = _held(lower, target)
                if file is not None:
                    shutil.copy2(file, path, follow_symlinks=False)
                    return True
                if held:
                    break
        self.meta["skipped"].append([rel, f"hard link to a missing file: {member.linkname}"])
        return False

    def entry(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        rel, unsafe = _clean(member.name)
        if rel is None:
            if unsafe:
                self._unsafe(member.name, unsafe, skipped=True)
            return
        if unsafe:
            self._unsafe(member.name, unsafe, skipped=False)
        if not self._parents_ok(rel):
            self._unsafe(rel, "a parent is a link or a file", skipped=True)
            return
        base = os.path.basename(rel)
        if base == OPAQUE:
            os.setxattr(self.dest / os.path.dirname(rel), "user.overlay.opaque", b"y")
            return
        if base.startswith(WHITEOUT):
            self._whiteout(rel)
            return
        path = self.dest / rel
        if member.uid or member.gid:
            self.meta["owners"][rel] = [member.uid, member.gid]
        mode = member.mode & 0o7777
        if member.isdir():
            self._clear(path, keep_dir=True)
            if not path.is_dir():
                path.mkdir(0o700)
            self.dirs[rel] = (mode, int(member.mtime))
            self._xattrs(member, path, rel)
            return
        if member.ischr() or member.isblk():
            self.meta["skipped"].append([rel, f"a device ({member.devmajor}:{member.devminor})"])
            return
        if mode & 0o6000:
            self.meta["setuid_dropped"].append(rel)
            mode &= ~0o6000
        self._clear(path, keep_dir=False)
        if member.isreg():
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(tar.extractfile(member), out, 1 << 20)
            self._xattrs(member, path, rel)
            os.chmod(path, mode)
        elif member.issym():
            os.symlink(member.linkname, path)
            if _clean(posixpath.join(posixpath.dirname(rel), member.linkname))[1] == "a path out of the layer":
                self._unsafe(rel, f"a link out of the layer, kept: {member.linkname}", skipped=False)
        elif member.islnk():
            self._hardlink(member, path, rel)
            return
        elif member.isfifo():
            os.mkfifo(path, mode)
        else:
            self.meta["skipped"].append([rel, f"an entry of type {member.type!r}"])
            return
        os.utime(path, (member.mtime, member.mtime), follow_symlinks=False)

    def finish(self) -> None:
        # a directory a later entry replaced by a link is left alone: nothing is followed out of the layer
        for parent in self.xwhiteout_parents:
            path = self.dest / parent
            if not self._is_dir(parent):
                continue
            try:
                current = os.getxattr(path, "user.overlay.opaque", follow_symlinks=False)
            except OSError:
                current = b""
            if current != b"y":
                os.setxattr(path, "user.overlay.opaque", b"x", follow_symlinks=False)
        for rel in sorted(self.dirs, key=lambda r: r.count("/"), reverse=True):
            mode, mtime = self.dirs[rel]
            if not self._is_dir(rel):
                continue
            os.chmod(self.dest / rel, (mode & ~0o6000) | 0o700)  # the owner keeps rwx: the store stays removable
            os.utime(self.dest / rel, (mtime, mtime))


def unpack_layer(blob: Path, dest: Path, *, diff_id: str | None, lowers: Iterable[Path] = ()) -> dict:
    """Unpack ``blob`` at ``dest`` (made whole or not at all); returns the layer's meta (also written
    beside it, ``dest.json``). ``diff_id``: the uncompressed digest the layer must have."""
    if dest.is_dir():
        return json.loads(dest.with_suffix(".json").read_text()) if dest.with_suffix(".json").is_file() else {}
    tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
    remove_tree(tmp)
    tmp.mkdir(parents=True)
    layer = _Layer(tmp, lowers)
    stream, proc = _decompressed(blob)
    hashing = _Hashing(stream)
    try:
        with tarfile.open(fileobj=hashing, mode="r|") as tar:
            for member in tar:
                layer.entry(tar, member)
        hashing.drain()
        layer.finish()
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        remove_tree(tmp)
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            raise ImageError(f"no space left unpacking layer {blob.name}", hint="free disk space or "
                             "`sweworld env gc`") from exc
        raise ImageError(f"layer {blob.name} could not be unpacked: {exc}",
                         hint="the blob in the store is damaged: " + _REDO) from exc
    finally:
        stream.close()
        if proc is not None:
            proc.wait()
    digest = "sha256:" + hashing.sha.hexdigest()
    if diff_id and digest != diff_id:
        remove_tree(tmp)
        raise ImageError(f"layer {blob.name} unpacks to {digest}, not the {diff_id} its image names",
                         hint="the blob is corrupt or the image malformed: " + _REDO)
    meta = {**layer.meta, "diff_id": digest, "size": hashing.size, "whiteouts": "chardev" if layer.chardev else "xattr"}
    os.chmod(tmp, 0o755)
    dest.with_suffix(".json").write_text(json.dumps(meta))
    try:
        os.rename(tmp, dest)
    except OSError:  # another process unpacked it first
        remove_tree(tmp)
        if not dest.is_dir():
            raise
    return meta
