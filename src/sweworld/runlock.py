"""One process per run: an exclusive ``flock`` on a lock file in the run's directory.

``eval``, ``rollout`` and ``validate`` resume what a previous run left, so two processes on the same
run would both redo everything and overwrite each other's files. The first takes the lock and keeps
it while it runs (the kernel drops it when the process ends, even by SIGKILL, so a lock is never
stale); the lock file records its pid and command line. The second fails at once with
``RunInUseError`` naming that pid.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from pathlib import Path

from sweworld.core.errors import RunInUseError

LOCK_NAME = ".sweworld.lock"


class RunLock:
    """A held run lock; ``release()`` (or leaving the ``with`` block, or the process ending) frees it."""

    def __init__(self, path: Path, fd: int):
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the only descriptor of the open file drops the flock

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(path: Path) -> str:
    """What the lock file says about the process holding it ("" when it says nothing yet)."""
    with contextlib.suppress(OSError):
        return path.read_text(encoding="utf-8", errors="replace").strip()
    return ""


def lock_run(directory: Path, what: str, *, name: str = LOCK_NAME) -> RunLock:
    """Lock the run whose files live in ``directory`` (created), with ``directory/name`` as lock file.

    Raises:
        RunInUseError: another process holds the lock (the message names its pid).
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        by = holder(path)
        pid = by.split()[0] if by else ""
        raise RunInUseError(f"{what} is in use by pid {pid or '(unknown)'}"
                            + (f" ({by[len(pid):].strip()})" if by[len(pid):].strip() else ""),
                            where=str(directory),
                            hint="wait for that process to end (or stop it), or pick another run id / --out") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()} {' '.join(sys.argv)}\n".encode())
    return RunLock(path, fd)


def _current_command_context():
    """The context of the running command: typer >= 0.20 runs on its own copy of click, whose
    context stack ``click.get_current_context`` does not see."""
    try:
        from typer._click.globals import get_current_context
    except ImportError:  # typer on the real click
        from click import get_current_context
    return get_current_context(silent=True)


def lock_for_command(directory: Path, what: str, *, name: str = LOCK_NAME) -> RunLock:
    """``lock_run``, released when the running typer/click command ends (else when the process ends)."""
    lock = lock_run(directory, what, name=name)
    ctx = _current_command_context()
    if ctx is not None:
        ctx.call_on_close(lock.release)
    return lock
