"""Process limits: per episode, and for all of one user's episodes together.

Per episode. Since Linux 5.14 ``RLIMIT_NPROC`` is counted per user namespace, so for an ordinary
user it bounds the episode (its own namespace) exactly. The kernel never enforces it for processes
whose real uid is host root (``INIT_USER``), however, so when sweworld runs as root it puts the
sandbox in a pids cgroup (v1 ``pids`` hierarchy or cgroup v2) with ``pids.max``. Where neither is
available the limit is reported as not enforced.

All episodes together: ``hostlimits.reserve_for_user``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import platform
import threading
import time
import uuid
from pathlib import Path


def _pids_root() -> Path | None:
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as handle:
        for line in handle:
            parts = line.split(" - ")
            if len(parts) != 2:
                continue
            mount_point = line.split()[4]
            fstype, _src, opts = [*parts[1].split(), "", ""][:3]
            if fstype == "cgroup" and "pids" in opts.split(","):
                return Path(mount_point)
            if fstype == "cgroup2":
                controllers = Path(mount_point, "cgroup.controllers")
                if controllers.exists() and "pids" in controllers.read_text().split():
                    return Path(mount_point)
    return None


_FREE: list[Path] = []  # empty cgroups of closed sandboxes, reused: creating one costs ~20 ms
_FREE_LOCK = threading.Lock()


def _release_all() -> None:
    with _FREE_LOCK:
        while _FREE:
            with contextlib.suppress(OSError):
                _FREE.pop().rmdir()


atexit.register(_release_all)
_SWEPT: set[Path] = set()


def _sweep(parent: Path) -> None:
    """Remove empty cgroups left by sweworld processes that were killed (atexit never ran)."""
    if parent in _SWEPT:
        return
    _SWEPT.add(parent)
    for path in parent.glob("*-*"):
        owner = path.name.split("-", 1)[0]
        if owner.isdigit() and not Path("/proc", owner).exists():
            with contextlib.suppress(OSError):
                path.rmdir()


class PidsCgroup:
    """A pids cgroup holding one sandbox; the sandbox's first process joins it before it execs
    anything else (``procs``: ``isolation.Launch`` writes its pid there from a shell)."""

    def __init__(self, limit: int):
        self.path: Path | None = None
        root = _pids_root()
        if os.geteuid() != 0 or root is None:
            return
        with _FREE_LOCK:
            _sweep(root / "sweworld")
            path = _FREE.pop() if _FREE else root / "sweworld" / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir(parents=True, exist_ok=True)
            (path / "pids.max").write_text(str(limit))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return
        self.path = path

    @property
    def procs(self) -> Path | None:
        """The file a process writes its pid to, to join the cgroup."""
        return None if self.path is None else self.path / "cgroup.procs"

    def remove(self) -> None:
        """Give the cgroup back: kept for reuse once empty, else removed when it empties."""
        if self.path is None:
            return
        path, self.path = self.path, None
        for _ in range(50):
            try:
                if not (path / "cgroup.procs").read_text().strip():
                    with _FREE_LOCK:
                        _FREE.append(path)
                    return
            except OSError:
                return
            time.sleep(0.01)
        with contextlib.suppress(OSError):
            path.rmdir()


def per_namespace_rlimits() -> bool:
    """Whether this kernel counts ``RLIMIT_NPROC`` per user namespace (Linux >= 5.14)."""
    release = platform.release().split("-")[0].split(".")
    try:
        return (int(release[0]), int(release[1])) >= (5, 14)
    except (ValueError, IndexError):
        return True


def enforcement(limit: int | None, route: str = "userns") -> str:
    """How the process limit is enforced for a sandbox started now on ``route`` (``sandbox.route``)."""
    if limit is None:
        return "none"
    if os.geteuid() == 0:
        return "cgroup" if _pids_root() is not None else "not enforced (root without a pids cgroup)"
    if route != "userns":
        return "rlimit (counting every process of the user: the episode has no user namespace of its own)"
    if not per_namespace_rlimits():
        return "rlimit (counting every process of the user: kernel < 5.14)"
    return "rlimit"
