"""A mini-swe-agent (2.4.6) ``Environment`` over one sweworld episode (any ``Executor``, opened by a ``Backend``).

mini-swe-agent's ``DefaultAgent`` calls ``env.execute(action)`` with ``action = {"command": ...}``
for every action the model parses, merges ``env.get_template_vars()`` into its prompt templates and
``env.serialize()`` into the saved trajectory. The agent submits by running
``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` (the sentinel on the first line of the output, exit
code 0); the environment then raises mini-swe-agent's ``Submitted`` with an ``exit`` message whose
``extra`` is ``{"exit_status": "Submitted", "submission": ...}``, which ``DefaultAgent.run`` returns.
Exactly as in mini-swe-agent's own environments (``LocalEnvironment._check_finished``): the output,
leading whitespace stripped, is split into lines; when the first is the sentinel and the exit code
is 0, the submission is the rest of the output, as printed (its SWE-bench procedure ``cat``s a
``patch.txt`` there). Nothing after the sentinel is an empty submission (an empty patch), never the
workspace's diff (which would hold ``patch.txt`` itself). ``submission: diff`` in the config submits
the workspace's diff instead (``executor.diff()``: against the base commit, new files included,
build junk excluded), whatever was printed.

Each command runs with ``cwd`` set (``( cd CWD && command )`` in the episode's shell), so as in
mini-swe-agent's own environments a ``cd`` or ``export`` does not carry over to the next action.

Built from a config dict alone, as mini-swe-agent's ``get_environment`` (and so its SWE-bench batch
runner) builds environments, it loads ``instance_id`` from ``dataset`` and opens the episode
itself (see docs/minisweagent.md)::

    env = get_environment({"environment_class": "sweworld.integrations.minisweagent.SweworldEnvironment",
                           "dataset": "data.jsonl", "instance_id": "org__repo-1"})

Template variables: the config, ``platform.uname()`` (system, release, version, machine: mini's
own templates use them), ``workdir``, ``cwd``; the task's public fields as ``task_<field>``
(``task_version``...) and, where no such variable exists already, under their own names.

mini-swe-agent is imported only when a submission is raised (its import prints a banner unless
``MSWEA_SILENT_STARTUP`` is set; this module sets it when it imports the package). An environment
that opened its episode closes it on ``close()``, on garbage collection or at interpreter exit. Use::

    env = from_task(task, backend)              # opens an episode (default backend: builds what is missing)
    agent = DefaultAgent(model, env, **agent_config)
    result = agent.run(task.problem_statement)  # result["submission"]: the output after the sentinel
    env.close()
"""

from __future__ import annotations

import os
import platform
import shlex
import weakref
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from sweworld.backends import make_backend
from sweworld.core.errors import DatasetError
from sweworld.core.executor import Executor
from sweworld.core.types import Task
from sweworld.integrations import default_backend, episodes

if TYPE_CHECKING:
    from sweworld.backends import Backend

SENTINEL = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
#: Task fields offered to prompt templates (never the gold or test patch).
TASK_VARS = ("instance_id", "repo", "base_commit", "version", "problem_statement", "hints_text")


class SweworldEnvironmentConfig(BaseModel):
    """Settings of ``SweworldEnvironment`` (keyword arguments of its constructor)."""

    cwd: str = ""
    """Directory commands run in; "" means the executor's workdir (``/testbed``)."""
    env: dict[str, str] = {}
    """Variables exported before each command."""
    timeout: int = 60
    """Default wall timeout per command, seconds."""
    submit_sentinel: str = SENTINEL
    """First output line that means 'submit' (mini-swe-agent's own sentinel by default)."""
    submission: Literal["output", "diff"] = "output"
    """What is submitted: "output" = what the command printed after the sentinel, empty or not
    (mini-swe-agent's protocol); "diff" = the workspace's diff, whatever was printed."""
    dataset: str = "default"
    """Dataset holding ``instance_id`` (a shipped name, a file or a hub name); read when the environment
    is built from its config alone (no executor)."""
    instance_id: str = ""
    """The task to open an episode of, when built from the config alone."""
    split: str | None = None
    """Split of a hub or ``save_to_disk`` dataset."""
    repos_dir: str | None = None
    """Directory of existing clones (``DIR/owner__name``), used before the network by the default backend
    (built when the environment is given neither an executor nor a backend)."""


def _submitted(message: dict) -> Exception:
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    from minisweagent.exceptions import Submitted
    return Submitted(message)


def load_task(config: SweworldEnvironmentConfig) -> Task:
    """The task ``config.instance_id`` of ``config.dataset``."""
    if not config.instance_id:
        raise DatasetError("the environment config names no instance_id", where=f"dataset {config.dataset}",
                           hint="set environment.instance_id (and environment.dataset) in the config, "
                           "or pass an executor")
    return episodes.load_task(config.instance_id, config.dataset, config.split)


class SweworldEnvironment:
    """mini-swe-agent's ``Environment`` protocol (``execute``, ``get_template_vars``, ``serialize``).

    Without ``executor`` it opens an episode of ``task`` (default: ``instance_id`` of ``dataset`` from
    the config) with ``backend`` (a ``sweworld.backends.Backend``; default: ``default_backend()`` with
    the config's ``repos_dir``), and owns it.
    """

    def __init__(self, executor: Executor | None = None, *, task: Task | None = None, owns_executor: bool = False,
                 backend: Backend | None = None, config_class: type = SweworldEnvironmentConfig, **kwargs: Any):
        for gone in ("builder", "sandbox_config"):
            if gone in kwargs:  # not config fields: would be dropped silently
                raise TypeError(f"{gone}= is no longer accepted: pass backend=RealBackend(builder, sandbox_config=...)")
        self.config = config_class(**kwargs)
        if executor is None:
            task = task or load_task(self.config)
            backend = default_backend(repos_dir=self.config.repos_dir) if backend is None else make_backend(backend)
            executor, owns_executor = backend.open(task), True
        self.executor = executor
        self.task = task
        self.owns_executor = owns_executor
        # an owned episode is closed when forgotten too: on garbage collection or at interpreter exit
        self._finalizer = weakref.finalize(self, executor.close) if owns_executor else None

    def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        """Run ``action["command"]``; returns ``{"output", "returncode", "exception_info"}``.

        Raises ``minisweagent.exceptions.Submitted`` on the sentinel (see the module docstring).
        """
        command = action.get("command", "")
        cwd = cwd or self.config.cwd or self.executor.workdir
        timeout = timeout or self.config.timeout
        if self.config.env:
            exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.config.env.items())
            command = f"export {exports}\n{command}"
        try:
            result = self.executor.run(command, cwd=cwd, timeout=timeout)
            output: dict[str, Any] = {"output": result.output, "returncode": result.exit_code,
                                      "exception_info": ""}
            if result.timed_out:
                output["returncode"] = -1
                output["exception_info"] = (f"An error occurred while executing the command: the command "
                                            f"timed out after {timeout} seconds and was killed.")
                output["extra"] = {"exception_type": "TimeoutExpired", "exception": "timed out"}
        except Exception as exc:  # infrastructure failures are shown to the agent, as LocalEnvironment does
            output = {"output": "", "returncode": -1,
                      "exception_info": f"An error occurred while executing the command: {exc}",
                      "extra": {"exception_type": type(exc).__name__, "exception": str(exc)}}
        self._check_finished(output)
        return output

    def _check_finished(self, output: dict) -> None:
        """mini-swe-agent's own check (``LocalEnvironment._check_finished``), the sentinel configurable."""
        lines = output.get("output", "").lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == self.config.submit_sentinel and output["returncode"] == 0:
            after = "".join(lines[1:])
            source = self.config.submission
            submission = self.executor.diff() if source == "diff" else after
            raise _submitted({"role": "exit", "content": submission,
                              "extra": {"exit_status": "Submitted", "submission": submission,
                                        "submission_source": source, "sentinel_output": after}})

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        """The config, the task's public fields, then what mini-swe-agent's own environments offer
        (``platform.uname()``: system, release, version, machine), ``workdir`` and ``cwd``, then
        ``kwargs``: a later group wins. A task field is always there as ``task_<field>`` too (the
        task's ``version`` is ``task_version``; ``version`` stays the platform's)."""
        task_vars = self.task.model_dump(include=set(TASK_VARS)) if self.task is not None else {}
        return {**self.config.model_dump(), **task_vars, **{f"task_{k}": v for k, v in task_vars.items()},
                **platform.uname()._asdict(), "workdir": self.executor.workdir,
                "cwd": self.config.cwd or self.executor.workdir, **kwargs}

    def serialize(self) -> dict:
        env_config = self.config.model_dump(mode="json")
        if self.task is not None:
            env_config["instance_id"] = self.task.instance_id
        return {"info": {"config": {
            "environment": env_config,
            "environment_type": f"{self.__class__.__module__}.{self.__class__.__name__}",
        }}}

    def diff(self) -> str:
        """The workspace's changes against the base commit."""
        return self.executor.diff()

    def close(self) -> None:
        """Close the episode if this environment opened it (``from_task``, or built from a config)."""
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self) -> SweworldEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def from_task(task: Task, backend: Backend | None = None,
              config: SweworldEnvironmentConfig | dict | None = None) -> SweworldEnvironment:
    """Open an episode of ``task`` with ``backend`` (default: ``default_backend()``, which builds what is
    missing) and wrap it; ``close()`` ends it."""
    if isinstance(config, SweworldEnvironmentConfig):
        config = config.model_dump()
    return SweworldEnvironment(task=task, backend=backend, **(config or {}))
