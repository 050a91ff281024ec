"""The one prompt builder of the seams, with named styles.

- ``statement``: the problem statement as the one user turn (gymnasium's and OpenEnv's observation at
  reset; verl's rows by default);
- ``tools``: a system turn explaining the tools and sweworld's ``<function=...>`` text format, then
  the statement (SkyRL; verl with ``tool_format: sweworld_text``);
- ``agent``: the agent's own templates (``agents.config``: system and first user message), as the
  agent loop and TRL's rows render them.

A framework that brings its own prompt (a dataset row's ``prompt``) keeps it; the ``tools`` style adds
the system turn only when that prompt has none (``with_tools``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sweworld.agents.actions import tools_prompt
from sweworld.agents.config import AgentConfig, load_agent_config
from sweworld.agents.loop import first_messages

if TYPE_CHECKING:
    from sweworld.core.types import Task

Style = Literal["statement", "tools", "agent"]
STYLES: tuple[str, ...] = ("statement", "tools", "agent")
WORKDIR = "/testbed"


def with_tools(messages: list[dict[str, Any]], schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with the tools' instructions as the first, system turn (unless they have one)."""
    if messages and messages[0].get("role") == "system":
        return messages
    return [{"role": "system", "content": tools_prompt(schemas)}, *messages]


def messages(task: Task, style: Style = "statement", *, schemas: list[dict[str, Any]] | None = None,
             agent_config: AgentConfig | str | Path | None = None, workdir: str = WORKDIR) -> list[dict[str, Any]]:
    """The first turns of an episode of ``task`` in ``style`` (``schemas``: the tools, for ``tools``;
    ``agent_config``: the agent's config or its file, for ``agent``, default the shipped one)."""
    if style == "statement":
        return [{"role": "user", "content": task.problem_statement}]
    if style == "tools":
        return with_tools(messages(task, "statement"), list(schemas or []))
    if style == "agent":
        config = agent_config if isinstance(agent_config, AgentConfig) else load_agent_config(agent_config)
        return first_messages(task, config, workdir)
    raise ValueError(f"unknown prompt style {style!r}: one of {', '.join(STYLES)}")


def statement(task: Task) -> str:
    """The ``statement`` style's one turn, as text (an observation at reset)."""
    return messages(task, "statement")[-1]["content"]
