"""TRL's GRPO on sweworld episodes: ``GRPOTrainer(environment_factory=...)``.

TRL builds one environment per rollout from a zero-argument factory (instances are pooled and reset
between batches), exposes the environment's public methods as the model's tools (their signatures
and docstrings are the tool schemas), calls ``reset(**row)`` with the dataset row before generating,
runs the model's tool calls against the methods, and scores the rollout with ``get_reward()``.

- ``environment_factory(dataset, backend="real", **options)``: that factory. ``dataset`` names the
  tasks (a shipped dataset, a file, a ``save_to_disk`` directory, a hub name, or ``Task`` objects or
  rows); ``backend`` is ``real``, ``sim`` or ``hybrid`` (sim and hybrid with the embedded world unless
  ``backend_options`` says otherwise) or a ``Backend``; ``options`` are ``EnvOptions``' fields.
- ``SWEWorldEnv``: ``reset(**row)`` opens a fresh isolated episode of ``row["instance_id"]`` (closing
  the previous one); the tools are the agent's own (``execute_bash``, ``str_replace_editor``,
  ``search``, ``submit``: ``sweworld.tools``) acting in that one episode, so the shell's directory and
  exports persist between calls; ``get_reward()`` grades the episode's diff (what ``submit`` left, or
  the workspace's diff when the model stopped without submitting), closes the episode and returns the
  verdict: the harness's 0/1 (real), the SWR's P(resolved) (sim), the routed one (hybrid). A tool call
  that raises (an infrastructure failure) is re-raised for TRL to show and count, ends the episode and
  makes the reward 0.0 with the error in ``result.error``; the batch goes on. ``result`` holds each
  graded rollout (``Rollout``), also appended to ``EnvOptions.record`` as a JSON line when set.
- ``dataset(tasks)``: the ``datasets.Dataset`` of prompts (the agent's system and first user messages)
  with their ``instance_id``, which TRL passes to ``reset``.

What a TRL user writes::

    from trl import GRPOConfig, GRPOTrainer
    from sweworld.integrations import trl as sw

    trainer = GRPOTrainer(model=..., args=GRPOConfig(...), train_dataset=sw.dataset("default"),
                          environment_factory=sw.environment_factory("default", backend="sim"))
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sweworld.agents.config import load_agent_config
from sweworld.core.config import timeouts
from sweworld.core.errors import DatasetError, InfraError, WorldError
from sweworld.core.types import Task
from sweworld.integrations.episodes import backend_config, backend_spec, load_tasks_of, resolve_backend
from sweworld.seam import grade
from sweworld.seam import prompt as prompts
from sweworld.seam.session import Session
from sweworld.seam.tasks import TaskIndex
from sweworld.tools import default_tools

if TYPE_CHECKING:
    from sweworld.core.protocols import Backend

WORKDIR = "/testbed"
"""Where an episode's repository is (the prompts name it)."""


class EnvOptions(BaseModel):
    """How ``environment_factory``'s environments open, grade and record episodes."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    backend: Any = Field(default="real", description="real, sim or hybrid, or a sweworld Backend / BackendConfig.")
    backend_options: dict[str, Any] = Field(default_factory=dict, description=(
        "Further fields of the backend's config (sweworld.core.config.BackendConfig): world, audit_rate, sandbox..."))
    repos_dir: str | None = Field(default=None, description="Directory of existing clones (DIR/owner__name).")
    split: str | None = Field(default=None, description="Split of a hub or save_to_disk dataset.")
    instance_ids: list[str] | None = Field(default=None, description="Only these instances of the dataset.")
    log_dir: Path | None = Field(default=None, description=(
        "Keep each rollout's evaluation logs here (default: graded in a temporary directory, removed after)."))
    eval_timeout: float = Field(default=timeouts.EVALUATION, gt=0, description="Seconds for one evaluation.")
    record: Path | None = Field(default=None, description="Append each graded rollout here as a JSON line.")


class Rollout(BaseModel):
    """One graded rollout: what ``get_reward`` decided and why."""

    instance_id: str
    backend: str
    reward: float
    resolved: bool | None = Field(default=None, description="The verdict (None: not graded).")
    submitted: bool = Field(default=False, description="The model called submit.")
    tool_calls: int = 0
    patch: str = ""
    error: str | None = Field(default=None, description="Why the rollout got 0.0 without a verdict.")


def _tasks_of(dataset: Any, options: EnvOptions) -> list[Task]:
    if isinstance(dataset, (str, Path)):
        tasks = load_tasks_of(str(dataset), options.split, options.instance_ids)
    else:
        tasks = [t if isinstance(t, Task) else Task.model_validate(t) for t in dataset]
        if options.instance_ids is not None:
            tasks = [t for t in tasks if t.instance_id in set(options.instance_ids)]
    if not tasks:
        raise DatasetError("no tasks to open episodes of", where=f"dataset {dataset!s:.80}",
                           hint="give a dataset with rows (and instance_ids that are in it)")
    return tasks


class EnvironmentFactory:
    """The zero-argument factory TRL takes: each call is a new ``SWEWorldEnv`` sharing the tasks and the
    backend (built on first use in each process; the factory pickles without it)."""

    def __init__(self, dataset: Any, options: EnvOptions):
        self.options = options
        self.where = f"dataset {dataset!s:.80}"
        self.tasks = TaskIndex(_tasks_of(dataset, options), where=self.where)
        self.dataset = str(dataset) if isinstance(dataset, (str, Path)) else None  # what a sim world reads
        if isinstance(options.backend, str):  # wrong options fail here, once, not in every rollout's reset
            backend_config(backend_spec(options.backend, backend_options=options.backend_options,
                                        repos_dir=options.repos_dir, dataset=self.dataset, where="environment_factory"))
        self._backend: Backend | None = None
        self._lock = threading.Lock()
        self.results: list[Rollout] = []

    def __call__(self) -> SWEWorldEnv:
        return SWEWorldEnv(self)

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_backend", "_lock")}
        return {**state, "_backend": None if isinstance(self.options.backend, str) else self._backend}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())

    @property
    def backend(self) -> Backend:
        with self._lock:
            if self._backend is None:
                self._backend = resolve_backend(self.options.backend, backend_options=self.options.backend_options,
                                                repos_dir=self.options.repos_dir, dataset=self.dataset,
                                                where="environment_factory")
            return self._backend

    def task(self, row: dict[str, Any]) -> Task:
        instance_id = row.get("instance_id")
        if not instance_id or instance_id not in self.tasks:
            raise DatasetError(f"the row's instance_id {instance_id!r} is not one of the environment's tasks",
                               where=self.where, hint="give the dataset an instance_id column of the factory's "
                               "tasks (sweworld.integrations.trl.dataset(tasks) writes one)")
        return self.tasks[instance_id]

    def graded(self, rollout: Rollout) -> None:
        with self._lock:
            self.results.append(rollout)
            if self.options.record is not None:
                self.options.record.parent.mkdir(parents=True, exist_ok=True)
                with self.options.record.open("a", encoding="utf-8") as out:
                    out.write(rollout.model_dump_json() + "\n")


def _documented(tool: str):
    """The docstring of the method for ``tool``, in the Google style TRL reads schemas from, made from
    the tool's own schema (``sweworld.tools``): one description of each tool, in one place."""
    schema = next(s["function"] for s in default_tools().schemas() if s["function"]["name"] == tool)
    args = "".join(f"\n    {name}: {prop.get('description', name)}" for name, prop in
                   schema["parameters"]["properties"].items())

    def document(method):
        method.__doc__ = schema["description"] + (f"\n\nArgs:{args}" if args else "") + \
            "\n\nReturns:\n    The tool's output."
        return method
    return document


class SWEWorldEnv:
    """One rollout's sweworld episode as TRL's environment; see the module docstring."""

    def __init__(self, factory: EnvironmentFactory):
        self._factory = factory
        self._episode = Session(default_tools())
        self._finalizer = weakref.finalize(self, self._episode.close)
        self._task: Task | None = None
        self._calls = 0
        self._patch: str | None = None
        self._error: str | None = None
        self.result: Rollout | None = None

    def reset(self, **row: Any) -> str | None:
        """Open a fresh episode of ``row["instance_id"]``; the problem statement when the row has no prompt."""
        self._episode.close()
        self._task = self._factory.task(row)
        self._calls, self._patch, self._error, self.result = 0, None, None, None
        try:
            self._episode.open(self._factory.backend, self._task)
        except (InfraError, WorldError) as exc:  # the environment is unavailable: 0.0 for this rollout, the batch goes on
            self._error = f"{type(exc).__name__}: {exc}"
        if "prompt" in row:
            return None
        return prompts.messages(self._task, "agent", workdir=WORKDIR)[-1]["content"]

    def _call(self, tool: str, **arguments: Any) -> str:
        executor = self._episode.executor
        if executor is None:
            if self._error is not None:
                raise RuntimeError(f"the episode failed: {self._error}")
            return "The episode has ended (submitted): no further tool calls act on it."
        self._calls += 1
        try:
            result = self._episode.call(tool, {k: v for k, v in arguments.items() if v is not None})
            if result.submitted:
                self._patch = executor.diff()
                self._episode.close()
        except Exception as exc:  # recorded, then re-raised for TRL to show and count (not swallowed)
            self._error = f"{tool}: {type(exc).__name__}: {exc}"
            self._episode.close()
            raise
        return result.observation

    @_documented("execute_bash")
    def execute_bash(self, command: str, timeout: float | None = None) -> str:
        return self._call("execute_bash", command=command, timeout=timeout)

    @_documented("str_replace_editor")
    def str_replace_editor(self, command: Literal["view", "create", "str_replace", "insert", "undo_edit"], path: str,
                           file_text: str | None = None, old_str: str | None = None, new_str: str | None = None,
                           insert_line: int | None = None, view_range: list[int] | None = None) -> str:
        return self._call("str_replace_editor", command=command, path=path, file_text=file_text, old_str=old_str,
                          new_str=new_str, insert_line=insert_line, view_range=view_range)

    @_documented("search")
    def search(self, search_term: str, path: str | None = None) -> str:
        return self._call("search", search_term=search_term, path=path)

    @_documented("submit")
    def submit(self, result: str | None = None) -> str:
        return self._call("submit", result=result)

    def get_reward(self) -> float:
        """The rollout's reward: the backend's verdict on its patch (0.0 when it failed); the episode closed."""
        if self.result is None:
            self.result = self._grade()
            self._factory.graded(self.result)
        return self.result.reward

    def _grade(self) -> Rollout:
        task = self._task
        if task is None:
            raise RuntimeError("get_reward() before reset(): no rollout to grade")
        executor = self._episode.executor
        patch = self._patch or ""
        try:
            if self._patch is None and executor is not None:
                patch = executor.diff()
        except (InfraError, WorldError) as exc:  # the sandbox died between calls
            self._error = f"diff: {type(exc).__name__}: {exc}"
        finally:
            self._episode.close()
        done = {"instance_id": task.instance_id, "submitted": self._patch is not None, "tool_calls": self._calls,
                "patch": patch}
        backend = self._factory.backend
        if self._error is not None:
            return Rollout(**done, backend=backend.name, reward=0.0, error=self._error)
        graded = grade(backend, task, patch, model="sweworld-trl", logs=self._factory.options.log_dir,
                       timeout=self._factory.options.eval_timeout)
        return Rollout(**done, backend=backend.name, reward=graded.reward, resolved=graded.resolved,
                       error=graded.error)


def tools() -> list[dict[str, Any]]:
    """The tool schemas TRL renders in the prompts of ``SWEWorldEnv``'s rollouts, in its order (the class's
    public methods by name, as ``GRPOTrainer`` lists them): what SFT rows must carry for a model warmed up
    on them to see the same prompts in GRPO."""
    import inspect

    from transformers.utils import get_json_schema
    return [get_json_schema(method) for name, method in inspect.getmembers(SWEWorldEnv, inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")]


def environment_factory(dataset: Any = "default", backend: Any = "real", **options: Any) -> EnvironmentFactory:
    """The zero-argument factory of ``SWEWorldEnv`` for ``GRPOTrainer(environment_factory=...)`` (see the
    module docstring); ``options`` are ``EnvOptions``' fields (a wrong one is a ``ConfigError``)."""
    from pydantic import ValidationError

    from sweworld.core.errors import ConfigError
    try:
        env_options = EnvOptions(backend=backend, **options)
    except ValidationError as exc:
        raise ConfigError("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()),
                          where="environment_factory", hint="options: " + ", ".join(EnvOptions.model_fields)) from None
    return EnvironmentFactory(dataset, env_options)


def dataset(tasks: Any = "default", *, split: str | None = None, instance_ids: list[str] | None = None,
            agent_config: str | Path | None = None):
    """The ``datasets.Dataset`` TRL trains on: ``prompt`` (the agent's system and first user messages of each
    task, from ``agent_config`` or the shipped default) and ``instance_id`` (what ``reset`` opens)."""
    from datasets import Dataset

    config = load_agent_config(agent_config)
    rows = _tasks_of(tasks, EnvOptions(split=split, instance_ids=instance_ids))
    return Dataset.from_list([{"prompt": prompts.messages(t, "agent", agent_config=config, workdir=WORKDIR),
                               "instance_id": t.instance_id}
                              for t in rows])


__all__ = ["EnvOptions", "EnvironmentFactory", "Rollout", "SWEWorldEnv", "dataset", "environment_factory", "tools"]
