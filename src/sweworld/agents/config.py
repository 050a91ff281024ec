"""The agent's configuration: prompt templates (jinja2) and limits, shipped as YAML."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, Field


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


def load_agent_config(path: str | Path | None = None, **overrides) -> AgentConfig:
    """The shipped default, or a YAML file; keyword overrides win."""
    text = Path(path).read_text() if path else resources.files("sweworld.agents").joinpath(
        "config/default.yaml").read_text()
    data = yaml.safe_load(text) or {}
    data.update({k: v for k, v in overrides.items() if v is not None})
    return AgentConfig.model_validate(data)
