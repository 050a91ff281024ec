"""One sweworld episode behind a SWE-ReX runtime: swerex's runtime calls, answered with its own models.

``Episode`` opens its executor lazily (``start``: in the background, so that ``is_alive`` answers at
once and turns true when the episode is there) and keeps swerex's named bash sessions
(``swerex_shell``). Failures come out as the exceptions swerex's own runtime raises, so that
``RemoteRuntime`` re-raises them on the client:

- a command past its timeout: ``CommandTimeoutError`` (the sandbox has killed it; its output so far is
  in ``extra_info["output"]`` and is what the next ``BashInterruptAction`` returns);
- ``check="raise"`` and a non-zero exit code: ``NonZeroExitCodeError``; refused syntax:
  ``BashIncorrectSyntaxError`` (nothing ran); unknown session: ``SessionDoesNotExistError``;
- an episode that cannot open (unknown task, an environment that does not build):
  ``DeploymentStartupError`` with sweworld's message, until ``close``;
- an episode whose sandbox died: ``SwerexException`` saying so, until ``close`` (never a silent fresh
  workspace in the middle of a run).

Branching (sweworld's own routes, ``swerex_branch``): ``snapshot`` keeps a handle of the episode under
an id of this episode's; ``restore(id)`` puts the files, the episode's shell (the first session) and
every further session's cwd and exports back; ``fork(id)`` gives the executor of a new episode (the
server addresses it). An episode that cannot branch, or an unknown id: ``SwerexException`` saying so.
"""

from __future__ import annotations

import copy
import shlex
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from typing import IO, TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from pexpect import TIMEOUT
from swerex.exceptions import (
    CommandTimeoutError,
    DeploymentStartupError,
    NonZeroExitCodeError,
    SessionDoesNotExistError,
    SessionExistsError,
    SwerexException,
)
from swerex.runtime.abstract import (
    BashAction,
    BashInterruptAction,
    BashObservation,
    CloseBashSessionResponse,
    Command,
    CommandResponse,
    CreateBashSessionRequest,
    CreateBashSessionResponse,
    IsAliveResponse,
    ReadFileResponse,
    UploadResponse,
    WriteFileResponse,
)

from sweworld.core.errors import InfraError, SWEWorldError
from sweworld.core.protocols import Branchable, ExecCapable, why_not_branchable
from sweworld.integrations import swerex_upload
from sweworld.integrations.swerex_shell import PS1, EpisodeShell, Session, WrappedShell, check_syntax, closers

if TYPE_CHECKING:
    from concurrent.futures import Executor as Pool

    from sweworld.core.executor import Executor
    from sweworld.core.types import ExecResult

T = TypeVar("T")

@runtime_checkable
class BinaryFiles(Protocol):
    """An episode reading and writing bytes (the real sandbox: ``read_bytes``, ``write_file`` of bytes)."""

    def read_bytes(self, path: str) -> bytes: ...

    def write_file(self, path: str, content: str | bytes) -> None: ...


#: What a further session (``WrappedShell``) keeps of its shell on the host: a snapshot keeps a copy.
SHELL_STATE = ("cwd", "base", "exports", "unset")

INTERACTIVE = ("sweworld episodes run each command to its end with stdin closed: an interactive program (gdb, a "
               "REPL) cannot be driven through is_interactive_command/is_interactive_quit; run it non-interactively "
               "(gdb -batch -ex ..., python -c ..., a script fed by a here-document)")


class Episode:
    """The swerex runtime of one instance: its episode (opened by ``opener``) and its sessions."""

    def __init__(self, instance_id: str, opener: Callable[[], Executor], pool: Pool, *, command_timeout: float):
        self.instance_id, self.opener, self.pool, self.command_timeout = instance_id, opener, pool, command_timeout
        self.sessions: dict[str, Session] = {}
        self.snapshots: dict[str, tuple[object, dict[str, dict]]] = {}
        """id -> (the executor's handle, each further session's cwd and exports then)."""
        self._future: Future | None = None
        self._dead: str | None = None
        self._lock = threading.Lock()

    # -- the episode --------------------------------------------------------------------------
    def start(self) -> Future:
        """The episode's opening (begun now if it was not)."""
        with self._lock:
            if self._future is None:
                self._future = self.pool.submit(self.opener)
            return self._future

    def _executor(self, future: Future | None = None) -> Executor:
        try:
            executor = (future or self.start()).result()
        except SWEWorldError as exc:
            raise DeploymentStartupError(f"sweworld could not open an episode of {self.instance_id}: {exc}\n"
                                         f"  (it stays closed: POST /{self.instance_id}/close to try again)") from None
        if self._dead is not None:
            raise SwerexException(self._dead)
        return executor

    def _died(self, exc: Exception) -> SwerexException:
        self._dead = (f"the episode of {self.instance_id} died: {exc}\n  what to do: POST /{self.instance_id}/close "
                      "(or /close), then start again: the next request opens a fresh episode")
        return SwerexException(self._dead)

    def call(self, what: Callable[[Executor], T]) -> T:
        """``what(executor)``; an infrastructure failure marks the episode dead."""
        executor = self._executor()
        try:
            return what(executor)
        except InfraError as exc:
            raise self._died(exc) from None
        except SWEWorldError as exc:
            raise SwerexException(str(exc)) from None

    def alive(self) -> IsAliveResponse:
        """Answered at once: once the opening has begun, it takes no lock and waits for nothing."""
        future = self._future or self.start()
        if not future.done():
            return IsAliveResponse(is_alive=False, message=f"the episode of {self.instance_id} is opening "
                                   "(its environment may be building)")
        self._executor(future)  # raises why it is not alive
        return IsAliveResponse(is_alive=True)

    def close(self) -> None:
        """Close the sessions and the episode; the next request opens a fresh one."""
        with self._lock:
            future, self._future, self._dead = self._future, None, None
            self.sessions, self.snapshots = {}, {}  # the episode's close frees its snapshots
        if future is not None:
            future.add_done_callback(lambda done: done.exception() is None and done.result().close())

    # -- sessions -----------------------------------------------------------------------------
    def create_session(self, request: CreateBashSessionRequest) -> CreateBashSessionResponse:
        executor = self._executor()
        with self._lock:
            if request.session in self.sessions:
                raise SessionExistsError(
                    f"session {request.session} already exists in the episode of {self.instance_id}: a run before "
                    "this one (a crashed SWE-agent?) did not close it. POST /close (/<instance_id>/close on a server "
                    "of several instances) to start again from a fresh episode, or name another session")
            primary = not any(isinstance(s, EpisodeShell) for s in self.sessions.values())
            session = (EpisodeShell if primary else WrappedShell)(request.session, executor)
            self.sessions[request.session] = session
        timeout = max(request.startup_timeout, 1.0)
        try:
            started = self.call(lambda _: session.start(request.startup_source, timeout))
            if started is not None and started.timed_out:
                raise CommandTimeoutError(f"timeout after {timeout} seconds while starting session {request.session!r}")
        except BaseException:
            self.sessions.pop(request.session, None)
            raise
        return CreateBashSessionResponse(output=started.output if started is not None else "")

    def _session(self, name: str) -> Session:
        session = self.sessions.get(name)
        if session is None:
            raise SessionDoesNotExistError(f"session {name!r} does not exist")
        return session

    def close_session(self, name: str) -> CloseBashSessionResponse:
        with self._lock:
            self._session(name)
            del self.sessions[name]
        return CloseBashSessionResponse()

    def run_in_session(self, action: BashAction | BashInterruptAction) -> BashObservation:
        self._executor()
        session = self._session(action.session)
        if isinstance(action, BashInterruptAction):
            return self._interrupt(session, action)
        if action.is_interactive_command or action.is_interactive_quit:
            raise NotImplementedError(INTERACTIVE)
        timeout = action.timeout or self.command_timeout
        with session.busy:
            result = self.call(lambda ex: session.run(action.command + closers(check_syntax(action.command)),
                                                      timeout))
            if result.timed_out:
                session.pending = result.output
                error = CommandTimeoutError(f"timeout after {timeout} seconds while running command {action.command!r}")
                error.extra_info = {"output": result.output, "timeout": timeout}  # type: ignore[attr-defined]
                raise error
        output, code = result.output, result.exit_code
        if action.check == "raise" and code != 0:
            message = f"Command {action.command!r} failed with exit code {code}. Here is the output:\n{output!r}"
            raise NonZeroExitCodeError(f"{action.error_msg}: {message}" if action.error_msg else message)
        found = [(output.find(s), i) for i, s in enumerate(action.expect) if s and s in output]
        return BashObservation(output=output, exit_code=None if action.check == "ignore" else code,
                               expect_string=action.expect[min(found)[1]] if found else PS1)

    def _interrupt(self, session: Session, action: BashInterruptAction) -> BashObservation:
        """Nothing of the session is running any more once its command returned: the sandbox killed the
        command that timed out. A command still running (a concurrent request) cannot be signalled."""
        if not session.busy.acquire(timeout=max(action.timeout * max(action.n_retry, 1), 0.0)):
            raise TIMEOUT(f"Failed to interrupt session {session.name!r}: its command is still running and sweworld "
                          f"cannot signal it; the episode's wall timeout kills it")
        try:
            output, session.pending = session.pending, ""
        finally:
            session.busy.release()
        return BashObservation(output=output.strip(), exit_code=0, expect_string=PS1)

    # -- commands and files -------------------------------------------------------------------
    def _stateless(self, executor: Executor, script: str, timeout: float) -> ExecResult:
        """A command in a fresh shell: ``exec`` where the episode has it, else a subshell of its shell."""
        if isinstance(executor, ExecCapable):
            return executor.exec(script, timeout=timeout)
        return executor.run(f"(\n{script}\n)", timeout=timeout)

    def execute(self, command: Command) -> CommandResponse:
        """swerex's ``execute`` (``subprocess.run``): a list is an argv, ``shell=True`` a bash script;
        ``env`` replaces the environment (``env -i``); ``cwd``; stdout and stderr kept apart unless
        ``merge_output_streams``."""
        argv = command.command if isinstance(command.command, list) else [command.command]
        program = shlex.join(["/bin/bash", "-c", *argv] if command.shell else argv)
        if command.env is not None:
            program = "env -i " + " ".join(shlex.quote(f"{k}={v}") for k, v in command.env.items()) + " " + program
        if command.cwd:
            program = f"builtin cd -- {shlex.quote(command.cwd)} || builtin exit 1\n{program}"
        mark = f"SWEWORLD_REX_STDERR_{uuid.uuid4().hex}"
        files = f"/tmp/.sweworld-rex-{uuid.uuid4().hex}"
        if not command.merge_output_streams:
            program = (f"{{ {program}\n}} >{files}.out 2>{files}.err; __sw_rc=$?; cat {files}.out; "
                       f"printf %s {mark}; cat {files}.err; rm -f {files}.out {files}.err; exit $__sw_rc")
        timeout = command.timeout or self.command_timeout
        result = self.call(lambda ex: self._stateless(ex, program, timeout))
        if result.timed_out:
            raise CommandTimeoutError(f"Timeout ({timeout}s) exceeded while running command")
        stdout, stderr = result.output, ""
        if not command.merge_output_streams:
            stdout, _, stderr = result.output.partition(mark)
        response = CommandResponse(stdout=stdout, stderr=stderr, exit_code=result.exit_code)
        if command.check and response.exit_code != 0:
            message = (f"Command {command.command!r} failed with exit code {response.exit_code}. "
                       f"Stdout:\n{response.stdout!r}\nStderr:\n{response.stderr!r}")
            raise NonZeroExitCodeError(f"{command.error_msg}: {message}" if command.error_msg else message)
        return response

    def read_file(self, path: str, encoding: str | None, errors: str | None) -> ReadFileResponse:
        def read(executor: Executor) -> str:
            if isinstance(executor, BinaryFiles):
                return executor.read_bytes(path).decode(encoding or "utf-8", errors or "strict")
            return executor.read_file(path)
        return ReadFileResponse(content=self.call(read))

    def write_file(self, path: str, content: str) -> WriteFileResponse:
        self.call(lambda ex: ex.write_file(path, content))
        return WriteFileResponse()

    def upload(self, source: IO[bytes], target_path: str, unzip: bool) -> UploadResponse:
        """swerex's ``/upload``: one file to ``target_path``, or a zip (a directory, as ``RemoteRuntime``
        sends one) extracted into it; streamed from ``source`` (``swerex_upload``: bounded memory)."""
        def stateless(executor: Executor, program: str) -> ExecResult:
            return self._stateless(executor, program, self.command_timeout)
        if unzip:
            self.call(lambda ex: swerex_upload.extract(ex, source, target_path, stateless))
        else:
            self.call(lambda ex: swerex_upload.write_stream(ex, target_path, source, stateless))
        return UploadResponse()


    # -- branching (swerex_branch) -------------------------------------------------------------
    def _branchable(self) -> Branchable:
        executor = self._executor()
        reason = why_not_branchable(executor)
        if reason is not None:
            raise SwerexException(f"the episode of {self.instance_id} cannot be snapshotted, forked or restored: "
                                  f"{reason}")
        assert isinstance(executor, Branchable)
        return executor

    def _handle(self, snapshot_id: str) -> tuple[object, dict[str, dict]]:
        found = self.snapshots.get(snapshot_id)
        if found is None:
            raise SwerexException(f"no snapshot {snapshot_id!r} in the episode of {self.instance_id} (an episode "
                                  "restores, forks and releases its own snapshots; closing it frees them)")
        return found

    def snapshot(self) -> str:
        """A snapshot of the episode and of its sessions' state, by a new id (a refusal, over the disk
        limit, leaves the episode as it was)."""
        executor = self._branchable()
        with self._lock:
            shells = {name: {k: copy.deepcopy(getattr(s, k)) for k in SHELL_STATE}
                      for name, s in self.sessions.items() if isinstance(s, WrappedShell)}
        try:
            handle = executor.snapshot()
        except SWEWorldError as exc:
            raise SwerexException(str(exc)) from None
        snapshot_id = uuid.uuid4().hex
        with self._lock:
            self.snapshots[snapshot_id] = (handle, shells)
        return snapshot_id

    def restore(self, snapshot_id: str) -> None:
        """The episode back to ``snapshot_id``; a further session keeps its name and gets its cwd and
        exports of then (one made since keeps its own). A failed restore leaves the episode dead."""
        handle, shells = self._handle(snapshot_id)
        executor = self._branchable()
        self.call(lambda _: executor.restore(handle))
        with self._lock:
            for name, session in self.sessions.items():
                session.pending = ""
                if isinstance(session, WrappedShell) and name in shells:
                    vars(session).update(copy.deepcopy(shells[name]))

    def fork(self, snapshot_id: str | None) -> Executor:
        """A new episode's executor in the state of ``snapshot_id`` (None: now), with no session."""
        handle = self._handle(snapshot_id)[0] if snapshot_id else None
        try:
            return self._branchable().fork(handle)
        except SWEWorldError as exc:
            raise SwerexException(str(exc)) from None

    def release(self, snapshot_id: str) -> None:
        handle, _ = self._handle(snapshot_id)
        with self._lock:
            self.snapshots.pop(snapshot_id, None)
        try:
            self._branchable().release(handle)
        except SWEWorldError as exc:
            raise SwerexException(str(exc)) from None

__all__ = ["BinaryFiles", "Episode"]
