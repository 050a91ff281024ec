"""The action, observation and state of sweworld's OpenEnv environment (``integrations.openenv``).

Subclasses of OpenEnv's own pydantic models (``openenv.core.env_server.types``): their JSON schemas
are what the server's ``GET /schema`` answers, and what a client sends and receives.

OpenEnv's wire format (``serialize_observation``) sends every field of the observation except
``reward``, ``done`` and ``metadata`` inside ``observation``, with ``reward`` and ``done`` beside it;
``metadata`` never leaves the server. What a trainer needs (the patch, the grading report, the error)
is therefore a field of its own; ``metadata`` repeats it for in-process users.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError


class SWEAction(Action):
    """One tool call: ``{"tool": NAME, "arguments": {...}}``; or a branch operation of the trainer
    (never the agent's): ``{"branch": "snapshot"}``, ``{"branch": "restore", "snapshot_id": ID}``,
    ``{"branch": "release", "snapshot_id": ID}`` (docs/branching_frameworks.md).

    Also accepted: ``{"name": NAME, "arguments": ...}`` and an OpenAI tool call
    (``{"id": ..., "type": "function", "function": {"name": NAME, "arguments": "<json>"}}``). A tool
    that does not exist or arguments that do not fit are no validation error: the step's observation
    says what is wrong (``error``), as the agent's tools do."""

    tool: str = Field(default="", description="The tool to call: execute_bash, str_replace_editor, search or "
                      "submit (the names of the reset observation's `tools`).")
    arguments: dict[str, Any] | str = Field(default_factory=dict, description=(
        "The tool's arguments: an object, or its JSON text (as function-calling models send it)."))
    branch: Literal["snapshot", "restore", "release"] | None = Field(default=None, description=(
        "Instead of a tool call, no step of the episode: `snapshot` the episode (the observation's "
        "`snapshot_id`; reset(from_snapshot=ID) in any session of this server forks it), `restore` it to "
        "one of its own snapshots, or `release` one."))
    snapshot_id: str | None = Field(default=None, description="The snapshot a restore or release names.")

    @model_validator(mode="before")
    @classmethod
    def _shapes(cls, data: Any) -> Any:
        if isinstance(data, str):  # a JSON text of the action
            try:
                data = json.loads(data)
            except ValueError:
                return data
        if not isinstance(data, dict):
            return data
        data = dict(data)
        function = data.get("function")
        if isinstance(function, dict) and "tool" not in data:  # an OpenAI tool call
            metadata = data.get("metadata", {})
            data = {"tool": function.get("name"), "arguments": function.get("arguments") or {}}
            if metadata:
                data["metadata"] = metadata
        elif "name" in data and "tool" not in data:
            data["tool"] = data.pop("name")
        if data.get("arguments") is None:
            data["arguments"] = {}
        return data

    @model_validator(mode="after")
    def _one_kind(self) -> SWEAction:
        # PydanticCustomError, not ValueError: OpenEnv sends the errors back as JSON, and a ValueError
        # in them cannot be serialized (the session would end instead)
        if bool(self.tool) == (self.branch is not None):
            raise PydanticCustomError("action_kind", "an action is either a tool call (`tool`) or a branch "
                                      "operation (`branch`)")
        if self.branch in ("restore", "release") and not self.snapshot_id:
            raise PydanticCustomError("snapshot_id_missing", "a {branch} names the snapshot (`snapshot_id`)",
                                      {"branch": self.branch})
        return self


class SWEObservation(Observation):
    """What the agent sees after ``reset`` or a step (plus OpenEnv's ``done`` and ``reward``).

    ``reward`` is None at reset and 0.0 on every step that does not end the episode; on ``submit`` it is
    the backend's verdict on the patch (``sweworld.seam.reward``: 1.0/0.0 from the harness on
    ``real``, SWR's P(resolved) on ``sim``, routed on ``hybrid``)."""

    output: str = Field(default="", description="At reset the problem statement; after a step the tool's "
                        "output as the agent reads it.")
    instance_id: str = Field(default="", description="The task of the episode.")
    tools: list[dict[str, Any]] = Field(default_factory=list, description=(
        "At reset: the tools' OpenAI function schemas (for the model's chat template); empty after."))
    workdir: str = Field(default="", description="The repository's directory inside the episode (/testbed).")
    step: int = Field(default=0, description="Steps taken in the episode (0 at reset).")
    exit_code: int | None = Field(default=None, description="Exit status of an execute_bash command.")
    error: str | None = Field(default=None, description=(
        "What went wrong, or None: a malformed or unknown tool call (the episode goes on), or an "
        "infrastructure failure (the episode ends, reward 0.0), or a step with no open episode."))
    truncated: bool = Field(default=False, description="The episode hit the server's step limit (done, "
                            "reward 0.0, the patch so far in `patch`).")
    patch: str | None = Field(default=None, description="When the episode ends: the workspace's diff "
                              "against the base commit.")
    report: dict[str, Any] | None = Field(default=None, description=(
        "On submit: the grading report (sweworld.harness.report.InstanceReport as a dict: resolved, "
        "tests_status, sim_probability on sim...)."))
    backend: str = Field(default="", description="What ran the episode: real, sim or hybrid.")
    snapshot_id: str | None = Field(default=None, description=(
        "After a `snapshot` (or `restore`) action: the snapshot's id."))


class SWEState(State):
    """OpenEnv's ``State`` (``episode_id``, ``step_count``) and the episode's task."""

    instance_id: str | None = Field(default=None, description="The task of the current episode, or None.")
    backend: str = Field(default="", description="real, sim or hybrid.")
    done: bool = Field(default=False, description="The episode ended (submit, step limit or failure).")


__all__ = ["SWEAction", "SWEObservation", "SWEState"]
