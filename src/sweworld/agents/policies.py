"""Policies: a model behind an OpenAI-compatible endpoint, and those that need no model.

- ``oracle`` reaches the gold patch through the editor tool (one ``str_replace`` per hunk, ``create``
  for new files, ``rm`` for deleted ones), then submits: it shows the pipeline resolves what it should.
- ``oracle-tests``: the oracle, running the FAIL_TO_PASS tests before and after its edits (code
  execution an agent would do: what a simulated world must predict).
- ``noop`` submits at once: the empty-patch baseline.
- ``replay`` replays the actions of a stored trajectory.
- ``perturb`` (``agents/perturb.py``): the gold patch with probability p, else a plausible wrong or
  partial edit (another mutation of the fixed function, a mutation beside the bug, some hunks only,
  a hunk's change at a similar place), drawn per (seed, instance, sample): traces with both outcomes.
- ``explorer`` (``agents/explorer.py``): the commands agents run (layout, find, views, grep, the
  failing tests, a reproduction script, the test files, git diff); ``explorer-oracle`` and
  ``explorer-perturb`` then edit as the oracle or as perturb.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from typing import Any

from unidiff import PatchSet

from sweworld.agents.loop import new_call_id
from sweworld.core.errors import ModelError
from sweworld.core.protocols import Policy
from sweworld.core.registry import Registry
from sweworld.core.types import Task
from sweworld.models.base import ChatModel, ModelReply, ToolCall, Usage
from sweworld.trajectory import Trajectory


def reply(name: str, arguments: dict, thought: str = "") -> ModelReply:
    call = ToolCall(id=new_call_id(), name=name, arguments=arguments, raw_arguments="")
    return ModelReply(content=thought or None, tool_calls=[call], usage=Usage(), finish_reason="tool_calls", raw={})


class ScriptedPolicy:
    """Replies from a precomputed list of actions, then submits."""

    name = "scripted"
    model = ""

    def __init__(self) -> None:
        self._actions: Iterator[tuple[str, dict, str]] = iter(())

    def actions(self, task: Task) -> list[tuple[str, dict, str]]:
        return []

    def reset(self, task: Task) -> None:
        self._actions = iter(self.actions(task))

    def act(self, messages: list[dict], tools: list[dict] | None) -> ModelReply:
        name, arguments, thought = next(self._actions, ("submit", {}, "done"))
        return reply(name, arguments, thought)


class NoopPolicy(ScriptedPolicy):
    name = "noop"


class OraclePolicy(ScriptedPolicy):
    name = "oracle"

    def __init__(self, workdir: str = "/testbed"):
        super().__init__()
        self.workdir = workdir

    def actions(self, task: Task) -> list[tuple[str, dict, str]]:
        actions: list[tuple[str, dict, str]] = []
        for patched in PatchSet(task.patch or ""):
            path = f"{self.workdir}/{patched.path}"
            if patched.is_removed_file:
                actions.append(("execute_bash", {"command": f"rm -- '{path}'"}, f"remove {patched.path}"))
                continue
            if patched.is_added_file:
                text = "".join(line.value for hunk in patched for line in hunk if not line.is_removed)
                actions.append(("str_replace_editor", {"command": "create", "path": path, "file_text": text},
                                f"create {patched.path}"))
                continue
            actions.append(("str_replace_editor", {"command": "view", "path": path}, f"look at {patched.path}"))
            for hunk in patched:
                old = "".join(line.value for line in hunk if not line.is_added)
                new = "".join(line.value for line in hunk if not line.is_removed)
                actions.append(("str_replace_editor", {"command": "str_replace", "path": path, "old_str": old,
                                                       "new_str": new}, f"edit {patched.path}"))
        return actions


class TestingOraclePolicy(OraclePolicy):
    """The oracle, with a test run of the FAIL_TO_PASS tests before and after its edits."""

    name = "oracle-tests"

    def actions(self, task: Task) -> list[tuple[str, dict, str]]:
        tests = " ".join(shlex.quote(t) for t in task.FAIL_TO_PASS[:5])
        run = ("execute_bash", {"command": f"cd {self.workdir} && python -m pytest -q -p no:cacheprovider {tests} "
                                           "2>&1 | tail -15"}, "run the failing tests")
        return [run, *super().actions(task), run] if tests else super().actions(task)


class ReplayPolicy(ScriptedPolicy):
    name = "replay"

    def __init__(self, trajectories: dict[str, Trajectory]):
        super().__init__()
        self.trajectories = trajectories

    def actions(self, task: Task) -> list[tuple[str, dict, str]]:
        stored = self.trajectories.get(task.instance_id)
        if stored is None:
            raise ModelError(f"no stored trajectory to replay for {task.instance_id}",
                             hint="pass --replay FILE holding a trajectory of every instance")
        return [(s.tool, s.arguments, s.thought) for s in stored.steps if s.tool]


class ModelPolicy:
    """A chat model behind an OpenAI-compatible endpoint."""

    name = "openai"

    def __init__(self, model: ChatModel, model_name: str):
        self.client = model
        self.model = model_name

    def reset(self, task: Task) -> None:
        return None

    def act(self, messages: list[dict], tools: list[dict] | None) -> ModelReply:
        return self.client.complete(messages, tools)


def openai_policy(url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY", temperature: float = 0.0,
                  max_tokens: int | None = None, text_actions: bool = False, max_retries: int = 5) -> ModelPolicy:
    """``openai``: a ``ModelPolicy`` over its own client of the endpoint at ``url`` serving ``model``."""
    from sweworld.models.base import ModelConfig
    from sweworld.models.openai import OpenAIChatModel

    config = ModelConfig(url=url, model=model, api_key_env=api_key_env, temperature=temperature,
                         max_tokens=max_tokens, native_tools=not text_actions, max_retries=max_retries)
    return ModelPolicy(OpenAIChatModel(config), model)


POLICIES: Registry[Callable[..., Policy]] = Registry("policy", {
    "oracle": "sweworld.agents.policies:OraclePolicy",
    "oracle-tests": "sweworld.agents.policies:TestingOraclePolicy",
    "noop": "sweworld.agents.policies:NoopPolicy",
    "replay": "sweworld.agents.policies:ReplayPolicy",
    "openai": "sweworld.agents.policies:openai_policy",
    "perturb": "sweworld.agents.perturb:PerturbPolicy",
    "explorer": "sweworld.agents.explorer:ExplorerPolicy",
    "explorer-oracle": "sweworld.agents.explorer:ExplorerPolicy",
    "explorer-perturb": "sweworld.agents.explorer:ExplorerPolicy",
}, group="sweworld.policies")
"""The policies by name (entry points ``sweworld.policies`` add more); ``explorer-oracle`` and
``explorer-perturb`` are the explorer given ``fix``."""


def policy_factory(name: str, **options: Any) -> Callable[[], Policy]:
    """What makes one policy ``name`` per sample: its class or factory with ``options`` (an option
    it does not take is a ``ConfigError`` naming it)."""
    return POLICIES.checked(name, **options)
