"""The agent's configuration: prompt templates (jinja2) and limits, shipped as YAML."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError

from sweworld.core.errors import ConfigError


class AgentConfig(BaseModel):
    """Prompts and limits of one agent."""

    system_template: str = Field(description="jinja2: the system message (vars: workdir, text_actions, tools_prompt).")
    instance_template: str = Field(description="jinja2: the first user message (vars: the task's fields, workdir).")
    step_limit: int = Field(default=50, description="Actions before the episode is truncated (exit 'step_limit').")
    time_limit: float = Field(default=3600.0, description="Wall seconds before the episode ends ('time_limit').")
    max_format_errors: int = Field(default=3, description="Consecutive replies without a valid action allowed.")
    context_budget: int = Field(default=100_000, description="Estimated prompt tokens (chars/4); old observations "
                                "are elided first, then the episode ends ('context_limit').")
    observation_chars: int = Field(default=10_000, description="Longest observation shown (head and tail kept).")
    text_actions: bool = Field(default=False, description="Actions as XML text (<function=...>) instead of "
                               "native function calling.")

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.model_dump(), sort_keys=True).encode()).hexdigest()[:16]


_HINT = ("fix the file; start from the shipped sweworld/agents/config/default.yaml (a mapping of "
         + ", ".join(AgentConfig.model_fields) + ")")


def load_agent_config(path: str | Path | None = None, **overrides) -> AgentConfig:
    """The shipped default, or a YAML file; keyword overrides win.

    Raises:
        ConfigError: the file cannot be read, is not YAML (located file:line), is not a mapping, or
            holds invalid fields (each one named).
    """
    where = str(path) if path else "sweworld/agents/config/default.yaml"
    try:
        text = Path(path).read_text(encoding="utf-8") if path else resources.files("sweworld.agents").joinpath(
            "config/default.yaml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the agent config: {exc}", where=where, hint=_HINT) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"invalid YAML: {problem}", where=where + (f":{mark.line + 1}" if mark else ""),
                          hint=_HINT) from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"expected a mapping of settings, got {type(data).__name__}", where=where, hint=_HINT)
    data = {**(data or {}), **{k: v for k, v in overrides.items() if v is not None}}
    try:
        return AgentConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"field '{'.'.join(map(str, e['loc']))}': {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid agent config: {problems}", where=where, hint=_HINT) from None
