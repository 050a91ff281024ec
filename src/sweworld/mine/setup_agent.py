"""A set-up agent for a release line whose inferred recipe fails (RepoLaunch's and SWE-Factory's idea).

Optional and off by default (``sweworld mine --setup-model-url URL``). For a release line
whose environment does not build, or whose test command finds no tests:

1. a model behind an OpenAI-compatible endpoint explores the repository in an episode of its base
   tree (a real isolated sandbox, no environment, no network) with ``execute_bash``, and calls
   ``propose_recipe`` with a SWE-rebench ``install_config`` (``mine.setupcheck`` refuses a malformed
   proposal or a harmful command, and the model is told why and may propose again);
2. the proposal is built and tried like any recipe: the environment and the install layer built on
   the real backend, then one run of the candidate's tests, whose log must give test results to the
   row's log parser;
3. a failure goes back to the model with the build log's or the run's last lines, for up to
   ``attempts`` proposals. The recipe that works is written on every row of the release line as its
   ``install_config`` (``recipe_source: "agent"``, the agent's turns in ``recipe_notes``).

Nothing the agent runs leaves its sandbox; every proposal is recorded in the notes whether it worked
or not.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2

from sweworld.core.errors import SWEWorldError
from sweworld.core.executor import Executor
from sweworld.core.types import Task
from sweworld.mine.setupcheck import Refused, checked
from sweworld.models.base import ChatModel
from sweworld.tools.bash import format_exec

log = logging.getLogger(__name__)

TOOLS = [
    {"type": "function", "function": {
        "name": "execute_bash", "description": "Run a bash command in the repository's checkout (no network).",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}},
    {"type": "function", "function": {
        "name": "propose_recipe", "description": "Propose the install_config that builds and tests the project.",
        "parameters": {"type": "object", "properties": {
            "python": {"type": "string"}, "pip_packages": {"type": "array", "items": {"type": "string"}},
            "pre_install": {"type": "array", "items": {"type": "string"}}, "install": {"type": "string"},
            "test_cmd": {"type": "string"}, "log_parser": {"type": "string"},
            "env_vars": {"type": "object"}}, "required": ["test_cmd"]}}},
]
MAX_TURNS = 20
COMMAND_TIMEOUT = 60.0


class SetupAgentError(SWEWorldError):
    """The set-up agent gave no recipe that works (the message says what it tried and what failed)."""


@dataclass
class Outcome:
    """What the agent settled on (``config`` None when nothing worked) and everything it tried."""

    config: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)
    turns: int = 0


def prompt(task: Task, workdir: str, failure: str | None, notes: list[str]) -> str:
    text = resources.files("sweworld.mine").joinpath("templates/setup_agent.md.jinja").read_text(encoding="utf-8")
    return jinja2.Template(text, trim_blocks=True).render(repo=task.repo, workdir=workdir, commit=task.base_commit,
                                                          failure=failure, notes=notes).strip()


def _bash(episode: Executor, arguments: dict[str, Any]) -> str:
    command = arguments.get("command")
    if not isinstance(command, str) or not command.strip():
        return "error: execute_bash needs a `command` string"
    result = episode.run(command, timeout=COMMAND_TIMEOUT)
    return format_exec(result.output, result.exit_code, timed_out=result.timed_out, timeout=COMMAND_TIMEOUT)


def propose(model: ChatModel, episode: Executor, task: Task, *, failure: str | None = None,
            notes: list[str] | None = None, max_turns: int = MAX_TURNS) -> tuple[dict[str, Any], int]:
    """One proposal: (its checked ``install_config``, turns used). ``SetupAgentError`` when the model
    proposes nothing acceptable within ``max_turns``."""
    workdir = getattr(episode, "workdir", "/testbed")
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt(task, workdir, failure, notes or [])}]
    refusals: list[str] = []
    for turn in range(1, max_turns + 1):
        reply = model.complete(messages, tools=TOOLS)
        if not reply.tool_calls:
            messages += [{"role": "assistant", "content": reply.content or ""},
                         {"role": "user", "content": "Call execute_bash to explore, or propose_recipe."}]
            continue
        call = reply.tool_calls[0]
        messages.append({"role": "assistant", "content": reply.content, "tool_calls": [call.to_message()]})
        if call.name == "propose_recipe":
            try:
                return checked(call.arguments), turn
            except Refused as exc:
                refusals.append(str(exc))
                answer = f"refused: {exc}"
        elif call.name == "execute_bash":
            answer = _bash(episode, call.arguments)
        else:
            answer = f"error: no tool {call.name!r}; use execute_bash or propose_recipe"
        messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})
    said = f"; refused: {' | '.join(refusals)}" if refusals else ""
    raise SetupAgentError(f"the set-up agent proposed no acceptable recipe for {task.instance_id} in "
                          f"{max_turns} turns{said}", hint="raise the turn limit, or write the recipe on the rows")


def set_up(model: ChatModel, task: Task, *, open_episode, attempt, attempts: int = 3,
           notes: list[str] | None = None) -> Outcome:
    """Proposals for ``task``'s release line until one works: ``open_episode()`` opens an episode of
    its base tree to explore, ``attempt(config)`` builds and tries a proposal and returns None when it
    works, else what failed (one text for the model)."""
    outcome, failure = Outcome(config=None), None
    for number in range(1, attempts + 1):
        try:
            with open_episode() as episode:
                config, turns = propose(model, episode, task, failure=failure, notes=notes)
        except SetupAgentError as exc:
            outcome.notes.append(f"set-up agent, proposal {number}: {exc}")
            return outcome
        outcome.turns += turns
        outcome.notes.append(f"set-up agent, proposal {number} ({turns} turns): {json.dumps(config, sort_keys=True)}")
        failure = attempt(config)
        if failure is None:
            outcome.config = config
            outcome.notes.append(f"set-up agent: proposal {number} builds and its tests report results")
            return outcome
        outcome.notes.append(f"set-up agent, proposal {number} failed: {failure.splitlines()[0][:300]}")
        log.info("set-up agent for %s: proposal %d failed: %s", task.instance_id, number, failure.splitlines()[0])
    return outcome
