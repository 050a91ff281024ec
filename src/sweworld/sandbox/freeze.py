"""Frozen copies of an episode's upper layers, in overlayfs's own format, and the comparisons of them.

A snapshot copies what the episode changed (its upper layers: the files it wrote, the 0:0 character
devices that stand for what it deleted, ``user.overlay.opaque`` on what it replaced whole), never
the tree below. A copy is immutable, so a fork stacks it as a lower layer and a later snapshot
hard-links every file that did not change since (``unchanged``): the disk of a snapshot is the
bytes changed since the last one.

``unchanged`` compares with a stamp: a file is the same as its frozen copy when size, mode and mtime
agree and its ``ctime`` (which every write moves, on the same coarse clock as the stamp's mtime) is
older than the stamp taken before the copy was made.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from sweworld.core.overlayfs import OPAQUE, is_opaque, is_whiteout

KEPT_XATTRS = (OPAQUE,)
"""The overlay attributes a copy keeps: ``origin`` and ``impure`` describe the upper's own lower
layers and mean nothing over another stack."""
STAMP = ".stamp"


def lstat(path: Path | str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def unchanged(live: os.stat_result, frozen: os.stat_result | None, stamp_ns: int) -> bool:
    """Whether the live entry still equals its frozen copy taken after ``stamp_ns`` (see the module)."""
    if frozen is None or stat.S_IFMT(live.st_mode) != stat.S_IFMT(frozen.st_mode):
        return False
    if stat.S_ISDIR(live.st_mode):
        return False
    return (live.st_mode == frozen.st_mode and live.st_size == frozen.st_size
            and live.st_mtime_ns == frozen.st_mtime_ns and live.st_ctime_ns < stamp_ns
            and (not stat.S_ISCHR(live.st_mode) or live.st_rdev == frozen.st_rdev))


def stamp(directory: Path) -> int:
    """A fresh file's mtime in ``directory``: now, on the filesystem's clock (what ctimes compare with)."""
    path = directory / STAMP
    path.touch()
    return path.stat().st_mtime_ns


@dataclass
class Copied:
    """What one freeze wrote: ``bytes`` of new data (hard links to an earlier copy count nothing), of
    ``size`` bytes of files in all."""

    bytes: int = 0
    files: int = 0
    linked: int = 0
    size: int = 0


def _copy_file(src: str, dest: str, st: os.stat_result) -> None:
    """``src``'s bytes, mode and times into a new file ``dest``, by descriptors (in-kernel copy)."""
    fin = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fout = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            while os.copy_file_range(fin, fout, 1 << 30):
                pass
            os.fchmod(fout, stat.S_IMODE(st.st_mode))
            os.utime(fout, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(fout)
    finally:
        os.close(fin)


def _copy_meta(src: str, dest: str, st: os.stat_result) -> None:
    """A directory's overlay attributes, mode and times."""
    for name in KEPT_XATTRS:
        try:
            os.setxattr(dest, name, os.getxattr(src, name, follow_symlinks=False), follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in (errno.ENODATA, errno.ENOTSUP):
                raise
    os.chmod(dest, stat.S_IMODE(st.st_mode))
    os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))


def freeze(src: Path, dest: Path, *, previous: Path | None = None, previous_stamp: int = 0,
           skip: frozenset[str] = frozenset()) -> Copied:
    """Copy the tree ``src`` into ``dest``, hard-linking what ``previous`` (an earlier frozen copy
    of the same live directory, stamped ``previous_stamp``) already holds unchanged. ``skip``: names
    left out at the top."""
    done = Copied()
    dirs: list[tuple[str, str, os.stat_result]] = []

    def walk(s: str, d: str, p: str | None, top: bool) -> None:
        with os.scandir(s) as entries:
            for entry in entries:
                if top and entry.name in skip:
                    continue
                sp, dp = entry.path, os.path.join(d, entry.name)
                pp = os.path.join(p, entry.name) if p is not None else None
                st = entry.stat(follow_symlinks=False)
                mode = st.st_mode
                if stat.S_ISDIR(mode):
                    os.mkdir(dp)
                    dirs.append((sp, dp, st))
                    walk(sp, dp, pp, False)
                elif is_whiteout(sp, st):  # either kind, frozen as the kernel writes one
                    os.mknod(dp, stat.S_IFCHR | 0o600, 0)
                    done.files += 1
                elif stat.S_ISREG(mode):
                    done.size += st.st_size
                    old = lstat(pp) if pp is not None else None
                    if old is not None and unchanged(st, old, previous_stamp):
                        os.link(pp, dp)
                        done.linked += 1
                        continue
                    _copy_file(sp, dp, st)
                    done.bytes += st.st_size
                    done.files += 1
                elif stat.S_ISLNK(mode):
                    os.symlink(os.readlink(sp), dp)
                    done.files += 1
                # sockets, fifos and devices are not files a snapshot keeps

    dest.mkdir(parents=True, exist_ok=True)
    walk(str(src), str(dest), str(previous) if previous is not None else None, True)
    for sp, dp, st in reversed(dirs):  # after the children: their creation moved each mtime
        _copy_meta(sp, dp, st)
    return done


def resolve(layers: list[Path], rel: tuple[str, ...]) -> tuple[Path, os.stat_result] | None:
    """What an overlay of ``layers`` (top first) shows at ``rel``: the layer path and its stat, or
    None (absent: never there, a whiteout, or hidden by an opaque directory or a file above)."""
    for layer in layers:
        path = layer
        for i, part in enumerate(rel):
            path = path / part
            st = lstat(path)
            if st is None:
                break  # this layer says nothing below here
            if i == len(rel) - 1:
                return None if is_whiteout(path, st) else (path, st)
            if not stat.S_ISDIR(st.st_mode):
                return None  # a file or whiteout above hides everything under it
            if is_opaque(path):
                return _resolve_here(path, rel[i + 1:])
        else:
            if not rel:
                return path, os.lstat(path)
    return None


def _resolve_here(path: Path, rest: tuple[str, ...]) -> tuple[Path, os.stat_result] | None:
    """Below an opaque directory only its own layer counts."""
    for i, part in enumerate(rest):
        path = path / part
        st = lstat(path)
        if st is None or is_whiteout(path, st) or (i < len(rest) - 1 and not stat.S_ISDIR(st.st_mode)):
            return None
    return path, os.lstat(path)


def children(layers: list[Path], rel: tuple[str, ...]) -> list[str]:
    """The names an overlay of ``layers`` may show in directory ``rel`` (``resolve`` decides each)."""
    names: set[str] = set()
    for layer in layers:
        path = layer.joinpath(*rel)
        st = lstat(path)
        if st is None:
            continue
        if not stat.S_ISDIR(st.st_mode):
            break
        names.update(os.listdir(path))
        if is_opaque(path):
            break
    return sorted(names)


class TooLarge(Exception):
    """A plan would carry more than its ``limit``."""


@dataclass
class Plan:
    """What turns a live tree back into a snapshot's, as operations through the episode's own view
    (``server.py``'s ``restore``): ``(kind, path, data, mode, mtime_ns)``; kind ``rm``, ``dir``,
    ``file`` or ``link``."""

    ops: list[tuple[str, str, bytes, int, int]] = field(default_factory=list)
    bytes: int = 0
    #: most bytes of file data the plan may carry (``TooLarge`` past it, before reading more)
    limit: int | None = None

    def emit(self, layers: list[Path], rel: tuple[str, ...], target: str) -> None:
        """The whole of what ``layers`` show at ``rel`` (after an ``rm`` of what was there)."""
        found = resolve(layers, rel)
        if found is None:
            return
        path, st = found
        where = _inside(target, rel)
        if stat.S_ISDIR(st.st_mode):
            self.ops.append(("dir", where, b"", stat.S_IMODE(st.st_mode), st.st_mtime_ns))
            for name in children(layers, rel):
                self.emit(layers, (*rel, name), target)
        elif stat.S_ISLNK(st.st_mode):
            self.ops.append(("link", where, os.fsencode(os.readlink(path)), 0, 0))
        elif stat.S_ISREG(st.st_mode):
            if self.limit is not None and self.bytes + st.st_size > self.limit:
                raise TooLarge(f"over {self.limit} bytes to write")
            data = path.read_bytes()
            self.bytes += len(data)
            self.ops.append(("file", where, data, stat.S_IMODE(st.st_mode), st.st_mtime_ns))


def _inside(target: str, rel: tuple[str, ...]) -> str:
    return target.rstrip("/") + "/" + "/".join(rel) if rel else target


def _hides(tops: list[Path], rel: tuple[str, ...]) -> bool:
    """Whether ``tops`` hide the layers under them at directory ``rel`` (an opaque directory there)."""
    return any(is_opaque(top.joinpath(*rel)) for top in tops)


def rewind(plan: Plan, *, now: list[Path], then: list[Path], lowers: list[Path], stamp_ns: int, target: str,
           skip: frozenset[str] = frozenset()) -> None:
    """Add to ``plan`` what makes the view of ``now + lowers`` equal that of ``then + lowers`` at
    ``target``. Only the entries the tops (``now``: a live upper; ``then``: a snapshot's layers)
    hold are compared, so the work is what changed. With one top each, an entry the live upper holds
    unchanged since ``then[0]`` froze it (stamped ``stamp_ns``) is skipped unread."""
    tops = [*now, *then]
    shortcut = len(now) == 1 and len(then) >= 1

    def visit(rel: tuple[str, ...]) -> None:
        names = set()
        for top in tops:
            path = top.joinpath(*rel)
            st = lstat(path)
            if st is not None and stat.S_ISDIR(st.st_mode):
                names.update(os.listdir(path))
        for name in sorted(names):
            if not rel and name in skip:
                continue
            sub = (*rel, name)
            if shortcut:
                u = lstat(now[0].joinpath(*sub))
                if u is not None and unchanged(u, lstat(then[0].joinpath(*sub)), stamp_ns):
                    continue
            cur, want = resolve([*now, *lowers], sub), resolve([*then, *lowers], sub)
            if (cur is not None and want is not None and stat.S_ISDIR(cur[1].st_mode)
                    and stat.S_ISDIR(want[1].st_mode) and _hides(now, sub) == _hides(then, sub)):
                if cur[1].st_mode != want[1].st_mode:
                    plan.ops.append(("dir", _inside(target, sub), b"", stat.S_IMODE(want[1].st_mode), 0))
                visit(sub)
                continue
            if (cur is None and want is None) or (cur is not None and want is not None and cur[0] == want[0]):
                continue  # absent on both sides, or the very same file of a shared layer
            if cur is not None:
                plan.ops.append(("rm", _inside(target, sub), b"", 0, 0))
            plan.emit([*then, *lowers], sub, target)

    visit(())
