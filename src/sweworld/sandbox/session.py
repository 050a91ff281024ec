"""Host side of the in-sandbox server: one process, one framed message per request and per reply
(``sandbox.frames``)."""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import threading
from pathlib import Path

from sweworld.core.errors import SandboxError
from sweworld.core.types import ExecResult
from sweworld.sandbox import diagnose
from sweworld.sandbox.diskbound import Watch
from sweworld.sandbox.frames import encode_msg, read_msg
from sweworld.sandbox.isolation import Launch

STARTUP_TIMEOUT = 60.0
GRACE = 30.0
STDERR_CAP = 64 * 1024


def _readable(fd: int, timeout: float) -> bool:
    """Whether ``fd`` becomes readable (or hangs up) within ``timeout`` seconds: ``poll``, which takes
    any descriptor (``select`` refuses those past 1023, and a process holding hundreds of episodes
    has them)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(max(0, int(timeout * 1000))))


class ServerSession:
    """Starts the sandbox command and talks to the server inside it."""

    def __init__(self, launch: Launch, log_path: Path, watch: Watch | None = None):
        """``watch``: the episode's disk and inode bounds (``diskbound``), measured while it lives."""
        self.log_path = log_path
        self.watch = watch
        self._lock = threading.Lock()
        #: replies still to come for requests whose caller stopped waiting (an awaited command cancelled):
        #: read and dropped before the next request, so every reply goes to its own request
        self._stale = 0
        try:
            # stderr is a pipe, never a host file: what the sandbox's processes write there (unshare,
            # the mount stage, bwrap and the server; nothing the episode runs) is read on failure only
            self.proc = launch.spawn(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     close_fds=True)
        except OSError as exc:
            raise SandboxError(f"cannot start the sandbox: {exc}") from exc
        if watch is not None:
            watch.attach(self.proc)
        ready = self._read(STARTUP_TIMEOUT)
        if ready.get("ready") != b"1":
            raise self._fail(f"the sandbox server did not start: {ready}")
        #: "fresh" (the episode's own session keyring, ``kernel.py``) or why not
        self.keyring = ready.get("keyring", b"unavailable: an older server").decode(errors="replace")

    def _stderr(self) -> str:
        """What the sandbox's processes wrote to standard error so far (at most ``STDERR_CAP`` bytes,
        read without waiting), kept in ``log_path`` too."""
        err = getattr(self, "proc", None) and self.proc.stderr
        if not err or err.closed:
            return ""
        data = b""
        with contextlib.suppress(OSError, ValueError):
            os.set_blocking(err.fileno(), False)
            data = err.read(STDERR_CAP) or b""
        if data:
            with contextlib.suppress(OSError), open(self.log_path, "ab") as handle:
                handle.write(data)
        return data.decode(errors="replace")

    def _fail(self, what: str) -> SandboxError:
        tail = self._stderr()
        self.close()
        if self.watch is not None and self.watch.breach is not None:
            return self.watch.breach  # ended for passing its disk or inode bound: say which, not "died"
        found = diagnose.cause(tail)
        if found is not None:
            what = f"{what}: {found.what}"
        return SandboxError(f"{what}\n  sandbox log ({self.log_path}):\n{tail[-2000:]}",
                            hint=found.fix if found is not None else "run `sweworld doctor`: it says which "
                            "isolation this host allows and what to change where it allows none")

    def _read(self, timeout: float | None) -> dict[str, bytes]:
        """One reply frame. With a timeout, the reply must begin within it, else the sandbox is
        killed: the wait is a ``poll`` on the server's pipe, not a watchdog thread, so a host
        whose user is at its process limit (threads count) still reads its replies. Nothing of a
        reply is buffered before it is read (one request, one reply; stale replies are dropped
        whole), so the pipe becoming readable is the reply beginning, as for ``arequest``."""
        assert self.proc.stdout is not None
        if timeout is not None and not _readable(self.proc.stdout.fileno(), timeout):
            self.proc.kill()
            raise self._fail(f"the sandbox server stopped answering (no reply within {timeout:.0f}s)")
        try:
            msg = read_msg(self.proc.stdout)
        except (EOFError, ValueError, OSError):
            msg = None
        if msg is None:
            raise self._fail(f"the sandbox died (exit status {self.proc.poll()})")
        return msg

    def _drop_stale(self) -> None:
        while self._stale:
            self._read(None)
            self._stale -= 1

    def _send(self, payload: dict) -> None:
        """Write one request (the lock held), after dropping the replies nobody waits for."""
        if self.proc.poll() is not None or self.proc.stdin is None or self.proc.stdout is None:
            raise self._fail("the sandbox is closed or died")
        self._drop_stale()
        try:
            self.proc.stdin.write(encode_msg(payload))
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise self._fail("the sandbox died") from exc

    def request(self, payload: dict, timeout: float | None = None) -> dict[str, bytes]:
        with self._lock, self._watching():
            self._send(payload)
            return self._read(None if timeout is None else timeout + GRACE)

    def _watching(self) -> contextlib.AbstractContextManager:
        """The disk and inode bounds measured often while a request runs (``diskbound.Watch.running``)."""
        return self.watch.running() if self.watch is not None else contextlib.nullcontext()

    async def arequest(self, payload: dict, timeout: float | None = None) -> dict[str, bytes]:
        """``request`` for an event loop: the reply is awaited on the loop itself (the server's pipe
        becoming readable), with no thread between, so a command costs what it costs ``request``.
        The session's lock is taken without blocking the loop (other coroutines may wait for it)."""
        import asyncio
        while not self._lock.acquire(blocking=False):
            await asyncio.sleep(0.0005)
        try:
            with self._watching():
                return await self._areply(payload, timeout)
        finally:
            self._lock.release()

    async def _areply(self, payload: dict, timeout: float | None) -> dict[str, bytes]:
        """``arequest``'s send and wait, the lock held."""
        import asyncio
        self._send(payload)
        assert self.proc.stdout is not None
        loop, fd = asyncio.get_running_loop(), self.proc.stdout.fileno()
        readable = loop.create_future()
        loop.add_reader(fd, lambda: readable.done() or readable.set_result(None))
        try:
            await asyncio.wait_for(readable, None if timeout is None else timeout + GRACE)
        except asyncio.CancelledError:
            self._stale += 1  # the command runs on to its end (or its timeout); its reply is dropped
            raise
        except TimeoutError:
            self.proc.kill()
            raise self._fail(f"the sandbox server stopped answering (no reply within {timeout:.0f}s)") from None
        finally:
            loop.remove_reader(fd)
        return self._read(None)  # readable: the reply frame is coming (no watchdog thread to start)

    def run(self, op: str, command: str, *, cwd: str | None, timeout: float | None,
            cap: int | None = None) -> ExecResult:
        reply = self.request({"op": op, "command": command, "cwd": cwd, "timeout": timeout, "cap": cap}, timeout)
        return self._result(reply)

    async def arun(self, op: str, command: str, *, cwd: str | None, timeout: float | None,
                   cap: int | None = None) -> ExecResult:
        """``run`` awaited on an event loop (``arequest``)."""
        payload = {"op": op, "command": command, "cwd": cwd, "timeout": timeout, "cap": cap}
        return self._result(await self.arequest(payload, timeout))

    @staticmethod
    def _result(reply: dict[str, bytes]) -> ExecResult:
        if "error" in reply:
            raise SandboxError(f"the sandbox server failed: {reply['error'].decode()}: {reply['message'].decode()}")
        return ExecResult(output=reply["output"].decode("utf-8", errors="replace"),
                          exit_code=int(reply["exit_code"]), timed_out=reply["timed_out"] == b"1",
                          truncated=reply["truncated"] == b"1", duration=float(reply["duration"]),
                          restarted=reply["restarted"] == b"1")

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            try:
                if proc.stdin:
                    proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        for stream in (proc.stdout, proc.stderr) if proc is not None else ():
            if stream:
                stream.close()
