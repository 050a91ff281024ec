"""One conformance suite for every ``Executor``: ``check_executor`` (the spirit of inspect_ai's sandbox
self-check and gymnasium's ``check_env``).

Every backend's episodes (real sandboxes, sim and hybrid worlds, test fakes) must pass it with the
same expectations, so tools, the agent loop and the harness can trust any of them::

    with backend.open(task) as executor:
        check_executor(executor, workdir_file="setup.py")

``workdir_file`` names an existing text file of the episode's base tree, relative to its
``workdir``. The suite edits that file and puts it back, creates and removes a scratch directory
in the workdir, runs a handful of shell commands (echo, true, false, pwd, cd, exit, rm -rf: utilities
every backend runs for real, so a sim episode passes without a model call) and closes the executor
at the end. A failed expectation raises ``AssertionError`` naming it.

Persistence is declared, not guessed: an executor whose shell keeps its working directory across
commands says so with ``persistent = True`` (``Sandbox`` says it through ``config.persistent``).
Only a persistent executor is held to ``cd`` carrying over; every executor is held to ``cwd=``
applying to one command alone. Importable without pytest.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable

from sweworld.core.executor import Executor
from sweworld.core.types import ExecResult

SCRATCH = "sweworld-conformance"
"""Directory created (and removed) under the workdir by the write check."""
MARK = "sweworld conformance line"


def _expect(condition: object, message: str) -> None:
    """``assert`` that survives ``python -O``."""
    if not condition:
        raise AssertionError(message)


def declares_persistent(executor: object) -> bool:
    """Whether ``executor`` declares a persistent shell: ``executor.persistent``, else
    ``executor.config.persistent``; an executor that declares nothing is not persistent."""
    declared = getattr(executor, "persistent", None)
    if declared is None:
        declared = getattr(getattr(executor, "config", None), "persistent", None)
    return bool(declared)


def _run(executor: Executor, command: str, **kwargs) -> ExecResult:
    """``executor.run``, held to returning an ``ExecResult`` instead of raising."""
    try:
        result = executor.run(command, **kwargs)
    except Exception as exc:  # the expectation under test: a command is a result, never an exception
        raise AssertionError(f"run({command!r}) raised {type(exc).__name__}: {exc} "
                             f"(a failing command must be a result)") from exc
    _expect(isinstance(result, ExecResult), f"run({command!r}) returned {type(result).__name__}, not ExecResult")
    return result


def _expect_exit(executor: Executor, command: str, code: int, **kwargs) -> ExecResult:
    result = _run(executor, command, **kwargs)
    _expect(result.exit_code == code, (f"run({command!r}) exited {result.exit_code}, expected {code}; "
                                      f"output: {result.output[-500:]!r}"))
    return result


def _check_results(executor: Executor, ctx: dict) -> None:
    result = _expect_exit(executor, f"echo '{MARK}'", 0)
    _expect(MARK in result.output, f"echo's output {result.output!r} lacks {MARK!r}")
    _expect(result.ok and not result.timed_out, "a successful command is ok and not timed out")
    _expect_exit(executor, "true", 0)


def _check_failures(executor: Executor, ctx: dict) -> None:
    failed = _expect_exit(executor, "false", 1)
    _expect(not failed.ok, "a command exiting 1 is not ok")
    _expect_exit(executor, "exit 3", 3, cwd=executor.workdir)


def _pwd(executor: Executor, **kwargs) -> str:
    return _expect_exit(executor, "pwd", 0, **kwargs).output.strip()


def _check_cwd(executor: Executor, ctx: dict) -> None:
    workdir = posixpath.normpath(executor.workdir)
    start = _pwd(executor)
    _expect(start == workdir, f"a fresh episode starts in the workdir {workdir}, pwd says {start!r}")
    _expect(_pwd(executor, cwd="/") == "/", "run(..., cwd='/') runs that command in /")
    _expect(_pwd(executor) == workdir, "run(..., cwd=...) must not move the session")
    if not ctx["persistent"]:
        return
    _expect_exit(executor, "cd /", 0)
    moved = _pwd(executor)
    _expect_exit(executor, f"cd {shlex.quote(workdir)}", 0)
    _expect(moved == "/", f"a persistent executor keeps the cwd across commands: after `cd /` pwd says {moved!r}")
    _expect(_pwd(executor) == workdir, "`cd WORKDIR` takes a persistent session back to the workdir")


def _check_read_missing(executor: Executor, ctx: dict) -> None:
    missing = posixpath.join(executor.workdir, SCRATCH, "missing.txt")
    try:
        executor.read_file(missing)
    except FileNotFoundError:
        return
    raise AssertionError(f"read_file({missing!r}) of a missing path must raise FileNotFoundError")


def _check_fresh_diff(executor: Executor, ctx: dict) -> None:
    diff = executor.diff()
    _expect(diff == "", f"a fresh episode's diff() must be empty, got {diff[:500]!r}")


def _check_edit(executor: Executor, ctx: dict) -> None:
    path = posixpath.join(executor.workdir, ctx["workdir_file"])
    original = executor.read_file(path)
    executor.write_file(path, original + MARK + "\n")
    _expect(executor.read_file(path) == original + MARK + "\n", "read_file returns what write_file wrote")
    diff = executor.diff()
    name = ctx["workdir_file"]
    _expect(f"diff --git a/{name} b/{name}" in diff, f"diff() names the edited file {name}: {diff[:500]!r}")
    _expect(f"\n+{MARK}" in diff, f"diff() shows the added line: {diff[:500]!r}")
    executor.write_file(path, original)
    _expect(executor.diff() == "", "diff() is empty again once the file is put back")


def _check_create(executor: Executor, ctx: dict) -> None:
    scratch = posixpath.join(executor.workdir, SCRATCH)
    path = posixpath.join(scratch, "a", "b", "new.txt")
    executor.write_file(path, MARK + "\n")
    _expect(executor.read_file(path) == MARK + "\n", "write_file creates parent directories")
    diff = executor.diff()
    _expect(f"+++ b/{SCRATCH}/a/b/new.txt" in diff, f"diff() includes new files: {diff[:500]!r}")
    _expect_exit(executor, f"rm -rf {shlex.quote(scratch)}", 0)
    _expect(executor.diff() == "", "diff() is empty again once the new file is removed")


def _check_close(executor: Executor, ctx: dict) -> None:
    entered = executor.__enter__()
    _expect(entered is executor, "__enter__ returns the executor itself")
    executor.__exit__(None, None, None)
    executor.close()  # a second close: idempotent, no exception
    executor.close()


CHECKS: list[tuple[str, Callable[[Executor, dict], None]]] = [
    ("commands return ExecResult", _check_results),
    ("failing commands are results with their exit code", _check_failures),
    ("cwd: per-command cwd=, persistence where declared", _check_cwd),
    ("read_file of a missing path raises FileNotFoundError", _check_read_missing),
    ("diff() of a fresh episode is empty", _check_fresh_diff),
    ("write_file/read_file round trip; diff() shows the edit as a git diff", _check_edit),
    ("write_file creates parents; diff() shows new files", _check_create),
    ("context manager and idempotent close()", _check_close),
]


def check_executor(executor: Executor, *, workdir_file: str) -> list[str]:
    """Run the conformance suite on ``executor`` (closed at the end); returns the names of the
    expectations checked. ``AssertionError`` ``check_executor: <expectation>: <what failed>``."""
    ctx = {"workdir_file": workdir_file.lstrip("/"), "persistent": declares_persistent(executor)}
    for attribute in ("workdir", "run", "read_file", "write_file", "diff", "close", "__enter__", "__exit__"):
        _expect(hasattr(executor, attribute), f"check_executor: the executor has no {attribute!r}")
    done = []
    for name, check in CHECKS:
        try:
            check(executor, ctx)
        except AssertionError as exc:
            raise AssertionError(f"check_executor: {name}: {exc}") from exc
        except Exception as exc:
            raise AssertionError(f"check_executor: {name}: raised {type(exc).__name__}: {exc}") from exc
        done.append(name)
    return done


__all__ = ["CHECKS", "check_executor", "declares_persistent"]
