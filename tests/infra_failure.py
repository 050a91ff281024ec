"""An infrastructure failure on demand: the sandbox of an episode killed from the host.

An episode cannot kill its own sandbox (its server is the pid namespace's first process, which
ignores the signals of the processes it runs), so tests of how a seam reports a dead episode have
the host kill it: while ``dies_on_marker()`` is open, an episode that creates ``/tmp/<MARKER>``
has its sandbox (the bubblewrap process, whose working directory is the episode's directory) killed
with SIGKILL, as the OOM killer or an operator would.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path

MARKER = ".sweworld-test-die"
DIE = f"touch /tmp/{MARKER}; sleep 30"
"""The command that makes an episode die (within ``dies_on_marker``)."""


def _kill_sandbox_of(episode: Path) -> bool:
    killed = False
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/cwd") == str(episode):
                os.kill(int(pid), signal.SIGKILL)
                killed = True
    return killed


@contextlib.contextmanager
def dies_on_marker(within: float = 180.0):
    """See the module docstring. Stops by itself after ``within`` seconds."""
    stop = threading.Event()
    root = Path(os.environ["SWEWORLD_HOME"]) / "episodes"

    def watch() -> None:
        deadline = time.monotonic() + within
        while not stop.is_set() and time.monotonic() < deadline:
            for hit in root.glob(f"*/tmp/{MARKER}"):
                if _kill_sandbox_of(hit.parent.parent):
                    hit.unlink(missing_ok=True)
            stop.wait(0.02)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
