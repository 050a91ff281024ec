"""Host side of the in-sandbox agent: one process, one JSON line per request and per reply."""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import threading
import time
from pathlib import Path

from sweworld.errors import SandboxError
from sweworld.types import ExecResult

STARTUP_TIMEOUT = 60.0
GRACE = 30.0


class AgentSession:
    """Starts the sandbox command and talks to the agent inside it."""

    def __init__(self, argv: list[str], log_path: Path):
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in close()
        self._lock = threading.Lock()
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._log, close_fds=True)
        except OSError as exc:
            self._log.close()
            raise SandboxError(f"cannot start the sandbox: {exc}") from exc
        self._buf = b""
        ready = self._read_line(STARTUP_TIMEOUT)
        if not ready.get("ready"):
            self.close()
            raise SandboxError(f"the sandbox agent did not start: {ready}")

    def _fail(self, what: str) -> SandboxError:
        self.close()
        tail = ""
        try:
            tail = self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            pass
        return SandboxError(f"{what}\n  sandbox log ({self.log_path}):\n{tail}",
                            hint="check that bubblewrap is installed and unprivileged user namespaces are "
                            "enabled (sysctl kernel.unprivileged_userns_clone=1)")

    def _read_line(self, timeout: float | None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        out = self.proc.stdout
        assert out is not None
        fd = out.fileno()
        while b"\n" not in self._buf:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                raise self._fail("the sandbox agent stopped answering")
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self._fail(f"the sandbox died (exit status {self.proc.poll()})")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, payload: dict, timeout: float | None = None) -> dict:
        with self._lock:
            if self.proc.poll() is not None or self.proc.stdin is None:
                raise self._fail("the sandbox is closed or died")
            try:
                self.proc.stdin.write(json.dumps(payload).encode() + b"\n")
                self.proc.stdin.flush()
            except BrokenPipeError as exc:
                raise self._fail("the sandbox died") from exc
            return self._read_line(None if timeout is None else timeout + GRACE)

    def run(self, op: str, command: str, *, cwd: str | None, timeout: float | None,
            cap: int | None = None) -> ExecResult:
        reply = self.request({"op": op, "command": command, "cwd": cwd, "timeout": timeout, "cap": cap}, timeout)
        if "error" in reply:
            raise SandboxError(f"the sandbox agent failed: {reply}")
        output = base64.b64decode(reply.pop("output")).decode("utf-8", errors="replace")
        return ExecResult(output=output, **reply)

    def close(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            try:
                if proc.stdin:
                    proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        if proc is not None and proc.stdout:
            proc.stdout.close()
        if not self._log.closed:
            self._log.close()
