"""bash's own syntax check, ``bash -n``, run on the host with the host's bash.

``bash -n`` reads a command and runs nothing of it (no expansion, no substitution), so it runs in the
caller's process whatever the command is. A plainly valid command (:func:`sweworld.shell.plain.plainly_valid`)
is not sent to bash. The processes are started ahead of need, one at a time (``_Checker``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from sweworld.shell.plain import plainly_valid

CHECK_TIMEOUT = 30.0
_UNTERMINATED = re.compile(r"here-document at line \d+ delimited by end-of-file \(wanted `([^'\n]*)'\)")


@dataclass(frozen=True)
class SyntaxCheck:
    """``bash -n``'s verdict: its exit code (0: valid) and what it wrote (warnings, or the error)."""

    exit_code: int
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def _host_bash() -> str:
    return shutil.which("bash") or "/bin/bash"


class _Checker:
    """``bash -n`` processes started ahead of need, one at a time: a check writes the command to one
    already waiting on its stdin and waits for its verdict; the next one starts in the background."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: subprocess.Popen | None = None
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sweworld-bash-n")

    @staticmethod
    def _start() -> subprocess.Popen:
        return subprocess.Popen(["bash", "--norc", "--noprofile", "-n"], executable=_host_bash(), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={})

    def _refill(self) -> None:
        process = self._start()
        with self._lock:
            if self._ready is None:
                self._ready = process
                return
        process.kill()
        process.wait()

    def check(self, command: str) -> tuple[int, str, str]:
        """(exit code, stdout, stderr) of ``bash -n`` on ``command``."""
        with self._lock:
            process, self._ready = self._ready, None
        if process is None or process.poll() is not None:
            process = self._start()
        self._spawner.submit(self._refill)
        out, err = process.communicate((command + "\n").encode(), timeout=CHECK_TIMEOUT)
        return process.returncode, out.decode(errors="backslashreplace"), err.decode(errors="backslashreplace")


_CHECKER: list[_Checker] = []
_CHECKER_LOCK = threading.Lock()


def _checker() -> _Checker:
    with _CHECKER_LOCK:
        if not _CHECKER:
            _CHECKER.append(_Checker())
        return _CHECKER[0]


def syntax_check(command: str) -> SyntaxCheck:
    """``bash -n``'s verdict on ``command`` (a plainly valid one is valid without asking bash)."""
    if plainly_valid(command):
        return SyntaxCheck(0)
    return SyntaxCheck(*_checker().check(command))


def closers(warnings: str) -> str:
    """The delimiter lines of the here-documents ``bash -n`` found unterminated (its warnings): bash ends
    them at the end of the input; a command wrapped in more text needs them written out."""
    return "".join(f"\n{wanted}" for wanted in _UNTERMINATED.findall(warnings))
