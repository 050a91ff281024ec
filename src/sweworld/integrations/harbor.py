"""A Harbor (0.25) environment over one sweworld episode: ``harbor run -e sweworld.integrations.harbor:SweworldEnvironment``.

Harbor runs an agent in an environment (``harbor.environments.base.BaseEnvironment``: async ``start``,
``stop``, ``exec``, ``upload_*``, ``download_*``), then its verifier there: it uploads the task's
``tests/`` to ``/tests``, runs ``/tests/test.sh`` and reads ``/logs/verifier/reward.txt``. This
environment is such a provider, with a sweworld episode instead of a container::

    harbor run -p TASK_DIR -a oracle -e sweworld.integrations.harbor:SweworldEnvironment \\
        --ek dataset=lite [--ek backend=sim] [--ek repos_dir=DIR] [--ek instance_id=ID]

- **Which instance**: ``--ek instance_id=...``, else the SWE-bench image the task names, its
  task.toml's ``[environment].docker_image`` or its ``environment/Dockerfile``'s ``FROM``
  (``swebench/sweb.eval.x86_64.<org>_1776_<repo>-<n>:latest`` is ``<org>__<repo>-<n>``), looked up in
  ``--ek dataset=...`` (default ``$SWEWORLD_DATASET``). The rest of the Dockerfile is not run: the
  instance's environment is sweworld's build of it.
- **Which backend**: ``--ek backend=real|sim|hybrid`` (default ``$SWEWORLD_BACKEND``, else real),
  ``--ek repos_dir=DIR`` (``$SWEWORLD_REPOS_DIR``), ``--ek backend_options='{...}'`` (fields of
  ``sweworld.core.config.BackendConfig``); ``sweworld.integrations.episodes`` builds it, once per process.
- **Paths**: Harbor's ``/logs``, ``/tests``, ``/solution``... are mapped into the episode where its
  root is read-only (``harbor_paths.PathMap``).
- **Grading**: with the real backend the task's ``tests/test.sh`` runs, as Harbor's own providers run
  it. No test runs for real in a simulated episode, so with sim or hybrid (or ``--ek grading=sweworld``
  on real) the command Harbor's verifier runs (``(/tests/test.sh) > /logs/verifier/test-stdout.txt
  2>&1``) is answered by the backend's evaluation of the episode's diff (sim: the SWR's verdict;
  hybrid: audited as configured; real: sweworld's SWE-bench harness in a fresh episode):
  ``reward.txt`` is 1 when it says resolved, else 0, and ``test-stdout.txt`` holds the report.
- **Errors**: a task whose instance cannot be found or whose environment does not build fails
  ``start`` with Harbor's ``SandboxBuildFailedError`` carrying sweworld's message (the trial fails, the
  job goes on); an episode that died or closed fails the call with ``EpisodeError``; a command past its
  timeout raises ``RuntimeError``, as Harbor's Docker provider does.

Each ``exec`` runs in a subshell of the episode's persistent shell (``Executor.run`` with ``cwd``: its
``cd`` and ``env`` apply to that command only, as in a fresh ``docker exec``) or, when it cannot change
the shell (``shell_state.stateless``: ``echo``, ``ls | grep``, ``tar -cf ...``), in the shell itself,
without the fork; on a worker thread, so that concurrent trials proceed. ``user`` is not switched: an
episode runs as root of its own user namespace.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import inspect
import re
import shlex
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult, SandboxBuildFailedError
from harbor.environments.capabilities import EnvironmentCapabilities

from sweworld.core.errors import ConfigError, SWEWorldError
from sweworld.core.protocols import AsyncRun, Described, ReadsBytes, Simulated
from sweworld.integrations.episodes import backend_config, backend_for, spec_of, task_of, with_scratch_dirs
from sweworld.integrations.harbor_paths import (
    PROBE,
    ROOTS,
    SCRATCH,
    PathMap,
    image_of,
    pack,
    unpack,
)
from sweworld.integrations.shell_state import stateless
from sweworld.seam import grade

#: The command Harbor's verifier runs (``harbor.utils.scripts.build_execution_command``).
_VERIFIER_RUN = re.compile(r"^\((?P<script>/tests/\S+)\) > (?P<out>/logs/verifier/\S+) 2>&1$")
_XFER = f"{SCRATCH}-xfer"
_SPEC_KEYS = ("instance_id", "dataset", "split", "repos_dir", "backend", "backend_options", "image")
_BASE_KEYS = frozenset(inspect.signature(BaseEnvironment.__init__).parameters) - {"self", "args", "kwargs"}


class EpisodeError(RuntimeError):
    """The episode behind a ``SweworldEnvironment`` is not there: not started, stopped, or died
    (sweworld's ``SandboxError`` says why)."""


class SweworldEnvironment(BaseEnvironment):
    """Harbor's ``BaseEnvironment`` over a sweworld episode (see the module docstring).

    Environment kwargs (``--ek``): ``instance_id``, ``dataset``, ``split``, ``repos_dir``, ``backend``,
    ``backend_options``, ``image`` (``sweworld.integrations.episodes.EpisodeSpec``), and
    ``command_timeout_sec``: the wall limit of a command Harbor gives no timeout (default 3600;
    Harbor's phase timeouts still apply); ``grading``: ``task`` (run the task's ``tests/test.sh``, the
    real backend's default) or ``sweworld`` (the backend's evaluation of the diff; always with sim and
    hybrid).
    """

    def __init__(self, environment_dir: Path, environment_name: str, session_id: str, trial_paths: Any,
                 task_env_config: Any, logger: Any = None, *, command_timeout_sec: float = 3600.0,
                 grading: str | None = None, **kwargs: Any):
        where = f"harbor environment kwargs (--ek) of task {environment_name}"
        options = {key: kwargs.pop(key) for key in _SPEC_KEYS if key in kwargs}
        unknown = sorted(set(kwargs) - _BASE_KEYS)
        if unknown:
            raise ConfigError(f"unknown environment kwargs {unknown}", where=where,
                              hint="sweworld's are: " + ", ".join([*_SPEC_KEYS, "command_timeout_sec", "grading"]))
        if kwargs.get("mounts"):
            raise ConfigError("a sweworld episode takes no host mounts", where=where,
                              hint="drop --mounts: upload files with the task's environment/ or tests/")
        self._spec = spec_of({k: v for k, v in options.items() if v is not None}, where=where)
        backend_config(self._spec)  # a wrong backend option fails here, once, not in every trial's start
        self._timeout = float(command_timeout_sec)
        self._grading = grading or ("task" if self._spec.backend == "real" else "sweworld")
        if self._grading not in ("task", "sweworld") or (self._grading == "task" and self._spec.backend != "real"):
            raise ConfigError(f"grading={grading!r} with the {self._spec.backend} backend", where=where,
                              hint="grading is 'task' (run tests/test.sh: real backend only) or 'sweworld' "
                              "(the backend's evaluation of the episode's diff)")
        self._executor: Any = None
        self._thread: ThreadPoolExecutor | None = None  # the episode's calls, one at a time as it takes them
        self._backend: Any = None
        self._task: Any = None
        self._paths = PathMap()
        super().__init__(environment_dir, environment_name, session_id, trial_paths, task_env_config,
                         logger=logger, **kwargs)

    @staticmethod
    def type() -> str:
        return "sweworld"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        # episodes never reach the network: no-network is kept; a public policy gets no network either
        return EnvironmentCapabilities(disable_internet=True)

    def _validate_definition(self) -> None:
        """Nothing to check here: the instance is resolved in ``start``, so that a bad task fails its own
        trial rather than the whole job (Harbor builds every trial's environment before running any)."""

    @property
    def task(self) -> Any:
        """The sweworld task of the episode (after ``start``)."""
        return self._task

    @property
    def paths(self) -> PathMap:
        """How Harbor's roots are seen in the episode (``mapped``: the ones under ``SCRATCH``)."""
        return self._paths

    @property
    def executor(self) -> Any:
        """The episode (a sweworld ``Executor``), once started."""
        return self._executor

    async def _call(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` on the environment's own worker thread (one warm thread: a short command
        pays one hand-over, not a pool's), so that the event loop and the other trials go on."""
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sweworld-harbor")
        return await asyncio.get_running_loop().run_in_executor(self._thread, functools.partial(fn, *args, **kwargs))

    # -- lifecycle ---------------------------------------------------------------------------------
    async def start(self, force_build: bool) -> None:
        """Open the episode of the task's instance (``force_build`` is moot: sweworld's builds are cached
        by content and rebuilt when their inputs change)."""
        if self._executor is not None:
            return
        image = self._spec.image or image_of(self.environment_dir, self.task_env_config.docker_image)
        spec = self._spec.model_copy(update={"image": image,
                                             "backend_options": with_scratch_dirs(self._spec.backend_options, ROOTS)})
        where = f"harbor task {self.environment_name}"
        try:
            self._task = await self._call(task_of, spec, where=where)
            self._backend = await self._call(backend_for, spec)
            self._executor = await self._call(self._backend.open, self._task, timeout=self._timeout,
                                              label=self.session_id)
            self._paths = PathMap(await self._unwritable_roots())
            made = await self._run(f"mkdir -p {' '.join(shlex.quote(d) for d in self._paths.dirs())}", timeout=60)
        except SWEWorldError as exc:
            await self.stop(delete=True)
            raise SandboxBuildFailedError(f"sweworld could not open an episode of {where}: {exc}") from exc
        if made.exit_code != 0:
            await self.stop(delete=True)
            raise SandboxBuildFailedError(f"{where}: Harbor's directories could not be made: {made.output[-2000:]}")
        if self._paths.active:
            self.logger.debug("%s: Harbor's %s mapped under %s in the episode", self.environment_name,
                              ", ".join(self._paths.mapped), SCRATCH)
        if self.network_policy.network_mode.value != "no-network":
            self.logger.debug("sweworld episodes have no network: %s runs without it", self.environment_name)
        await self._upload_environment_dir_after_start()

    async def _unwritable_roots(self) -> list[str]:
        """Harbor's roots the episode cannot write; all of them without isolation (the host's own
        ``/logs`` or ``/tests`` are never used)."""
        if isinstance(self._executor, Described) and self._executor.info.get("isolation") == "none":
            return list(ROOTS)
        return (await self._run(PROBE, timeout=60)).output.split()

    async def stop(self, delete: bool) -> None:
        """Close the episode (its workspace goes with it), at once: on a thread of its own, so that a
        command still running (one whose ``exec`` Harbor cancelled) does not hold it up but is killed."""
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.close)
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.shutdown(wait=False)

    # -- exec --------------------------------------------------------------------------------------
    def _live(self) -> Any:
        if self._executor is None:
            raise EpisodeError(f"the sweworld episode of {self.environment_name} is not running "
                               "(not started, or stopped)")
        return self._executor

    def _workspace(self) -> Any:
        """Where the environment's own machinery runs (probes, transfers): a simulated episode's real
        workspace, so that it stays out of the world's history; else the episode."""
        executor = self._live()
        return executor.sandbox if isinstance(executor, Simulated) else executor

    async def _run(self, script: str, *, timeout: float, cwd: str | None = None, subshell: bool = True,
                   machinery: bool = True) -> Any:
        """``script`` in a subshell of the episode's shell, in ``cwd`` (default: its workdir): with ``cwd``
        given, ``Executor.run`` ends the ``cd``, the exports and an ``exit`` with the command. Without
        ``subshell`` (a ``shell_state.stateless`` command) it runs in the shell itself, which every
        call leaves in its workdir. ``machinery``: the environment's own command (``_workspace``), not
        one Harbor or its agent gave ``exec``."""
        executor = self._workspace() if machinery else self._live()
        where = (cwd or executor.workdir) if subshell else None
        try:
            if isinstance(executor, AsyncRun) and not isinstance(executor, Simulated):  # awaited, no thread
                return await executor.arun(script, cwd=where, timeout=timeout)
            return await self._call(executor.run, script, cwd=where, timeout=timeout)
        except SWEWorldError as exc:
            raise EpisodeError(f"the sweworld episode of {self.environment_name} failed: {exc}") from exc

    async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_sec: int | None = None, user: str | int | None = None) -> ExecResult:
        """Run ``command`` with ``cwd`` and ``env`` for it alone (a subshell, unless it cannot change the
        shell); its output comes back as stdout."""
        verifier = _VERIFIER_RUN.match(command.strip())
        if verifier and self._grading == "sweworld":
            return await self._verdict(verifier["out"])
        lines = []
        for key, value in (self._merge_env(env) or {}).items():
            if not key.isidentifier():
                raise ValueError(f"environment variable name {key!r} is not valid in a shell")
            lines.append(f"export {key}={shlex.quote(value)}\n")
        limit = float(timeout_sec) if timeout_sec else self._timeout
        where = self._paths.path(cwd or self.task_env_config.workdir or self._live().workdir)
        script = self._paths.command(command)
        fast = not lines and where == self._live().workdir and stateless(script)  # no fork needed
        result = await self._run("".join(lines) + script, timeout=limit, cwd=where, subshell=not fast,
                                 machinery=False)
        if result.timed_out:
            raise RuntimeError(f"Command timed out after {limit:g} seconds")
        output = self._paths.restore(result.output)
        callback = self._output_callback()
        if callback is not None and output:
            await callback(output, "stdout")
        return ExecResult(stdout=output, stderr="", return_code=result.exit_code)

    async def _verdict(self, stdout_path: str) -> ExecResult:
        """Harbor's verifier run, answered by the backend's evaluation of the episode's diff."""
        executor = self._live()
        try:
            diff = await self._call(executor.diff)
            graded = await self._call(lambda: grade(self._backend, self._task, diff, model="harbor", binary=True))
        except SWEWorldError as exc:
            raise EpisodeError(f"the sweworld {self._spec.backend} evaluation of {self.environment_name} "
                               f"failed: {exc}") from exc
        if graded.report is None:
            raise EpisodeError(f"the sweworld {self._spec.backend} evaluation of {self.environment_name} "
                               f"failed: {graded.error}")
        report = graded.report
        reward = f"{graded.reward:g}"
        text = (f"sweworld {self._spec.backend} backend: its evaluation of the episode's diff stands for "
                f"/tests/test.sh (grading=sweworld)\nresolved: {report.resolved}\n"
                + report.model_dump_json(indent=2) + "\n")
        await self._write(self._paths.path(stdout_path), text.encode())
        await self._write(self._paths.path("/logs/verifier/reward.txt"), f"{reward}\n".encode())
        return ExecResult(stdout="", stderr="", return_code=0)

    # -- files -------------------------------------------------------------------------------------
    async def _write(self, path: str, data: bytes) -> None:
        executor = self._workspace()
        try:
            await self._call(executor.write_file, path, data)
        except SWEWorldError as exc:
            raise EpisodeError(f"writing {path} in the sweworld episode failed: {exc}") from exc

    async def _read(self, path: str) -> bytes:
        executor = self._workspace()
        if isinstance(executor, ReadsBytes):
            try:
                return await self._call(executor.read_bytes, path)
            except SWEWorldError as exc:
                raise EpisodeError(f"reading {path} in the sweworld episode failed: {exc}") from exc
        result = await self._run(f"base64 -w0 -- {shlex.quote(path)}", timeout=300)
        if result.exit_code != 0 or result.truncated:
            raise FileNotFoundError(f"{path} could not be read from the sweworld episode: {result.output[-500:]}")
        return base64.b64decode(result.output.strip())

    async def _checked(self, script: str, what: str) -> None:
        result = await self._run(script, timeout=600)
        if result.exit_code != 0:
            raise RuntimeError(f"{what} failed in the sweworld episode (exit {result.exit_code}): "
                               f"{self._paths.restore(result.output)[-2000:]}")

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        target = self._paths.path(target_path)
        await self._write(target, self._paths.content(target_path, Path(source_path).read_bytes()))

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        archive = f"{_XFER}/{uuid.uuid4().hex}.tar"
        await self._write(archive, pack(Path(source_dir), target_dir, self._paths))
        target = shlex.quote(self._paths.path(target_dir))
        await self._checked(f"mkdir -p {target} && tar -xf {archive} -C {target} --no-same-owner; "
                            f"rc=$?; rm -f {archive}; exit $rc", f"uploading {source_dir} to {target_dir}")

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        data = await self._read(self._paths.path(source_path))
        target = Path(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        archive = f"{_XFER}/{uuid.uuid4().hex}.tar"
        source = shlex.quote(self._paths.path(source_dir))
        await self._checked(f"mkdir -p {_XFER} && tar -cf {archive} -C {source} .", f"packing {source_dir}")
        try:
            data = await self._read(archive)
        finally:
            await self._run(f"rm -f {archive}", timeout=60)
        await self._call(unpack, data, Path(target_dir))


__all__ = ["EpisodeError", "SweworldEnvironment"]
