"""Process limit for sandboxes started by root.

``RLIMIT_NPROC`` is counted per user namespace, so for an ordinary user it bounds the sandbox
exactly. The kernel never enforces it for processes whose real uid is host root (``INIT_USER``),
however, so when sweworld runs as root it puts the sandbox in a pids cgroup (v1 ``pids`` hierarchy
or cgroup v2) with ``pids.max``. Where neither is available the limit is reported as not enforced.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path


def _pids_root() -> Path | None:
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as handle:
        for line in handle:
            parts = line.split(" - ")
            if len(parts) != 2:
                continue
            mount_point = line.split()[4]
            fstype, _src, opts = (parts[1].split() + ["", ""])[:3]
            if fstype == "cgroup" and "pids" in opts.split(","):
                return Path(mount_point)
            if fstype == "cgroup2":
                controllers = Path(mount_point, "cgroup.controllers")
                if controllers.exists() and "pids" in controllers.read_text().split():
                    return Path(mount_point)
    return None


class PidsCgroup:
    """A pids cgroup holding one sandbox; ``wrap`` prefixes a command so it enters it first."""

    def __init__(self, limit: int):
        self.path: Path | None = None
        root = _pids_root()
        if os.geteuid() != 0 or root is None:
            return
        path = root / "sweworld" / uuid.uuid4().hex[:12]
        try:
            path.mkdir(parents=True)
            (path / "pids.max").write_text(str(limit))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return
        self.path = path

    def wrap(self, argv: list[str]) -> list[str]:
        if self.path is None:
            return argv
        procs = self.path / "cgroup.procs"
        return ["/bin/sh", "-c", f'echo $$ > "{procs}" && exec "$@"', "sweworld-pids", *argv]

    def remove(self) -> None:
        if self.path is None:
            return
        with contextlib.suppress(OSError):
            self.path.rmdir()
        self.path = None


def enforcement(limit: int | None) -> str:
    """How the process limit is enforced for a sandbox started now."""
    if limit is None:
        return "none"
    if os.geteuid() != 0:
        return "rlimit"
    return "cgroup" if _pids_root() is not None else "not enforced (root without a pids cgroup)"
