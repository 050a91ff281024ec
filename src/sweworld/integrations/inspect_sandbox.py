"""inspect-ai's ``SandboxEnvironment`` over a sweworld episode: ``--sandbox sweworld``.

Registered as ``sweworld`` (the ``inspect_ai`` entry point loads ``sweworld.integrations.inspect_registry``).
A sample's episode comes from, in this order:

1. the sandbox config: a ``SweworldSandboxConfig`` (the fields of ``integrations.episodes.EpisodeSpec``),
   a YAML/JSON file of those fields, or a compose file (what inspect_evals' SWE-bench task writes),
   whose ``default`` (else first) service's ``image`` names the instance
   (``swebench/sweb.eval.x86_64.<org>_1776_<repo>-<n>:latest``);
2. the sample's metadata: ``instance_id`` and ``dataset`` (a path or a shipped dataset's name), or
   ``image_name``; a metadata row with SWE-bench's fields (``repo``, ``base_commit``,
   ``FAIL_TO_PASS``...) is the task itself when the dataset does not hold the instance.

The backend (``real`` by default, ``sim`` or ``hybrid``) and its options come from the config too
(or ``$SWEWORLD_BACKEND``); samples of one configuration share one backend. The episode's commands
are the episode's (isolated, no network); ``/opt/miniconda3`` is the conda shim
(``sandbox/conda_shim.py``), so SWE-bench images' ``conda activate testbed`` works.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any, Literal, overload

import anyio
import yaml
from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUserUnsupportedError,
    sandboxenv,
)
from inspect_ai.util._sandbox.environment import SandboxUnavailableError
from pydantic import ConfigDict

from sweworld.core.errors import DatasetError, SWEWorldError
from sweworld.core.executor import Executor
from sweworld.core.types import Task
from sweworld.integrations import inspect_exec
from sweworld.integrations.episodes import EpisodeSpec, backend_for, instance_id_of, load_task, spec_of

#: Blocking episode calls run in threads; inspect's samples may be many more than anyio's 40.
_THREADS = anyio.CapacityLimiter(512)
#: What a command may run as: the episode's one user (root in its own user namespace).
_ROOT = (None, "root", "0")
_TASK_FIELDS = ("repo", "base_commit", "FAIL_TO_PASS", "PASS_TO_PASS")


class SweworldSandboxConfig(EpisodeSpec):
    """The ``--sandbox sweworld:CONFIG`` model: which instance, from where, on which backend (frozen and
    hashable: inspect keeps the sandbox specs of a task in a set)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def __hash__(self) -> int:
        return hash(self.model_dump_json())


async def _blocking(fn: Any, *args: Any) -> Any:
    return await anyio.to_thread.run_sync(lambda: fn(*args), limiter=_THREADS)


def _spec_from_config(config: SandboxEnvironmentConfigType | None) -> dict[str, Any]:
    if config is None:
        return {}
    if isinstance(config, EpisodeSpec):
        return config.model_dump(exclude_unset=True)
    if not isinstance(config, str):
        raise DatasetError(f"a sweworld sandbox config must be a SweworldSandboxConfig or a file, got "
                           f"{type(config).__name__}", hint="pass sweworld:config.yaml or SweworldSandboxConfig(...)")
    path = Path(config)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise DatasetError(f"cannot read the sandbox config: {exc}", where=config,
                           hint="give a YAML file of SweworldSandboxConfig fields or a compose file") from None
    if isinstance(data, dict) and isinstance(data.get("services"), dict):  # a compose file
        services = data["services"]
        service = services.get("default") or next(iter(services.values()), {}) or {}
        extra = data.get("x-sweworld") or {}
        return {**extra, "image": service.get("image")} if service.get("image") else dict(extra)
    if not isinstance(data, dict):
        raise DatasetError("the sandbox config is not a mapping", where=config,
                           hint="give a YAML file of SweworldSandboxConfig fields or a compose file")
    return data


def _task(spec: EpisodeSpec, metadata: dict[str, Any], where: str) -> Task:
    """The task of ``spec``: the dataset's row, else the metadata's SWE-bench row."""
    instance_id = instance_id_of(spec, where=where)
    try:
        return load_task(instance_id, spec.dataset, spec.split)
    except DatasetError:
        if not all(field in metadata for field in _TASK_FIELDS):
            raise
    row = {k: v for k, v in metadata.items() if k not in ("image_name", "arch", "allow_internet")}
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        if isinstance(row[key], str):
            row[key] = json.loads(row[key])
    return Task.model_validate({**row, "instance_id": instance_id})


def open_sample(config: SandboxEnvironmentConfigType | None, metadata: dict[str, Any]) -> SweworldSandboxEnvironment:
    """The sample's episode (blocking: builds what is missing, then opens)."""
    data = _spec_from_config(config)
    for key in ("instance_id", "dataset"):
        if key not in data and metadata.get(key):
            data[key] = metadata[key]
    if "image" not in data and "instance_id" not in data and metadata.get("image_name"):
        data["image"] = metadata["image_name"]
    where = f"sandbox config {config}" if isinstance(config, str) else "sample metadata"
    spec = spec_of(data, where=where)
    task = _task(spec, metadata, where)
    backend = backend_for(spec)
    executor = backend.open(task, label=task.instance_id)
    return SweworldSandboxEnvironment(executor, task, spec)


def _prerequisite(exc: SWEWorldError) -> Exception:
    from inspect_ai._util.error import PrerequisiteError
    return PrerequisiteError(f"sweworld: {exc}")


@sandboxenv(name="sweworld")
class SweworldSandboxEnvironment(SandboxEnvironment):
    """One sample's sweworld episode (real, sim or hybrid) as an inspect sandbox."""

    def __init__(self, executor: Executor, task: Task, spec: EpisodeSpec):
        super().__init__()
        self.executor = executor
        self.task = task
        self.spec = spec
        self.closed = False

    @property
    def backend(self) -> str:
        """``real``, ``sim`` or ``hybrid``."""
        return self.spec.backend

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def config_files(cls) -> list[str]:
        return ["sweworld.yaml", "sweworld.yml"]

    @classmethod
    def is_docker_compatible(cls) -> bool:
        return True  # takes compose files (inspect_evals' SWE-bench) and maps their image to the instance

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> SweworldSandboxConfig:
        return SweworldSandboxConfig(**config)

    @classmethod
    async def sample_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                          metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        try:
            return {"default": await _blocking(open_sample, config, dict(metadata or {}))}
        except SWEWorldError as exc:
            raise _prerequisite(exc) from exc

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                             environments: dict[str, SandboxEnvironment], interrupted: bool) -> None:
        for environment in environments.values():
            if isinstance(environment, SweworldSandboxEnvironment):
                await _blocking(environment.close)

    def close(self) -> None:
        self.closed = True
        self.executor.close()

    def _alive(self) -> None:
        if self.closed:
            raise SandboxUnavailableError(f"the sweworld episode of {self.task.instance_id} is closed")

    # -- exec --------------------------------------------------------------------------------
    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        self._alive()
        if user not in _ROOT:
            raise SandboxUserUnsupportedError(
                f"a sweworld episode runs commands as its one user (root in its own user namespace), not {user!r}")
        stdin = input.encode() if isinstance(input, str) else input
        try:
            reply = await inspect_exec.exec_async(
                self.executor, list(cmd), cwd=cwd, env=env, stdin=stdin, timeout=timeout, blocking=_blocking,
                cap=inspect_exec.capture(SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE))
        except SWEWorldError as exc:
            raise SandboxUnavailableError(f"the sweworld episode of {self.task.instance_id} failed: {exc}") from exc
        if reply.timed_out:
            raise TimeoutError(f"the command timed out after {timeout}s (every process it started was killed)")
        if inspect_exec.permission_denied(reply):
            raise PermissionError(errno.EACCES, reply.stderr.strip(), cmd[0] if cmd else "")
        _check_output_limit(reply.stdout, reply.stderr)
        return ExecResult(success=reply.returncode == 0, returncode=reply.returncode, stdout=reply.stdout,
                          stderr=reply.stderr)

    # -- files -------------------------------------------------------------------------------
    async def _refuse(self, path: str, *, write: bool) -> None:
        real = inspect_exec.real_of(self.executor)
        check = await _blocking(lambda: real.run(inspect_exec.mode_check(path, write=write), timeout=60))
        verdict = check.output.strip()
        if verdict == "DIR":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        if verdict in ("NOREAD", "NOWRITE"):
            raise PermissionError(errno.EACCES, "Permission denied", path)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        self._alive()
        path = inspect_exec.resolve(file, self.executor.workdir)
        await self._refuse(path, write=True)
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        await _blocking(inspect_exec.real_of(self.executor).write_file, path, data)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        self._alive()
        path = inspect_exec.resolve(file, self.executor.workdir)
        await self._refuse(path, write=False)
        try:
            data = await _blocking(inspect_exec.read_bytes, self.executor, path)
        except FileNotFoundError as exc:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", file) from exc
        if len(data) > SandboxEnvironmentLimits.MAX_READ_FILE_SIZE:
            raise OutputLimitExceededError(limit_str=SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR,
                                           truncated_output=None)
        return data.decode("utf-8") if text else data

    def default_polling_interval(self) -> float:
        return 0.2


def _check_output_limit(stdout: str, stderr: str) -> None:
    """inspect's exec contract: each stream at most ``SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE``
    bytes (10 MiB; ``INSPECT_SANDBOX_MAX_EXEC_OUTPUT_SIZE``), else ``OutputLimitExceededError``
    carrying the first that many bytes of each, as inspect's own providers raise it."""
    limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
    streams = [text.encode("utf-8", errors="replace") for text in (stdout, stderr)]
    if all(len(data) <= limit for data in streams):
        return
    kept = "".join(data[:limit].decode("utf-8", errors="ignore") for data in streams)
    raise OutputLimitExceededError(limit_str=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR, truncated_output=kept)


__all__ = ["SweworldSandboxConfig", "SweworldSandboxEnvironment", "open_sample"]
