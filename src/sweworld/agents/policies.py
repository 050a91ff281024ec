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
from collections.abc import Iterator

from unidiff import PatchSet

from sweworld.agents.loop import new_call_id
from sweworld.errors import ModelError
from sweworld.models.base import ChatModel, ModelReply, ToolCall, Usage
from sweworld.trajectory import Trajectory
from sweworld.types import Task


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
