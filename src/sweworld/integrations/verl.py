"""verl (0.9.1): an agent loop that keeps one sweworld episode per trajectory.

verl's ``ToolAgentLoop`` creates and releases a tool instance on every call, so a shell's state (its
working directory, its exports) would not survive from one call to the next. ``SWEWorldAgentLoop``
(``verl.experimental.agent_loop.AgentLoopBase``, registered as ``sweworld``) opens ONE episode of the
row's instance and runs every tool call of the trajectory in it:

1. the row names the instance: ``extra_info["instance_id"]`` (or an ``instance_id`` column), and
   optionally ``extra_info["dataset"]``/``["split"]``; the loop's config gives the dataset, the
   backend (``real`` by default; ``sim``/``hybrid`` run the embedded world unless ``backend_options``
   say otherwise, through ``integrations.episodes``), ``repos_dir``...;
2. turn by turn, verl's server manager generates from token ids (``ct_build_initial_tokens``,
   ``ct_merge_assistant_token``, ``ct_merge_context_msg``: verl's own Continuous Token path, as in
   ``ToolAgentLoop``), verl's tool parser (``rollout.multi_turn.format``, hermes by default; or
   ``sweworld_text`` for sweworld's ``<function=...>`` blocks) reads the tool calls, they run in the
   episode (sweworld's tools: execute_bash, str_replace_editor, search, submit) and their
   observations are appended as tool messages, with response_mask 0;
3. it stops on ``submit``, a reply without a tool call, the turn limit or the response length; the
   episode's diff is graded by ``seam.grade`` and ``AgentLoopOutput.reward_score`` is its reward
   (``sweworld.seam.reward``: 1.0/0.0 on real, SWR's P(resolved) on sim), which verl uses instead of
   its reward function. An empty diff is 0.0 (no model call on sim).

The episode is closed whatever happens. When the episode's infrastructure or a tool raises, the
trajectory ends there with reward 0.0 and the error in ``extra_fields["sweworld"]["error"]`` (the
batch goes on); a failure of the model server is verl's and propagates. ``extra_fields["sweworld"]``
also holds the instance, backend, stop reason, turns, patch and verdict.

verl is imported here only, never at ``import sweworld``. See docs/verl.md for the yaml a verl user
writes (``actor_rollout_ref.rollout.agent.agent_loop_config_path``) and the dataset's ``agent_name``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
from verl.experimental.agent_loop.tool_parser import FunctionCall, ToolParser
from verl.utils.profiler import simple_timer
from verl.utils.rollout_trace import rollout_trace_op

from sweworld.agents.actions import parse_text_action
from sweworld.core.config import timeouts
from sweworld.core.errors import DatasetError
from sweworld.core.executor import Executor
from sweworld.core.registry import load
from sweworld.core.types import Task
from sweworld.integrations.episodes import plain_config, resolve_backend, spec_of
from sweworld.seam import grade
from sweworld.seam import prompt as prompts
from sweworld.seam.tasks import index_of
from sweworld.tools import ToolSet, default_tools

logger = logging.getLogger(__name__)

AGENT_NAME = "sweworld"
"""The ``agent_name`` a dataset row gives to be run by ``SWEWorldAgentLoop``."""
TEXT_FORMAT = "sweworld_text"
"""The tool-parser name of sweworld's ``<function=NAME><parameter=...>`` text actions."""
DEFAULT_MAX_TURNS = 50


@ToolParser.register(TEXT_FORMAT)
class TextActionParser(ToolParser):
    """verl's ``ToolParser`` over ``agents.actions.parse_text_action`` (one ``<function=...>`` block)."""

    async def extract_tool_calls(self, responses_ids: list[int], tools: Any = None) -> tuple[str, list[FunctionCall]]:
        text = self.tokenizer.decode(responses_ids, skip_special_tokens=True)
        action = parse_text_action(text)
        if action is None:
            return text, []
        return action.thought, [FunctionCall(name=action.name, arguments=json.dumps(action.arguments))]


class EpisodeFailure(Exception):
    """An episode operation (open, a tool call, the diff, the evaluation) raised or had no outcome: the
    trajectory ends; the message is what is recorded (``ExceptionType: message``)."""


@dataclass
class _Trajectory:
    """What one run accumulates: the token stream (prompt + response) and the response's metadata."""

    token_ids: list[int]
    messages: list[dict[str, Any]]
    response_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    routed_experts: Any = None
    extra_fields: dict[str, Any] = field(default_factory=dict)
    turns: int = 0
    observed: int = 0
    tool_calls: int = 0
    format_errors: int = 0


@register(AGENT_NAME)
class SWEWorldAgentLoop(AgentLoopBase):
    """One sweworld episode per trajectory; see the module docstring. Options (the loop's yaml entry):

    - ``backend``: ``real`` (default), ``sim`` or ``hybrid`` (or a ``Backend`` from Python);
      ``backend_options``: the rest of ``sweworld.core.config.BackendConfig`` (``world``, ``audit_rate``...);
    - ``dataset``/``split``: where instance ids are looked up (a shipped name, a file, a hub name);
      ``repos_dir``: existing clones;
    - ``max_turns``: assistant turns (default ``multi_turn.max_assistant_turns``, else 50);
      ``tool_format``: a verl tool parser name (default ``multi_turn.format``) or ``sweworld_text``;
      ``max_tool_response_length``: characters of an observation kept (default the multi_turn one);
    - ``tool_set``: a ``ToolSet`` factory (callable or ``"module:attr"``; default sweworld's tools);
    - ``eval_timeout``: seconds of the evaluation; ``log_dir``: where evaluation logs are kept
      (default: a temporary directory, removed).
    """

    def __init__(self, *args: Any, tools: Any = None, backend: Any = "real", backend_options: Any = None,
                 dataset: str | None = None, split: str | None = None, repos_dir: str | None = None,
                 max_turns: int | None = None, tool_format: str | None = None,
                 max_tool_response_length: int | None = None, tool_set: Any = None,
                 eval_timeout: float = timeouts.EVALUATION, log_dir: str | None = None, **kwargs: Any):
        kwargs.pop("name", None)  # the yaml entry's own name, passed along by hydra
        super().__init__(*args, **kwargs)
        del tools  # verl's BaseTool list (ToolAgentLoop's); the episode has sweworld's own tools
        multi_turn = self.rollout_config.multi_turn
        self.spec_data: dict[str, Any] = {"backend_options": dict(plain_config(backend_options) or {})}
        for key, value in (("dataset", dataset), ("split", split), ("repos_dir", repos_dir)):
            if value is not None:
                self.spec_data[key] = value
        self.backend = resolve_backend(plain_config(backend), backend_options=self.spec_data["backend_options"],
                                       repos_dir=repos_dir, dataset=dataset, where="verl agent loop config")
        self.max_turns = int(max_turns or multi_turn.get("max_assistant_turns") or DEFAULT_MAX_TURNS)
        self.tool_format = tool_format or multi_turn.get("format") or "hermes"
        self.tool_parser = ToolParser.get_tool_parser(self.tool_format, self.tokenizer)
        self.max_parallel_calls = int(multi_turn.get("max_parallel_calls") or 1)
        self.max_tool_response_length = int(max_tool_response_length or multi_turn.get("max_tool_response_length")
                                            or 0)
        self.truncate_side = multi_turn.get("tool_response_truncate_side") or "middle"
        self.make_tools: Callable[[], ToolSet] = load(tool_set) if isinstance(tool_set, str) else (
            tool_set or default_tools)
        self.eval_timeout = float(eval_timeout)
        self.log_dir = log_dir
        self.response_length = int(self.rollout_config.response_length)

    # ------------------------------------------------------------------ the row

    def task_of_row(self, row: dict[str, Any]) -> Task:
        """The task a dataset row names (``extra_info.instance_id``, else an ``instance_id`` column)."""
        extra = dict(row.get("extra_info") or {})
        data = {k: v for k, v in self.spec_data.items() if k != "backend_options"}
        data.update({k: extra[k] for k in ("dataset", "split") if extra.get(k)})
        data["instance_id"] = str(extra.get("instance_id") or row.get("instance_id") or "")
        spec = spec_of(data, where="verl dataset row (extra_info)")
        if not spec.instance_id:
            raise DatasetError("the row names no instance", where="verl dataset row",
                               hint="put the task's id in extra_info.instance_id (sweworld.integrations.verl.rows)")
        return index_of(spec.dataset, spec.split).find(spec.instance_id)  # read once per process

    def messages_of_row(self, row: dict[str, Any], task: Task, schemas: list[dict]) -> list[dict[str, Any]]:
        """The row's prompt (``raw_prompt``), else the problem statement; with sweworld's text format, the
        tools' instructions as the system turn when the prompt has none."""
        raw = row.get("raw_prompt")  # a list, or a numpy array of dicts from verl's batch
        messages = [dict(m) for m in (list(raw) if raw is not None else [])]
        messages = messages or prompts.messages(task, "statement")
        return prompts.with_tools(messages, schemas) if self.tool_format == TEXT_FORMAT else messages

    # ------------------------------------------------------------------ the loop

    @rollout_trace_op
    async def run(self, sampling_params: dict[str, Any], priority: int = 0, **kwargs: Any) -> AgentLoopOutput:
        task = await asyncio.get_running_loop().run_in_executor(None, self.task_of_row, kwargs)  # may read a dataset
        toolset = self.make_tools()
        schemas = toolset.schemas()
        template_tools = None if self.tool_format == TEXT_FORMAT else schemas
        messages = self.messages_of_row(kwargs, task, schemas)
        prompt_ids = await self.ct_build_initial_tokens(messages, tools=template_tools)
        state = _Trajectory(token_ids=list(prompt_ids), messages=messages)
        metrics: dict[str, Any] = {}
        info: dict[str, Any] = {"instance_id": task.instance_id, "backend": self.backend.name, "stop_reason": None,
                                "patch": "", "resolved": None, "error": None}
        request_id = f"det-{priority}" if self.rollout_config.get("full_determinism") else uuid4().hex
        reward = 0.0
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sweworld-verl")  # one thread: one shell
        call = _Caller(pool)
        episode: Executor | None = None
        try:
            try:
                episode = await call(self.backend.open, task)
                toolset.reset()
                info["stop_reason"] = await self._turns(state, call, episode, toolset, template_tools,
                                                        sampling_params, request_id, metrics)
                info["patch"] = await call(episode.diff)
                closing, episode = episode, None
                await call(closing.close)
                with simple_timer("compute_score", metrics):
                    reward, info["resolved"] = await self._grade(call, task, info["patch"])
            except EpisodeFailure as failure:
                info["error"], info["stop_reason"] = str(failure), info["stop_reason"] or "error"
                logger.warning("sweworld episode of %s failed: %s", task.instance_id, info["error"])
                reward = 0.0
        finally:
            if episode is not None:
                try:
                    await call(episode.close)
                except EpisodeFailure as failure:
                    info["close_error"] = str(failure)
                    logger.warning("closing the sweworld episode of %s failed: %s", task.instance_id, failure)
            pool.shutdown(wait=False)
        info.update(turns=state.turns, tool_calls=state.tool_calls, format_errors=state.format_errors)
        return self._output(state, reward, info, metrics)

    async def _turns(self, state: _Trajectory, call: _Caller, episode: Executor, toolset: ToolSet,
                     template_tools: Any, sampling_params: dict[str, Any], request_id: str,
                     metrics: dict[str, Any]) -> str:
        """Generate, run the tool calls in ``episode``, append their observations; the stop reason."""
        if self.tool_parser.stop_token_ids:
            stops = sorted(set((sampling_params.get("stop_token_ids") or []) + self.tool_parser.stop_token_ids))
            sampling_params = {**sampling_params, "stop_token_ids": stops}
        while True:
            with simple_timer("generate_sequences", metrics):
                output = await self.server_manager.generate(request_id=request_id, prompt_ids=state.token_ids,
                                                            sampling_params=sampling_params)
            self._merge_extra(state, output)
            if output.num_preempted is not None:  # -1 (unknown) unless the server counts them
                metrics["num_preempted"] = max(metrics.get("num_preempted", 0), 0) + output.num_preempted
            merged, state.response_mask, logprobs = await self.ct_merge_assistant_token(
                state.token_ids, output.token_ids, state.response_mask,
                state.logprobs if (state.logprobs or output.log_probs) else None,
                assistant_logprobs=output.log_probs or None)
            state.token_ids, state.logprobs = merged.token_ids, logprobs or []
            if output.routed_experts is not None:
                state.routed_experts = output.routed_experts
            state.turns += 1
            if len(state.response_mask) >= self.response_length:
                return "length"
            content, calls = await self.tool_parser.extract_tool_calls(output.token_ids, None)
            calls = calls[: self.max_parallel_calls]
            state.messages.append(self._assistant_message(content, calls))
            if not calls:
                return "no_tool_call"
            replies: list[dict[str, Any]] = []
            with simple_timer("tool_calls", metrics):
                for index, tool_call in enumerate(calls):  # in order, in the one shell
                    result = await call(toolset.call, episode, tool_call.name, tool_call.arguments)
                    state.tool_calls += 1
                    state.format_errors += int(result.error)
                    if result.submitted:
                        return "submit"
                    replies.append({"role": "tool", "name": tool_call.name, "content": self._cut(result.observation),
                                    "tool_call_id": tool_call.tool_call_id or f"call_{index}"})
            if state.turns >= self.max_turns:
                return "max_turns"
            before = list(state.messages)
            merged, mask, logprobs = await self.ct_merge_context_msg(
                before, before + replies, state.token_ids, state.response_mask, state.logprobs or None,
                tools=template_tools)
            if len(mask) >= self.response_length:
                return "length"
            state.messages.extend(replies)
            state.token_ids, state.response_mask, state.logprobs = merged.token_ids, mask, logprobs or []
            state.observed += 1

    async def _grade(self, call: _Caller, task: Task, patch: str) -> tuple[float, bool | None]:
        """(reward, resolved) of ``patch``: ``seam.grade``'s; no outcome (an infrastructure failure of
        the evaluation) is an ``EpisodeFailure``."""
        graded = await call(lambda: grade(self.backend, task, patch, model="sweworld-verl", logs=self.log_dir or None,
                                          timeout=self.eval_timeout))
        if graded.failed:
            raise EpisodeFailure(f"the evaluation had no outcome: {graded.error}")
        return graded.reward, graded.resolved

    # ------------------------------------------------------------------ pieces

    def _cut(self, text: str) -> str:
        """An observation cut to ``max_tool_response_length`` characters, as ``ToolAgentLoop`` cuts."""
        limit = self.max_tool_response_length
        if not limit or len(text) <= limit:
            return text
        if self.truncate_side == "left":
            return "(truncated)..." + text[-limit:]
        if self.truncate_side == "right":
            return text[:limit] + "...(truncated)"
        half = limit // 2
        return text[:half] + "...(truncated)..." + text[-half:]

    @staticmethod
    def _assistant_message(content: str, calls: list[FunctionCall]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content or ""}
        if calls:
            message["tool_calls"] = [{"type": "function", "id": c.tool_call_id or f"call_{i}",
                                      "function": {"name": c.name, "arguments": _arguments(c.arguments)}}
                                     for i, c in enumerate(calls)]
        return message

    @staticmethod
    def _merge_extra(state: _Trajectory, output: Any) -> None:
        """The server's extra fields (``min/max_global_steps`` of fully async training), as ToolAgentLoop keeps them."""
        extra = dict(getattr(output, "extra_fields", None) or {})
        if not state.extra_fields:
            state.extra_fields.update(extra)
        elif extra.get("max_global_steps"):
            state.extra_fields["max_global_steps"] = extra["max_global_steps"]

    def _output(self, state: _Trajectory, reward: float, info: dict[str, Any], metrics: dict[str, Any]) -> AgentLoopOutput:
        n = len(state.response_mask)
        response_ids = state.token_ids[len(state.token_ids) - n:] if n else []
        prompt_ids = state.token_ids[: len(state.token_ids) - n]
        metrics.setdefault("num_preempted", -1)
        extra = {**state.extra_fields, "turn_scores": [], "tool_rewards": [], "sweworld": info}
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[: self.response_length],
            response_mask=state.response_mask[: self.response_length],
            response_logprobs=state.logprobs[: self.response_length] if state.logprobs else None,
            routed_experts=(state.routed_experts[: len(prompt_ids) + self.response_length]
                            if state.routed_experts is not None else None),
            multi_modal_data={},
            reward_score=float(reward),
            num_turns=1 + state.turns + state.observed,
            metrics=metrics,
            extra_fields=extra,
        )


class _Caller:
    """Runs episode operations on the episode's one thread; what they raise becomes ``EpisodeFailure``."""

    def __init__(self, pool: ThreadPoolExecutor):
        self.pool = pool

    async def __call__(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)
        except Exception as exc:  # the episode's infrastructure or a tool: this trajectory ends, the batch goes on
            raise EpisodeFailure(f"{type(exc).__name__}: {exc}") from exc


def _arguments(arguments: str) -> Any:
    """Tool-call arguments as the chat template renders them (a dict when they are a JSON object)."""
    try:
        value = json.loads(arguments)
    except (TypeError, ValueError):
        return arguments
    return value if isinstance(value, dict) else arguments


def rows(tasks: list[Task], *, dataset: str, agent_name: str = AGENT_NAME, data_source: str = "sweworld",
         prompt: Callable[[Task], list[dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """verl dataset rows (``RLHFDataset``'s columns) of ``tasks``: the prompt (the problem statement by
    default), ``agent_name`` and ``extra_info`` naming the instance and its dataset."""
    return [{"data_source": data_source, "agent_name": agent_name,
             "prompt": prompt(task) if prompt else prompts.messages(task, "statement"),
             "reward_model": {"style": "sweworld", "ground_truth": task.instance_id},
             "extra_info": {"index": i, "instance_id": task.instance_id, "dataset": dataset}}
            for i, task in enumerate(tasks)]


__all__ = ["AGENT_NAME", "TEXT_FORMAT", "EpisodeFailure", "SWEWorldAgentLoop", "TextActionParser", "rows"]
