"""A mini-swe-agent (2.4.6) ``Environment`` over one sweworld episode (any ``Executor``).

mini-swe-agent's ``DefaultAgent`` calls ``env.execute(action)`` with ``action = {"command": ...}``
for every action the model parses, merges ``env.get_template_vars()`` into its prompt templates and
``env.serialize()`` into the saved trajectory. The agent submits by running
``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` (the sentinel on the first line of the output, exit
code 0); the environment then raises mini-swe-agent's ``Submitted`` with an ``exit`` message whose
``extra`` is ``{"exit_status": "Submitted", "submission": ...}``, which ``DefaultAgent.run`` returns.
Here the submission is always the workspace's diff (``executor.diff()``: against the base commit,
new files included, build junk excluded), whatever the command printed after the sentinel
(that text is kept as ``extra["sentinel_output"]``).

Each command runs with ``cwd`` set (``( cd CWD && command )`` in the episode's shell), so as in
mini-swe-agent's own environments a ``cd`` or ``export`` does not carry over to the next action.

mini-swe-agent is imported only when a submission is raised (its import prints a banner unless
``MSWEA_SILENT_STARTUP`` is set; this module sets it when it imports the package). Use::

    env = from_task(task)                       # builds what is missing, opens an isolated episode
    agent = DefaultAgent(model, env, **agent_config)
    result = agent.run(task.problem_statement)  # result["submission"] is the diff
    env.close()
"""

from __future__ import annotations

import os
import platform
import shlex
from typing import Any

from pydantic import BaseModel

from sweworld.executor import Executor
from sweworld.sandbox import SandboxConfig
from sweworld.types import Task

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


def _submitted(message: dict) -> Exception:
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    from minisweagent.exceptions import Submitted
    return Submitted(message)


class SweworldEnvironment:
    """mini-swe-agent's ``Environment`` protocol (``execute``, ``get_template_vars``, ``serialize``)."""

    def __init__(self, executor: Executor, *, task: Task | None = None, owns_executor: bool = False,
                 config_class: type = SweworldEnvironmentConfig, **kwargs: Any):
        self.config = config_class(**kwargs)
        self.executor = executor
        self.task = task
        self.owns_executor = owns_executor

    def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        """Run ``action["command"]``; returns ``{"output", "returncode", "exception_info"}``.

        Raises ``minisweagent.exceptions.Submitted`` (the diff as submission) on the sentinel.
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
        lines = output.get("output", "").lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == self.config.submit_sentinel and output["returncode"] == 0:
            submission = self.executor.diff()
            raise _submitted({"role": "exit", "content": submission,
                              "extra": {"exit_status": "Submitted", "submission": submission,
                                        "sentinel_output": "".join(lines[1:])}})

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        """Config, ``platform.uname()`` fields (system, release, version, machine), the task's public
        fields (instance id, repo, problem statement...), ``workdir`` and ``cwd``; ``kwargs`` win."""
        task_vars = self.task.model_dump(include=set(TASK_VARS)) if self.task is not None else {}
        return {**self.config.model_dump(), **platform.uname()._asdict(), **task_vars,
                "workdir": self.executor.workdir, "cwd": self.config.cwd or self.executor.workdir, **kwargs}

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
        """Close the episode if this environment opened it (``from_task``)."""
        if self.owns_executor:
            self.executor.close()

    def __enter__(self) -> SweworldEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def from_task(task: Task, builder: Any = None, config: SweworldEnvironmentConfig | dict | None = None, *,
              sandbox_config: SandboxConfig | None = None) -> SweworldEnvironment:
    """Open an isolated episode of ``task`` (building what is missing) and wrap it; ``close()`` ends it."""
    from sweworld.envs import open_episode
    if sandbox_config is not None and sandbox_config.isolation != "bwrap":
        raise ValueError("agent commands run in the episode: only isolation='bwrap' is allowed")
    if isinstance(config, SweworldEnvironmentConfig):
        config = config.model_dump()
    sandbox = open_episode(task, builder, sandbox_config)
    return SweworldEnvironment(sandbox, task=task, owns_executor=True, **(config or {}))
