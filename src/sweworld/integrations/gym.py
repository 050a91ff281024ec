"""``SWEEnv``: a gymnasium environment over sweworld episodes.

``reset()`` opens a fresh isolated episode of a task (closing the previous one) and returns the
problem statement; ``step(action)`` runs one tool call (``execute_bash``, ``str_replace_editor``,
``search``, ``submit``) and returns ``(observation, reward, terminated, truncated, info)``. The
reward is 0.0 until ``submit``; then ``seam.grade`` grades the workspace's diff with the backend (the
harness in a fresh episode, or SWR), and the reward is the one of ``sweworld.seam.reward``: 1.0/0.0 on
real, SWR's P(resolved) on sim (``binary_reward=True``: 1.0 resolved, 0.0 not, on every backend). Rich
data goes in ``info``: always ``exit_code``, ``steps`` (the episode's step number), ``format_error``,
``instance_id``; on submit ``report`` (the harness's ``InstanceReport`` as a dict; None when the
evaluation failed, with ``error`` saying why: reward 0.0) and ``patch``; on truncation ``patch``.

Episodes come from a ``Backend`` (``sweworld.backends``: ``RealBackend(...)``, a sim or hybrid
backend...), passed as ``backend=``; without one, ``sweworld.integrations.default_backend()`` (the
registry's ``real``) is built on first use.

The step limit and the reset-before-step order are gymnasium's own wrappers, as ``gymnasium.make``
stacks them: ``SWEEnv.make(tasks, backend=..., step_limit=50)`` (or, after ``register_gym()``,
``gymnasium.make("sweworld/SWE-v0", tasks=..., backend=..., max_episode_steps=50)``) gives
``EndOnTruncation<TimeLimit<OrderEnforcing<PassiveEnvChecker<SWEEnv>>>>``. Hitting the limit is
``TimeLimit``'s truncation (``truncated=True``, reward 0.0), not termination; ``EndOnTruncation``
then puts the workspace's diff in ``info["patch"]`` and closes the episode, as ``submit`` does. A
bare ``SWEEnv(...)`` has no step limit. After an episode ends (submit or truncation) ``step`` raises
``RuntimeError`` until the next ``reset()``: there is no episode left to act in.

Actions are dicts: ``{"tool": name, "arguments": {...}}``, ``{"name": name, "arguments": ...}`` or
an OpenAI tool call ``{"function": {"name": ..., "arguments": "<json>"}}``; a JSON string of any of
these is accepted too. A malformed action is a step with ``info["format_error"] = True``.

gymnasium (extra ``gym``) is optional: with it ``SWEEnv`` subclasses ``gymnasium.Env``, and its
``observation_space`` and ``action_space`` are text of any characters up to ``MAX_TEXT`` long (an
action as a JSON string; dict actions are accepted as well), so that
``gymnasium.utils.env_checker.check_env`` passes. ``reset(seed=s)`` seeds the env's ``np_random`` and
opens ``tasks[s % len(tasks)]``; a later ``reset()`` opens the next task in turn from there.
``register_gym()`` (called explicitly, never at import) registers the id ``sweworld/SWE-v0``.

Branching (``docs/branching_frameworks.md``): on an episode that can be snapshotted (the real, sim and
hybrid backends' episodes: ``core.protocols.Branchable``), ``env.unwrapped.snapshot()`` takes an
``EnvSnapshot`` (the workspace and shell state, the step count, the last observation, the tools' state
and that of ``gymnasium.make``'s wrappers: ``gym_branch``); ``restore(snapshot)`` puts the episode and
all of those back and returns ``(observation, info)`` as ``reset`` does; ``fork(snapshot=None)``
returns a new env (same task, backend and counters; its own live episode in the snapshot's state, or
in the state of now) wrapped as this one is, its ``TimeLimit`` counting on from the parent's
elapsed steps; ``release(snapshot)`` frees one early. An episode that cannot branch raises
``ConfigError`` saying why. Wrappers added on top of ``gymnasium.make``'s are not copied into a fork.
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
import uuid
import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweworld.backends import make_backend
from sweworld.core.config import timeouts
from sweworld.core.executor import Executor
from sweworld.core.types import Task
from sweworld.integrations import default_backend
from sweworld.integrations import gym_branch as branch
from sweworld.seam import Graded, grade
from sweworld.seam import prompt as prompts
from sweworld.seam.session import Session
from sweworld.tools import ToolResult, ToolSet, default_tools

if TYPE_CHECKING:
    from sweworld.backends import Backend

try:  # optional: the class works the same without gymnasium (without the wrappers)
    import gymnasium as _gym
    from gymnasium import spaces as _spaces
except ImportError:  # pragma: no cover - exercised only without the extra
    _gym = None
    _spaces = None

ENV_ID = "sweworld/SWE-v0"
ENTRY_POINT = "sweworld.integrations.gym:SWEEnv"
STEP_LIMIT = 50
"""Default step limit (``TimeLimit``'s ``max_episode_steps``) of ``SWEEnv.make`` and the registration."""
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
    session: Session

    def close_episode(self) -> None:
        self.session.close()

    def close(self) -> None:
        self.close_episode()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


class SWEEnv(_Base):
    """Episodes of SWE tasks as a gymnasium environment; see the module docstring."""

    metadata: dict = {"render_modes": []}  # noqa: RUF012 - gymnasium's class attribute

    def __init__(self, tasks: list[Task] | None = None, *, backend: Backend | None = None, eval_timeout: float = timeouts.EVALUATION,
                 tools: ToolSet | None = None, log_dir: str | Path | None = None, render_mode: str | None = None,
                 binary_reward: bool = False):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"SWEEnv renders nothing: render_mode must be None, got {render_mode!r}")
        self.tasks: list[Task] = list(tasks or [])
        self._backend = None if backend is None else make_backend(backend)
        self.eval_timeout = eval_timeout
        self.binary_reward = binary_reward
        self.tools = tools or default_tools()
        self._held = _Held(None if log_dir else tempfile.mkdtemp(prefix="sweworld-gym-"), Session(self.tools))
        self.log_dir = Path(log_dir or self._held.tmp)
        # closed when forgotten too: on garbage collection or at interpreter exit
        self._finalizer = weakref.finalize(self, self._held.close)
        self.render_mode = render_mode
        self.task: Task | None = None
        self.steps = 0
        self.observation = ""
        """The last observation (the problem statement right after ``reset``)."""
        self._outer: weakref.ref | None = None  # gymnasium.make's outermost wrapper (EndOnTruncation sets it)
        self._episodes = 0
        self._next = 0
        if _spaces is not None:
            self.observation_space = AnyText(MAX_TEXT, min_length=0)
            self.action_space = AnyText(MAX_TEXT, min_length=0)

    @classmethod
    def make(cls, tasks: list[Task] | None = None, *, step_limit: int = STEP_LIMIT, **kwargs: Any) -> Any:
        """The environment as ``gymnasium.make`` builds the registered id: ``cls(tasks, **kwargs)`` in
        ``PassiveEnvChecker``, ``OrderEnforcing``, ``TimeLimit(step_limit)`` and ``EndOnTruncation``."""
        if _gym is None:  # pragma: no cover - exercised only without the extra
            raise ImportError("SWEEnv.make needs gymnasium (pip install 'sweworld[gym]')")
        spec = _gym.spec(register_gym())
        if cls is not SWEEnv:
            spec = replace(spec, entry_point=cls)
        return _gym.make(spec, max_episode_steps=step_limit, tasks=tasks, **kwargs)

    @property
    def backend(self) -> Backend:
        """Where episodes come from (``sweworld.backends``; default: ``default_backend()``, built on first use)."""
        if self._backend is None:
            self._backend = default_backend()
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
        if seed is not None:  # the seed places the turn: a reset without seed continues from it
            self._next = seed % len(self.tasks)
        task = self.tasks[self._next % len(self.tasks)]
        self._next += 1
        return task

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        """Open a fresh episode of ``options["task"]`` (a ``Task``, a row dict or an instance id), else of
        ``tasks[seed % len(tasks)]``, else of the next task in turn."""
        if _gym is not None:
            super().reset(seed=seed)
        task = self._pick(seed, options)
        self._held.session.open(self.backend, task)
        self.task, self.steps = task, 0
        self._episodes += 1
        info = {"instance_id": task.instance_id, "tools": self.tools.schemas(), "workdir": self.sandbox.workdir,
                "repo": task.repo, "base_commit": task.base_commit}
        self.observation = prompts.statement(task)
        return self.observation, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict]:
        """Run one tool call; see the module docstring for the action shapes and what ``info`` holds."""
        sandbox, task = self.sandbox, self.task
        if sandbox is None or task is None:
            raise RuntimeError("no open episode (it ended on submit or truncation, or none was opened): "
                               "call reset()")
        self.steps += 1
        name, args, error = parse_action(action)
        if error:
            result = ToolResult(observation=f"ERROR: {error}. Valid tools: {', '.join(self.tools.names)}.",
                                error=True)
        else:
            result = self._held.session.call(name, args)
        self.observation = result.observation
        info: dict[str, Any] = {"instance_id": task.instance_id, "exit_code": result.exit_code,
                                "steps": self.steps, "format_error": result.error}
        if result.submitted:
            patch = self.end_episode()
            graded = self.grade(patch)
            info.update(report=None if graded.report is None else graded.report.model_dump(), patch=patch)
            if graded.error:
                info["error"] = graded.error
            return result.observation, graded.reward, True, False, info
        return result.observation, 0.0, False, False, info

    def end_episode(self) -> str:
        """End the open episode: its workspace's diff, then the episode closed ("" when none is open)."""
        if self.sandbox is None:
            return ""
        patch = self.sandbox.diff()
        self._close_episode()
        return patch

    def grade(self, patch: str) -> Graded:
        """Grade ``patch`` on the current task with the backend (``seam.grade``: the harness in a fresh
        episode, or SWR); the reward is ``seam.reward``'s, or 1.0/0.0 with ``binary_reward``."""
        assert self.task is not None
        return grade(self.backend, self.task, patch, model="sweworld-gym", logs=self.log_dir,
                     name=f"{self.task.instance_id}-{self._episodes}", timeout=self.eval_timeout,
                     binary=self.binary_reward)

    def evaluate(self, patch: str) -> Any:
        """The backend's report on ``patch`` (``grade(patch).report``; None when the evaluation failed)."""
        return self.grade(patch).report

    # -- branching (gym_branch; docs/branching_frameworks.md) ------------------------------------
    def snapshot(self) -> branch.EnvSnapshot:
        """A snapshot of the open episode and of the env's step state (see the module docstring)."""
        episode = branch.branchable(self.sandbox, "SWEEnv.snapshot").snapshot()
        return self._point(episode)

    def restore(self, snapshot: branch.EnvSnapshot) -> tuple[str, dict]:
        """Put the open episode (one of its own snapshots) and the step state back to ``snapshot``;
        returns ``(observation, info)``: the observation then, and ``instance_id``, ``steps``, ``workdir``."""
        handle = self._handle(snapshot)
        executor = branch.branchable(self.sandbox, "SWEEnv.restore")
        branch.same_stack(self._wrapper(), self, snapshot.wrappers)  # refused before anything is changed
        executor.restore(handle)
        branch.put_wrapper_states(self._wrapper(), self, snapshot.wrappers)
        self.tools = self._held.session.tools = copy.deepcopy(snapshot.tools)
        self.task, self.steps, self.observation = snapshot.task, snapshot.steps, snapshot.observation
        return self.observation, {"instance_id": snapshot.task.instance_id, "steps": self.steps,
                                  "workdir": executor.workdir}

    def fork(self, snapshot: branch.EnvSnapshot | None = None) -> Any:
        """A new env whose episode is a fork of this one at ``snapshot`` (None: now), with the same task,
        backend, counters and wrappers; close it as any env."""
        executor = branch.branchable(self.sandbox, "SWEEnv.fork")
        point = self._point(None) if snapshot is None else snapshot
        logs = None if self._held.tmp else self.log_dir / f"fork-{uuid.uuid4().hex[:8]}"
        child = type(self)(self.tasks, backend=self.backend, eval_timeout=self.eval_timeout,
                           tools=copy.deepcopy(point.tools), log_dir=logs, render_mode=self.render_mode,
                           binary_reward=self.binary_reward)
        child.sandbox = executor.fork(None if snapshot is None else self._handle(snapshot))
        child.task, child.steps, child.observation = point.task, point.steps, point.observation
        child._episodes, child._next = self._episodes, self._next
        if _gym is not None:
            child._np_random, child._np_random_seed = copy.deepcopy(self._np_random), self._np_random_seed
        outer = branch.rewrap(child, point.wrappers)
        child._outer = weakref.ref(outer) if outer is not child else None
        return outer

    def release(self, snapshot: branch.EnvSnapshot) -> None:
        """Free ``snapshot`` now (else it is freed when the episode closes)."""
        if self.sandbox is not None:
            branch.branchable(self.sandbox, "SWEEnv.release").release(self._handle(snapshot))

    def _point(self, episode: Any) -> branch.EnvSnapshot:
        assert self.task is not None
        return branch.EnvSnapshot(episode, self.task, self.steps, self.observation, copy.deepcopy(self.tools),
                                  branch.wrapper_states(self._wrapper(), self))

    def _wrapper(self) -> Any:
        return self._outer() if self._outer is not None else None

    @staticmethod
    def _handle(snapshot: Any) -> Any:
        if not isinstance(snapshot, branch.EnvSnapshot):
            raise TypeError(f"expected an EnvSnapshot of SWEEnv.snapshot(), got {type(snapshot).__name__}")
        return snapshot.episode

    def render(self) -> None:
        return None

    @property
    def sandbox(self) -> Executor | None:
        """The open episode, or None."""
        return self._held.session.executor

    @sandbox.setter
    def sandbox(self, value: Executor | None) -> None:
        self._held.session.executor = value

    def _close_episode(self) -> None:
        self._held.close_episode()

    def close(self) -> None:
        """Close the open episode and remove the temporary log directory (if the env made one)."""
        self._finalizer()



if _gym is not None:
    class EndOnTruncation(_gym.Wrapper, _gym.utils.RecordConstructorArgs):
        """Ends ``SWEEnv``'s episode on a truncated step (``TimeLimit``'s): the workspace's diff goes in
        ``info["patch"]`` and the episode is closed, as on submit."""

        def __init__(self, env: Any):
            _gym.utils.RecordConstructorArgs.__init__(self)
            _gym.Wrapper.__init__(self, env)
            if isinstance(env.unwrapped, SWEEnv):  # the stack a snapshot keeps and a fork rebuilds
                env.unwrapped._outer = weakref.ref(self)

        def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict]:
            observation, reward, terminated, truncated, info = self.env.step(action)
            if truncated and not terminated:
                info["patch"] = self.env.unwrapped.end_episode()
            return observation, reward, terminated, truncated, info


def register_gym(env_id: str = ENV_ID) -> str:
    """Register ``SWEEnv`` with gymnasium (idempotent); returns the id for ``gymnasium.make``.

    Not called at import: call it once before ``gymnasium.make("sweworld/SWE-v0", tasks=[...])``. The
    registration has gymnasium's ``OrderEnforcing`` and ``TimeLimit`` (``max_episode_steps=STEP_LIMIT``,
    ``make(..., max_episode_steps=N)`` overrides it), then ``EndOnTruncation``.
    """
    import gymnasium
    from gymnasium.envs.registration import WrapperSpec
    if env_id not in gymnasium.registry:
        gymnasium.register(id=env_id, entry_point=ENTRY_POINT, max_episode_steps=STEP_LIMIT, order_enforce=True,
                           additional_wrappers=(WrapperSpec("EndOnTruncation", f"{__name__}:EndOnTruncation", {}),))
    return env_id
