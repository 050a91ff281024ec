"""inspect's ``exec`` / ``read_file`` / ``write_file`` contract over one sweworld ``Executor``.

The pieces of ``inspect_sandbox.SweworldSandboxEnvironment`` that need no inspect import: the shell
script one ``exec`` runs and the parsing of its reply (stdout and stderr apart, in one round trip),
and the permission check the file operations make. inspect's contract (``SandboxEnvironment.exec``):

- ``cmd`` is an argument list, run with ``cwd`` (relative: to ``/testbed``, the per-sample
  directory), ``env`` exported in the episode's shell (never through an ``env`` program found on
  the episode's ``PATH``), ``input`` on standard input (text or bytes, verbatim);
- stdout and stderr come back apart: the script sends stderr to a file and prints it after a
  random marker, so one command of the episode carries both;
- on the real sandbox the episode's own shell runs it (as fast as ``Executor.run``; a timeout kills
  every process the command started), left as it was (cwd, variables); in a world's episode (sim,
  hybrid) the command itself is what the world sees, unwrapped, and its output is stdout.
"""

from __future__ import annotations

import shlex
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sweworld.core.executor import Executor
from sweworld.core.protocols import AsyncRun, ReadsBytes, Simulated
from sweworld.core.types import ExecResult
from sweworld.integrations.shell_state import SHELL_WORDS


def capture(limit: int) -> int:
    """What an exec keeps of its output: both streams past inspect's cap on each (``limit``:
    ``SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE``), so that the caller can tell the cap was passed."""
    return 2 * limit + 64 * 1024
SCRATCH = "/tmp/.sweworld"


@dataclass
class Reply:
    """What one ``exec`` gives inspect."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False


def resolve(path: str, workdir: str) -> str:
    """``path`` as the episode sees it: relative paths are relative to the per-sample directory."""
    return path if path.startswith("/") else f"{workdir.rstrip('/')}/{path}"


def script(cmd: list[str], *, cwd: str | None, env: dict[str, str] | None, stdin: str | None, marker: str) -> str:
    """One shell script running ``cmd`` in the episode's shell, leaving the shell as it was: stdout as
    it is, then a line ``marker rc`` and stderr.

    A plain command (no cwd, env or input, no state-changing builtin) runs in the shell itself, as
    ``Executor.run`` runs it (no fork for ``echo``); anything else in a subshell that ``exec``s it."""
    err = f"{SCRATCH}/stderr"
    plain = cwd is None and not env and stdin is None and (not cmd or cmd[0] not in SHELL_WORDS)
    if plain:
        body = f"{{ {shlex.join(cmd)}\n}} < /dev/null 2> {err}"
    else:
        exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in (env or {}).items())
        where = f"cd -- {shlex.quote(cwd)} || exit $?\n" if cwd else ""
        source = f"< {shlex.quote(stdin)}" if stdin else "< /dev/null"
        body = f"( {where}{exports}exec {shlex.join(cmd)}\n) {source} 2> {err}"
    tail = f"; rm -f {shlex.quote(stdin)}" if stdin else ""
    return (f"{body}\n__sw_rc=$?{tail}\nbuiltin printf '\\n%s %d\\n' {marker} \"$__sw_rc\"\n"
            f"[ -s {err} ] && cat {err}; builtin true\n")


def split_reply(output: str, marker: str) -> tuple[str, str, int | None]:
    """(stdout, stderr, exit code) of a script's output; all stdout and no code when the marker never came."""
    head, sep, tail = output.rpartition(f"\n{marker} ")
    if not sep:
        return output, "", None
    code, _, stderr = tail.partition("\n")
    return head, stderr, int(code) if code.strip().lstrip("-").isdigit() else None


def agent_command(cmd: list[str]) -> bool:
    """A command an agent's tool runs for it, by name through ``PATH`` (inspect's ``bash()``:
    ``bash --login -c CMD``; ``python()``: ``python3 ...``), as opposed to the tools' own machinery
    (their helper binary, set-up scripts run by absolute path, ``/bin/sh -c``)."""
    return bool(cmd) and cmd[0] in ("bash", "sh", "python", "python3")


def real_of(executor: Executor) -> Executor:
    """Where files and the tools' machinery live: a world's episode's real workspace, else itself."""
    return executor.sandbox if isinstance(executor, Simulated) else executor


def _unwrapped(cmd: list[str]) -> str:
    """The command as an agent would type it: ``bash -c SCRIPT`` is ``SCRIPT``."""
    if len(cmd) >= 3 and cmd[0] in ("bash", "sh", "/bin/bash", "/bin/sh") and cmd[-2] == "-c" and \
            all(a.startswith("-") for a in cmd[1:-1]):
        return cmd[-1]
    return shlex.join(cmd)


def run_exec(executor: Executor, cmd: list[str], *, cwd: str | None, env: dict[str, str] | None,
             stdin: bytes | None, timeout: float | None, cap: int) -> Reply:
    """Run ``cmd`` in the episode as inspect's ``exec`` does (blocking: callers run it in a thread)."""
    where = resolve(cwd, executor.workdir) if cwd else None
    if isinstance(executor, Simulated):
        if not agent_command(cmd):  # the framework's own machinery: the real workspace runs it
            return run_exec(executor.sandbox, cmd, cwd=cwd, env=env, stdin=stdin, timeout=timeout, cap=cap)
        text = _unwrapped(cmd)  # what the agent typed: the world sees it as typed
        if env:
            text = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items()) + text
        if stdin is not None:
            path = f"{SCRATCH}/{uuid.uuid4().hex}.in"
            executor.sandbox.write_file(path, stdin.decode("utf-8", errors="replace"))
            text = f"( {text}\n) < {shlex.quote(path)}"
        result = executor.run(text, cwd=where or executor.workdir, timeout=timeout)
        return Reply(result.exit_code, result.output, "", result.timed_out, result.truncated)
    marker, body = _real_script(executor, cmd, where, env, stdin)
    return _reply(executor.run(body, timeout=timeout, cap=cap), marker)  # type: ignore[call-arg]


def _real_script(executor: Executor, cmd: list[str], where: str | None, env: dict[str, str] | None,
                 stdin: bytes | None) -> tuple[str, str]:
    """(marker, script) of ``cmd`` on a real episode; ``stdin`` is written to a file first."""
    marker = f"__SWEWORLD_STDERR_{uuid.uuid4().hex}__"
    path = None
    if stdin is not None:
        path = f"{SCRATCH}/{marker}.in"
        executor.write_file(path, stdin)
    return marker, script(cmd, cwd=where, env=env, stdin=path, marker=marker)


def _reply(result: ExecResult, marker: str) -> Reply:
    stdout, stderr, code = split_reply(result.output, marker)
    return Reply(result.exit_code if code is None or result.timed_out else code, stdout, stderr,
                 result.timed_out, result.truncated)


async def exec_async(executor: Executor, cmd: list[str], *, cwd: str | None, env: dict[str, str] | None,
                     stdin: bytes | None, timeout: float | None, blocking: Callable[..., Awaitable[Any]],
                     cap: int) -> Reply:
    """``run_exec`` on an event loop: a real sandbox (``AsyncRun``) is awaited on the loop itself, with
    no thread between (input, when given, is written in a thread first); anything else runs
    ``run_exec`` through ``blocking`` (a thread)."""
    if isinstance(executor, Simulated) or not isinstance(executor, AsyncRun):
        return await blocking(lambda: run_exec(executor, cmd, cwd=cwd, env=env, stdin=stdin, timeout=timeout, cap=cap))
    where = resolve(cwd, executor.workdir) if cwd else None
    if stdin is None:
        marker, body = _real_script(executor, cmd, where, env, None)
    else:
        marker, body = await blocking(lambda: _real_script(executor, cmd, where, env, stdin))
    return _reply(await executor.arun(body, timeout=timeout, cap=cap), marker)


def permission_denied(reply: Reply) -> bool:
    """The program could not be executed (bash's 126 and its words)."""
    return reply.returncode == 126 and "permission denied" in reply.stderr.casefold()


def mode_check(path: str, *, write: bool) -> str:
    """A script printing what a file operation must refuse, as Docker's provider does for a
    container's root: ``DIR`` (a directory), ``NOREAD`` / ``NOWRITE`` (its owner lacks the bit)."""
    quoted = shlex.quote(path)
    index, bit, refusal = (2, "w", "NOWRITE") if write else (1, "r", "NOREAD")
    return (f"if [ -d {quoted} ]; then echo DIR; elif [ -e {quoted} ]; then m=$(stat -c %A {quoted}); "
            f"[ \"${{m:{index}:1}}\" = {bit} ] || echo {refusal}; fi")


def read_bytes(executor: Executor, path: str) -> bytes:
    """A file's bytes (the real sandbox reads them as they are; elsewhere the text's UTF-8)."""
    real = real_of(executor)
    if isinstance(real, ReadsBytes):
        return real.read_bytes(path)
    return real.read_file(path).encode("utf-8")


__all__ = [
    "Reply",
    "agent_command",
    "exec_async",
    "mode_check",
    "permission_denied",
    "read_bytes",
    "real_of",
    "resolve",
    "run_exec",
    "script",
    "split_reply",
]
