"""Total disk and inode bounds of an episode (``SandboxConfig.disk``, ``SandboxConfig.inodes``).

No filesystem bound is at hand without root: a size- and inode-limited tmpfs mounted in the
episode's own namespace would hold the episode's files in memory and out of the host's reach (the
host reads and writes the upper directories by their paths: snapshots, restore plans, forks into
spares, ``keep``), a loop-mounted image or a project quota needs root, and a cgroup has no disk
controller. So the bound is enforced from outside, by measuring.

One thread per host process (``_Watcher``), however many episodes are live, measures each episode's
writable directories: its episode directory (upper layers, work directories, ``/tmp``, scratch
directories, all under it) and any upper layer the caller placed elsewhere (environment builds).
Bytes are blocks allocated (``st_blocks``: a sparse file counts what it holds), a file with several
links once; inodes are every file, directory and link. Snapshots are the caller's, not the
episode's writing: they are checked against the same ``disk`` when taken (``branches``), not here. In an overlay workspace the uppers hold only
what the episode wrote, so a measurement costs what the episode wrote, not the repository (a copy
workspace's upper is the whole tree: there it costs the tree too).

An episode running a command is measured every ``INTERVAL`` seconds, one between commands (a
process it left running may still write) every ``IDLE_INTERVAL``; never sooner than ``COST_FACTOR``
times its last measurement took, so the thread spends at most about a fifth of one core on an episode
however much it wrote. Past a bound the episode's process tree is killed at once (as a server that
stopped answering is: ``ServerSession``), and its command, and every later one, raises
``DiskBoundError`` (an ``InfraError``) naming the bound, what was held and the field to raise.
Between two measurements a fast writer runs on: ``docs/rootless.md`` gives the measured overshoot.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sweworld.core.errors import SandboxError

log = logging.getLogger(__name__)

INTERVAL = 0.1
"""Seconds between two measurements of an episode while it runs a command."""
IDLE_INTERVAL = 2.0
"""Seconds between two measurements of an episode between commands."""
COST_FACTOR = 4.0
"""An episode is measured again no sooner than this many times its last measurement took."""
MiB = 2**20
MAX_DEPTH = 256
"""Levels of directories a measurement descends (it holds one descriptor per level); an episode whose
directories nest deeper is past its bound, since what lies below could not be measured."""


@dataclass
class Usage:
    """What an episode's writable directories hold: bytes allocated and inodes."""

    bytes: int = 0
    inodes: int = 0
    #: directories nest deeper than ``MAX_DEPTH``: what lies below was not measured
    too_deep: bool = False


_Opened = tuple[int, int | None]
"""A directory's fd, and the mode to put back once it is listed (``None``: it was readable)."""


def _open_dir(name: str | Path, parent: int | None) -> _Opened | None:
    """A directory opened for listing (``None``: gone, or not a directory any more). A directory the
    episode made unreadable (mode 000) is the host user's own: it is given ``u+rx`` while it is
    listed (its entries are stat'ed through it), then its mode back; all through descriptors, so a
    directory swapped for a link is never followed."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, dir_fd=parent), None
    except PermissionError:
        pass
    except OSError:
        return None
    try:
        held = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return None
    try:
        mode = stat.S_IMODE(os.fstat(held).st_mode)
        proc = f"/proc/self/fd/{held}"  # chmod of what the O_PATH descriptor holds, never a link's target
        os.chmod(proc, mode | stat.S_IRUSR | stat.S_IXUSR)
        try:
            return os.open(proc, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), mode
        except OSError:
            os.chmod(proc, mode)
            return None
    except OSError:
        return None
    finally:
        os.close(held)


def _list(fd: int, usage: Usage, linked: set[tuple[int, int]]) -> list[str]:
    """Count what the directory ``fd`` holds (one level) into ``usage``; the names of its directories."""
    children: list[str] = []
    try:
        with os.scandir(fd) as entries:  # a duplicate of fd, closed with the iterator
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue  # removed since it was listed
                usage.inodes += 1
                if stat.S_ISDIR(info.st_mode):
                    usage.bytes += info.st_blocks * 512
                    children.append(entry.name)
                elif info.st_nlink < 2 or (info.st_dev, info.st_ino) not in linked:
                    if info.st_nlink > 1:
                        linked.add((info.st_dev, info.st_ino))
                    usage.bytes += info.st_blocks * 512
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ESTALE):
            log.debug("disk bound: cannot list a directory: %s", exc)
    return children


def _close(opened: _Opened) -> None:
    fd, mode = opened
    if mode is not None:
        with contextlib.suppress(OSError):
            os.fchmod(fd, mode)
    os.close(fd)


def _scan(opened: _Opened, usage: Usage, linked: set[tuple[int, int]]) -> None:
    """Add what the opened directory holds below it to ``usage`` (closes it). Depth first, one
    descriptor per level of the path being listed (never one per directory listed: a wide tree would
    hold thousands); below ``MAX_DEPTH`` levels nothing is listed and ``usage.too_deep`` is set."""
    stack = [(opened, _list(opened[0], usage, linked))]
    try:
        while stack:
            parent, children = stack[-1]
            if not children:
                _close(stack.pop()[0])
                continue
            name = children.pop()
            if len(stack) >= MAX_DEPTH:
                usage.too_deep = True
                continue
            child = _open_dir(name, parent[0])
            if child is not None:
                stack.append((child, _list(child[0], usage, linked)))
    finally:
        for held, _children in reversed(stack):
            _close(held)


def measure(paths: Iterable[Path]) -> Usage:
    """Bytes allocated and inodes under ``paths`` (each directory itself included), never following
    a symbolic link and never failing on what vanishes meanwhile."""
    usage, linked = Usage(), set()
    for path in paths:
        opened = _open_dir(path, None)
        if opened is None:
            continue
        info = os.fstat(opened[0])
        usage.bytes += info.st_blocks * 512
        usage.inodes += 1
        _scan(opened, usage, linked)
    return usage


def describe(disk: int | None, inodes: int | None) -> str:
    """The bounds in words (``Sandbox.info``, ``sweworld doctor``)."""
    if disk is None and inodes is None:
        return "none"
    parts = [f"{disk / 2**30:.1f} GiB" if disk is not None else "no byte bound",
             f"{inodes} inodes" if inodes is not None else "no inode bound"]
    return f"{', '.join(parts)}; measured every {INTERVAL:g} s while a command runs, every {IDLE_INTERVAL:g} s between"


class DiskBoundError(SandboxError):
    """An episode passed its disk or inode bound and was ended (an infrastructure error)."""

    def __init__(self, episode: str, bound: str, held: int, limit: int):
        self.episode, self.bound, self.held, self.limit = episode, bound, held, limit
        fix = (f"raise the sandbox config's `{bound}` field (SandboxConfig.{bound}, "
               f"{'bytes' if bound == 'disk' else 'inodes'}; None: no bound) if a legitimate run needs more, "
               "or have the episode write less")
        if bound == "disk":
            what = f"{held / MiB:.1f} MiB, past its disk bound of {limit / MiB:.1f} MiB"
        elif bound == "depth":
            what = f"directories nested deeper than {limit} levels, below which nothing is measured"
            fix = "have the episode nest its directories less deeply (or set both disk and inodes to None)"
        else:
            what = f"{held} inodes (files, directories, links), past its inode bound of {limit}"
        super().__init__(
            f"episode {episode} was ended: its writable directories (upper layers, /tmp, scratch "
            f"directories) held {what}", hint=f"{fix}; open a new episode to go on")


@dataclass(frozen=True)
class Bounds:
    """The bounds of one episode; ``None``: none."""

    disk: int | None
    inodes: int | None


class Watch:
    """One episode's bounds, the directories they cover, and how to end it."""

    def __init__(self, label: str, paths: list[Path], bounds: Bounds):
        self.label, self.paths, self.bounds = label, paths, bounds
        self.busy = 0
        self.due = time.monotonic() + IDLE_INTERVAL
        self.breach: DiskBoundError | None = None
        self.last = Usage()
        self._proc: subprocess.Popen | None = None
        self._closed = False

    def attach(self, proc: subprocess.Popen) -> None:
        """The sandbox's outermost process: killing it ends the whole tree (``--die-with-parent``,
        then the pid namespace's first process)."""
        self._proc = proc
        _watcher().add(self)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Around a request to the episode: measured every ``INTERVAL`` while it lasts."""
        _watcher().busy(self, +1)
        try:
            yield
        finally:
            _watcher().busy(self, -1)

    def check(self) -> DiskBoundError | None:
        """Measure now; the breach found (the episode is then ended), or ``None``."""
        usage = measure(self.paths)
        self.last = usage
        error = None
        if self.bounds.disk is not None and usage.bytes > self.bounds.disk:
            error = DiskBoundError(self.label, "disk", usage.bytes, self.bounds.disk)
        elif self.bounds.inodes is not None and usage.inodes > self.bounds.inodes:
            error = DiskBoundError(self.label, "inodes", usage.inodes, self.bounds.inodes)
        elif usage.too_deep and (self.bounds.disk is not None or self.bounds.inodes is not None):
            error = DiskBoundError(self.label, "depth", MAX_DEPTH, MAX_DEPTH)
        if error is not None and not self._closed:
            self.end(error)
        return error

    def end(self, error: DiskBoundError) -> None:
        self.breach = error
        log.warning("%s", error.message)
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()
        _watcher().remove(self)

    def close(self) -> None:
        self._closed = True
        _watcher().remove(self)


class _Watcher:
    """The one thread of this process that measures every live episode when it is due."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._watches: dict[int, Watch] = {}
        self._thread: threading.Thread | None = None

    def add(self, watch: Watch) -> None:
        with self._cond:
            self._watches[id(watch)] = watch
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="sweworld-diskbound", daemon=True)
                self._thread.start()
            self._cond.notify()

    def remove(self, watch: Watch) -> None:
        with self._cond:
            self._watches.pop(id(watch), None)

    def busy(self, watch: Watch, step: int) -> None:
        with self._cond:
            watch.busy += step
            if step > 0 and watch.busy == 1:
                watch.due = min(watch.due, time.monotonic() + INTERVAL)
                self._cond.notify()

    def _next(self) -> list[Watch]:
        """Wait until some episode is due; those due."""
        with self._cond:
            while True:
                now = time.monotonic()
                due = [w for w in self._watches.values() if w.due <= now]
                if due:
                    return due
                wait = min((w.due for w in self._watches.values()), default=now + 3600) - now
                self._cond.wait(wait)

    def _loop(self) -> None:
        while True:
            for watch in self._next():
                started = time.monotonic()
                try:
                    watch.check()
                except Exception:  # never let one episode's measurement stop the others'
                    log.exception("disk bound: measuring episode %s failed", watch.label)
                took = time.monotonic() - started
                with self._cond:
                    watch.due = time.monotonic() + max(INTERVAL if watch.busy else IDLE_INTERVAL, COST_FACTOR * took)


_WATCHER: tuple[int, _Watcher] | None = None
_WATCHER_LOCK = threading.Lock()


def _watcher() -> _Watcher:
    """This process's watcher (a forked child has no watcher thread: it makes its own)."""
    global _WATCHER
    with _WATCHER_LOCK:
        if _WATCHER is None or _WATCHER[0] != os.getpid():
            _WATCHER = (os.getpid(), _Watcher())
        return _WATCHER[1]

