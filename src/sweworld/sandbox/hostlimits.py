"""The host process's own limits, set once before its first episode (``prepare``).

- Open files: every live episode holds three pipes in the host process; an ordinary user's soft
  ``RLIMIT_NOFILE`` is often 1024, which 300-odd live episodes exhaust (root's is usually higher, so
  no root run ever met it). The soft limit is raised to the hard one.
- Processes of all episodes together: a user namespace checks every fork against the
  ``RLIMIT_NPROC`` its creator had, counting all the user's processes (each episode's own limit is
  counted in its own namespace, ``pids``). The soft limit is lowered to the hard one less
  ``USER_RESERVE``: however many episodes run and whatever they start, the user's own shell and
  other programs keep that many processes.
"""

from __future__ import annotations

import contextlib
import os
import resource
import threading

USER_RESERVE = 256
"""Processes of the user that no number of episodes can take (a quarter of a smaller limit)."""
_DONE: dict[str, tuple[int, int] | None] = {}
_LOCK = threading.Lock()


def raise_open_files() -> tuple[int, int]:
    """The soft ``RLIMIT_NOFILE`` raised to the hard limit (never lowered); returns (soft, hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def reserve_for_user(reserve: int = USER_RESERVE) -> tuple[int, int] | None:
    """The soft ``RLIMIT_NPROC`` lowered to the hard limit less ``reserve`` (never raised). Returns
    (soft, hard) as set, None where the user has no finite limit (or is root, whom the kernel does
    not count)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    if os.geteuid() == 0 or hard == resource.RLIM_INFINITY:
        return None
    reserve = min(reserve, hard // 4)  # a small limit keeps a quarter
    wanted = hard - reserve if soft == resource.RLIM_INFINITY else min(soft, hard - reserve)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NPROC, (wanted, hard))
        return wanted, hard
    return None


def prepare() -> None:
    """Both, once per process."""
    with _LOCK:
        if not _DONE:
            _DONE["open_files"] = raise_open_files()
            _DONE["processes"] = reserve_for_user()


def reserved() -> tuple[int, int] | None:
    """What ``prepare`` set for processes (None: nothing, or not yet)."""
    return _DONE.get("processes")
