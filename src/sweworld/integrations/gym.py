"""``SWEEnv``: a gymnasium-style environment over sweworld episodes.

``reset()`` opens a fresh isolated episode of a task (closing the previous one) and returns the
problem statement; ``step(action)`` runs one tool call (``execute_bash``, ``str_replace_editor``,
``search``, ``submit``) and returns ``(observation, reward, terminated, truncated, info)``. The
reward is 0.0 until ``submit``; then the workspace's diff is graded by the harness in a fresh
episode and the reward is 1.0 when the task is resolved. Hitting ``step_limit`` is truncation
(``truncated=True``, reward 0.0), not termination. Rich data goes in ``info``: always
``exit_code``, ``steps``, ``format_error``, ``instance_id``; on submit ``report`` (the harness's
``InstanceReport`` as a dict) and ``patch``; on truncation ``patch``.

Actions are dicts: ``{"tool": name, "arguments": {...}}``, ``{"name": name, "arguments": ...}`` or
an OpenAI tool call ``{"function": {"name": ..., "arguments": "<json>"}}``; a JSON string of any of
these is accepted too. A malformed action is a step with ``info["format_error"] = True``.

gymnasium (extra ``gym``) is optional: with it ``SWEEnv`` subclasses ``gymnasium.Env`` and has
``observation_space`` (text of any characters up to ``MAX_TEXT`` long) and ``action_space`` (the
same: a JSON string of an action; dict actions are accepted as well). These spaces are descriptive:
observations are text, so ``gymnasium.utils.env_checker.check_env`` is not expected to pass.
``register_gym()`` (called explicitly, never at import) registers the id ``sweworld/SWE-v0`` so that
``gymnasium.make("sweworld/SWE-v0", tasks=[...])`` works.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweworld.executor import Executor
from sweworld.tools import ToolResult, ToolSet, default_tools
from sweworld.types import Task

if TYPE_CHECKING:
    from sweworld.sandbox import SandboxConfig

try:  # optional: the class works the same without gymnasium
    import gymnasium as _gym
    from gymnasium import spaces as _spaces
except ImportError:  # pragma: no cover - exercised only without the extra
    _gym = None
    _spaces = None

ENV_ID = "sweworld/SWE-v0"
ENTRY_POINT = "sweworld.integrations.gym:SWEEnv"
MAX_TEXT = 10_000_000

_Base: type = _gym.Env if _gym is not None else object

if _spaces is not None:
    class AnyText(_spaces.Text):
        """A ``Text`` space that contains every string up to ``max_length`` (any Unicode character)."""

        def contains(self, x: Any) -> bool:
            return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


def parse_action(action: Any) -> tuple[str | None, Any, str]:
    """``(tool name, arguments, error)`` of an action in any accepted shape; ``error`` is "" when valid."""
    if isinstance(action, str):
        try:
            action = json.loads(action)
        except ValueError as exc:
            return None, None, f"the action is not valid JSON ({exc})"
    if not isinstance(action, dict):
        return None, None, f"the action must be a dict, got {type(action).__name__}"
    if isinstance(action.get("function"), dict):
        fn = action["function"]
        name, args = fn.get("name"), fn.get("arguments")
    else:
        name = action.get("tool", action.get("name"))
        args = action.get("arguments", action.get("args"))
    if not isinstance(name, str) or not name:
        return None, None, "the action names no tool (expected {'tool': NAME, 'arguments': {...}})"
    return name, args, ""


@dataclass
class _Held:
    """What an ``SWEEnv`` holds, apart from it so that a finalizer can free it: the open episode and
    the temporary log directory (when the env made one)."""

    tmp: str | None
    sandbox: Executor | None = None

    def close_episode(self) -> None:
        if self.sandbox is not None:
            sandbox, self.sandbox = self.sandbox, None
            sandbox.close()

    def close(self) -> None:
        self.close_episode()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


class SWEEnv(_Base):
    """Episodes of SWE tasks as a gymnasium environment; see the module docstring."""

    metadata: dict = {"render_modes": []}  # noqa: RUF012 - gymnasium's class attribute

    def __init__(self, tasks: list[Task] | None = None, *, builder: Any = None, step_limit: int = 50,
                 sandbox_config: SandboxConfig | None = None, eval_timeout: float = 1800,
                 tools: ToolSet | None = None, log_dir: str | Path | None = None, backend: Any = None):
        if sandbox_config is not None and sandbox_config.isolation != "bwrap":
            raise ValueError("SWEEnv runs agent actions: only isolation='bwrap' is allowed")
        self.tasks: list[Task] = list(tasks or [])
        self._builder = builder
        self._backend = backend
        self.step_limit = step_limit
        self.sandbox_config = sandbox_config
        self.eval_timeout = eval_timeout
        self.tools = tools or default_tools()
        self._held = _Held(None if log_dir else tempfile.mkdtemp(prefix="sweworld-gym-"))
        self.log_dir = Path(log_dir or self._held.tmp)
        # closed when forgotten too: on garbage collection or at interpreter exit
        self._finalizer = weakref.finalize(self, self._held.close)
        self.render_mode = None
        self.task: Task | None = None
        self.steps = 0
        self.done = False
        self._episodes = 0
        self._next = 0
        if _spaces is not None:
            self.observation_space = AnyText(MAX_TEXT, min_length=0)
            self.action_space = AnyText(MAX_TEXT, min_length=0)

    @property
    def backend(self) -> Any:
        """Where episodes come from (``sweworld.backends``; default: a real one over ``builder``)."""
        if self._backend is None:
            from sweworld.backends.real import RealBackend
            self._backend = RealBackend(self._builder, sandbox_config=self.sandbox_config)
        return self._backend

    def _pick(self, seed: int | None, options: dict | None) -> Task:
        chosen = (options or {}).get("task")
        if isinstance(chosen, Task):
            return chosen
        if isinstance(chosen, dict):
            return Task.model_validate(chosen)
        if isinstance(chosen, str):
            for task in self.tasks:
                if task.instance_id == chosen:
                    return task
            raise KeyError(f"no task {chosen!r} among the environment's tasks")
        if not self.tasks:
            raise ValueError("no task: pass tasks=[...] to SWEEnv or options={'task': task} to reset()")
        if seed is not None:
            return self.tasks[seed % len(self.tasks)]
        task = self.tasks[self._next % len(self.tasks)]
        self._next += 1
        return task

    def _open(self, task: Task) -> Executor:
        return self.backend.open(task)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        """Open a fresh episode of ``options["task"]`` (a ``Task``, a row dict or an instance id), else of
        ``tasks[seed % len(tasks)]``, else of the next task in turn."""
        if _gym is not None:
            super().reset(seed=seed)
        task = self._pick(seed, options)
        self._close_episode()
        self.sandbox = self._open(task)
        self.task, self.steps, self.done = task, 0, False
        self._episodes += 1
        self.tools.reset()
        info = {"instance_id": task.instance_id, "tools": self.tools.schemas(), "workdir": self.sandbox.workdir,
                "repo": task.repo, "base_commit": task.base_commit}
        return task.problem_statement, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict]:
        """Run one tool call; see the module docstring for the action shapes and what ``info`` holds."""
        if self.done:
            raise RuntimeError("the episode is over (terminated or truncated); call reset()")
        if self.sandbox is None or self.task is None:
            raise RuntimeError("call reset() before step()")
        self.steps += 1
        name, args, error = parse_action(action)
        if error:
            result = ToolResult(observation=f"ERROR: {error}. Valid tools: {', '.join(self.tools.names)}.",
                                error=True)
        else:
            result = self.tools.call(self.sandbox, name, args)
        info: dict[str, Any] = {"instance_id": self.task.instance_id, "exit_code": result.exit_code,
                                "steps": self.steps, "format_error": result.error}
        if result.submitted:
            patch = self.sandbox.diff()
            self._close_episode()
            report = self.evaluate(patch)
            info.update(report=report.model_dump(), patch=patch)
            self.done = True
            return result.observation, 1.0 if report.resolved else 0.0, True, False, info
        if self.steps >= self.step_limit:
            info["patch"] = self.sandbox.diff()
            self._close_episode()
            self.done = True
            return result.observation, 0.0, False, True, info
        return result.observation, 0.0, False, False, info

    def evaluate(self, patch: str) -> Any:
        """Grade ``patch`` on the current task with the backend (the harness in a fresh episode, or SWR)."""
        from sweworld.harness.predictions import Prediction
        assert self.task is not None
        prediction = Prediction(instance_id=self.task.instance_id, model_name_or_path="sweworld-gym",
                                model_patch=patch)
        from sweworld import names
        log_dir = self.log_dir / names.check(f"{self.task.instance_id}-{self._episodes}", what="instance_id")
        return self.backend.evaluate(self.task, prediction, log_dir, timeout=self.eval_timeout)

    def render(self) -> None:
        return None

    @property
    def sandbox(self) -> Executor | None:
        """The open episode, or None."""
        return self._held.sandbox

    @sandbox.setter
    def sandbox(self, value: Executor | None) -> None:
        self._held.sandbox = value

    def _close_episode(self) -> None:
        self._held.close_episode()

    def close(self) -> None:
        """Close the open episode and remove the temporary log directory (if the env made one)."""
        self._finalizer()


def register_gym(env_id: str = ENV_ID) -> str:
    """Register ``SWEEnv`` with gymnasium (idempotent); returns the id for ``gymnasium.make``.

    Not called at import: call it once before ``gymnasium.make("sweworld/SWE-v0", tasks=[...])``.
    The passive environment checker is disabled (observations are text, not arrays).
    """
    import gymnasium
    if env_id not in gymnasium.registry:
        gymnasium.register(id=env_id, entry_point=ENTRY_POINT, disable_env_checker=True)
    return env_id
