"""The agent loop: a policy chooses tool calls, an ``Executor`` answers them, a ``Trajectory`` records.

Written against ``Executor`` only, so real sandboxes and simulated worlds are interchangeable.
Ends with one exit status: submitted, step_limit, time_limit, context_limit, format_errors, stuck
(SWE-Gym: the last three actions identical) or error.

Branching (``docs/branching_rollouts.md``): ``AgentRun.run(until=n)`` pauses after step ``n`` (no exit
status, no diff: ``paused``) and a later ``run()`` goes on; ``AgentRun(..., prefix=traj)`` starts from
another run's messages and steps (in a fork of its episode), its policy already brought there by the
caller (``agents.search.resume_policy``).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import NamedTuple

import jinja2

from sweworld.agents.actions import parse_text_action, render_text_action, tools_prompt
from sweworld.agents.config import AgentConfig
from sweworld.core.errors import InfraError, ModelError, WorldError
from sweworld.core.executor import Executor
from sweworld.core.protocols import Policy
from sweworld.core.types import Task
from sweworld.models.base import ModelReply
from sweworld.tools import ToolSet, default_tools
from sweworld.tools.truncate import truncate_observation
from sweworld.trajectory import Step, Trajectory

ELIDED = "[observation elided to fit the context budget]"
STUCK_WINDOW = 3


def _render(template: str, **values) -> str:
    return jinja2.Template(template, undefined=jinja2.ChainableUndefined).render(**values).strip()


def first_messages(task: Task, config: AgentConfig, workdir: str, tools: ToolSet | None = None) -> list[dict]:
    """The system and first user messages of an episode of ``task`` (``config``'s templates; the tools'
    instructions in the system message when ``config.text_actions``)."""
    schemas = (tools or default_tools()).schemas() if config.text_actions else []
    values = {**task.model_dump(), "workdir": workdir, "text_actions": config.text_actions,
              "tools_prompt": tools_prompt(schemas) if config.text_actions else ""}
    return [{"role": "system", "content": _render(config.system_template, **values)},
            {"role": "user", "content": _render(config.instance_template, **values)}]


def _tokens(messages: list[dict]) -> int:
    return sum(len(json.dumps(m)) for m in messages) // 4


def _fit(messages: list[dict], budget: int) -> bool:
    """Elide the oldest observations until the estimate fits; False when it cannot."""
    for message in messages[2:]:
        if _tokens(messages) <= budget:
            return True
        if message["role"] in ("tool", "user") and message.get("content") != ELIDED:
            message["content"] = ELIDED
    return _tokens(messages) <= budget


class Action(NamedTuple):
    """The action a model reply asks for."""

    tool: str
    arguments: dict
    thought: str
    call_id: str | None = None
    problem: str = ""
    """Why the reply is not a valid action ("" when it is)."""


def _action(reply: ModelReply, text_actions: bool) -> Action:
    """The reply's first tool call (or its text action, with ``text_actions``)."""
    if reply.tool_calls and not text_actions:
        call = reply.tool_calls[0]
        if getattr(call, "malformed", False):
            return Action(call.name, {}, reply.content or "", call.id,
                          f"the arguments of {call.name} are not valid JSON")
        return Action(call.name, dict(call.arguments), reply.content or "", call.id)
    parsed = parse_text_action(reply.content or "")
    if parsed is None:
        return Action("", {}, reply.content or "", problem="no action found")
    return Action(parsed.name, dict(parsed.arguments), parsed.thought)


class AgentRun:
    """One run of ``policy`` on ``task`` through ``executor``."""

    def __init__(self, task: Task, executor: Executor, policy: Policy, config: AgentConfig,
                 tools: ToolSet | None = None, sample: int = 0, *, prefix: Trajectory | None = None):
        """``prefix``: go on from that run's messages, steps, usage and time (``tools``: a copy of its
        tools, their undo history included); the policy is not reset."""
        self.task, self.executor, self.policy, self.config = task, executor, policy, config
        self.tools = tools or default_tools()
        self.traj = Trajectory(instance_id=task.instance_id, sample=sample, policy=policy.name, model=policy.model,
                               config_hash=config.digest())
        self.prefix, self.paused, self._started = prefix, False, False
        self._elapsed = self._model_s = self._tools_s = 0.0
        self._errors = 0

    def _start(self) -> None:
        self._started = True
        if self.prefix is not None:
            prefix = self.prefix.model_copy(deep=True)
            self.traj.messages, self.traj.steps, self.traj.usage = prefix.messages, prefix.steps, prefix.usage
            self._elapsed = prefix.timings.get("total", 0.0)
            self._model_s, self._tools_s = prefix.timings.get("model", 0.0), prefix.timings.get("tools", 0.0)
            for step in reversed(self.traj.steps):  # the format errors in a row it ended with
                if not step.format_error:
                    break
                self._errors += 1
            return
        self.tools.reset()
        self.policy.reset(self.task)
        self.traj.messages = first_messages(self.task, self.config, self.executor.workdir, self.tools)

    def run(self, until: int | None = None) -> Trajectory:
        """Run the episode to its end, or (``until``) pause once it has that many steps and no exit
        status yet (``paused``; the trajectory's timings so far, no diff); a later call goes on."""
        began = time.monotonic()
        self.paused = False
        started = began - self._elapsed
        try:
            if not self._started:
                self._start()
                started = began - self._elapsed  # a prefix's time counts
            status = self._loop(started, until)
            if status is None:
                self.paused = True
                return self._timed(started)
            self.traj.exit_status = status
        except (ModelError, InfraError, WorldError) as exc:
            self.traj.fail(exc)
        try:
            self.traj.patch = self.executor.diff()
        except (InfraError, WorldError) as exc:
            self.traj.fail(exc, "diff failed: ")
        return self._timed(started)

    def _timed(self, started: float) -> Trajectory:
        self._elapsed = time.monotonic() - started
        self.traj.timings = {"total": round(self._elapsed, 3), "model": round(self._model_s, 3),
                             "tools": round(self._tools_s, 3)}
        return self.traj

    def _loop(self, started: float, until: int | None = None) -> str | None:
        """The exit status, or None when paused at ``until`` steps."""
        config, traj = self.config, self.traj
        schemas = None if config.text_actions else self.tools.schemas()
        for index in range(len(traj.steps), config.step_limit):
            if until is not None and index >= until:
                return None
            if time.monotonic() - started > config.time_limit:
                return "time_limit"
            if not _fit(traj.messages, config.context_budget):
                return "context_limit"
            began = time.monotonic()
            reply = self.policy.act(traj.messages, schemas)
            self._model_s += time.monotonic() - began
            traj.usage["prompt_tokens"] += reply.usage.prompt_tokens
            traj.usage["completion_tokens"] += reply.usage.completion_tokens
            action = _action(reply, config.text_actions)
            tool, args, call_id, problem = action.tool, action.arguments, action.call_id, action.problem
            step = Step(index=index, tool=tool, arguments=args, thought=action.thought,
                        prompt_tokens=reply.usage.prompt_tokens, completion_tokens=reply.usage.completion_tokens)
            if problem:
                step.format_error = True
                step.observation = (f"Format error: {problem}. Reply with exactly one tool call"
                                    + (" in the <function=NAME><parameter=P>...</parameter></function> form."
                                       if config.text_actions else "."))
            else:
                began = time.monotonic()
                result = self.tools.call(self.executor, tool, args)
                self._tools_s += time.monotonic() - began
                step.duration = round(time.monotonic() - began, 4)
                step.exit_code, step.format_error = result.exit_code, result.error
                step.backend = "sim" if result.simulated else "real"
                step.observation = truncate_observation(result.observation, config.observation_chars)
            traj.steps.append(step)
            self._record(reply, step, call_id)
            self._errors = self._errors + 1 if step.format_error else 0
            if self._errors > config.max_format_errors:
                return "format_errors"
            if not step.format_error and result.submitted:
                return "submitted"
            actions = traj.actions()
            if len(actions) >= STUCK_WINDOW and len(set(actions[-STUCK_WINDOW:])) == 1 and tool:
                return "stuck"
        return "step_limit"

    def _record(self, reply: ModelReply, step: Step, call_id: str | None) -> None:
        messages = self.traj.messages
        if call_id is not None and not self.config.text_actions:
            messages.append({"role": "assistant", "content": reply.content or None, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": step.tool, "arguments": json.dumps(step.arguments)}}]})
            messages.append({"role": "tool", "tool_call_id": call_id, "content": step.observation})
            return
        content = reply.content or (render_text_action(step.tool, step.arguments) if step.tool else "")
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": step.observation})


def run_episode(task: Task, executor: Executor, policy: Policy, config: AgentConfig, *,
                tools: ToolSet | None = None, sample: int = 0) -> Trajectory:
    return AgentRun(task, executor, policy, config, tools, sample).run()


def new_call_id() -> str:
    return "call_" + uuid.uuid4().hex[:24]
