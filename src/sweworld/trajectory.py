"""Trajectories: one pydantic record per (instance, sample), one JSON line each.

Messages are OpenAI chat messages (with tool calls); steps carry what a trainer or an analyst
needs per action: the action, the observation, the exit code, the duration, which backend answered
(real or sim) and the tokens the model spent on it.

A branched rollout (``docs/branching_rollouts.md``) records its shared prefix: ``prefix_id`` (the same
for the K branches of one prefix), ``prefix_steps`` (how many of the first steps they share),
``branch`` (0..K-1) and ``prefix_ended`` (the episode ended within the prefix: no branch was
forked, this trajectory is the prefix's only one). All four are None on an unbranched trajectory,
and on records written before they existed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from sweworld import __version__
from sweworld.core.errors import ModelError

if TYPE_CHECKING:
    from sweworld.core.protocols import Policy
    from sweworld.core.types import Task

ExitStatus = Literal["submitted", "step_limit", "time_limit", "context_limit", "format_errors", "stuck", "error"]
LIMIT_STATUSES: tuple[ExitStatus, ...] = ("step_limit", "time_limit", "context_limit")
"""The exit statuses of an episode stopped by a limit."""
ErrorKind = Literal["model", "infra"]


class Step(BaseModel):
    """One action and what the world answered."""

    index: int = Field(description="0-based step number.")
    tool: str = Field(description="Tool called ('' for a reply that held no valid action).")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments.")
    thought: str = Field(default="", description="Text the model wrote before the action.")
    observation: str = Field(default="", description="What the agent was shown.")
    exit_code: int | None = Field(default=None, description="Exit code of a command, when there was one.")
    duration: float = Field(default=0.0, description="Seconds spent executing the action.")
    backend: Literal["real", "sim"] = Field(default="real", description="Who executed it.")
    prompt_tokens: int = Field(default=0, description="Prompt tokens of the model call that chose this action.")
    completion_tokens: int = Field(default=0, description="Completion tokens of that call.")
    format_error: bool = Field(default=False, description="The reply held no valid action.")


class Trajectory(BaseModel):
    """One episode of one agent on one instance."""

    instance_id: str
    sample: int = Field(default=0, description="Sample index among the K rollouts of this instance.")
    policy: str = Field(default="", description="'oracle', 'noop', 'replay' or 'openai'.")
    model: str = Field(default="", description="Model name (policies that use one).")
    messages: list[dict[str, Any]] = Field(default_factory=list, description="OpenAI chat messages.")
    steps: list[Step] = Field(default_factory=list)
    patch: str = Field(default="", description="The workspace diff against the base commit at the end.")
    exit_status: ExitStatus = "error"
    error: str | None = Field(default=None, description="What went wrong (see error_kind).")
    error_kind: ErrorKind | None = Field(default=None, description=(
        "Why the sample has no outcome: 'model' (the model endpoint failed) or 'infra' (environment, "
        "sandbox, harness). Such a sample is left out of the metrics and retried by a rerun."))
    reward: float | None = Field(default=None, description="1.0 resolved, 0.0 not; None when not evaluated.")
    report: dict[str, Any] | None = Field(default=None, description="The harness report of the final patch.")
    audits: dict[str, dict[str, int]] | None = Field(default=None, description=(
        "A hybrid episode's audit and routing counts, its evaluation's included (sweworld.backends.audits)."))
    usage: dict[str, int] = Field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds: total, model, tools, eval.")
    config_hash: str = Field(default="", description="Hash of the agent configuration.")
    backend: str = Field(default="real", description="The backend of the episode: 'real', 'sim' or 'hybrid'.")
    sweworld_version: str = __version__
    prefix_id: str | None = Field(default=None, description=(
        "Branched rollouts: the id of the prefix episode this trajectory continues (its K branches share it)."))
    prefix_steps: int | None = Field(default=None, description=(
        "Branched rollouts: how many of the first steps came from the shared prefix (a copy in every branch)."))
    branch: int | None = Field(default=None, description="Branched rollouts: this branch's index, 0..K-1.")
    prefix_ended: bool | None = Field(default=None, description=(
        "Branched rollouts: True when the episode ended within the prefix, so that no branch was forked and "
        "this (branch 0) is the prefix's only trajectory."))

    @property
    def key(self) -> tuple[str, int]:
        return self.instance_id, self.sample

    @property
    def failed(self) -> bool:
        """A model or infrastructure failure, not an outcome of the agent (records written before
        ``error_kind`` existed say so by exit status 'error')."""
        return self.error_kind is not None or self.exit_status == "error"

    @classmethod
    def failed_sample(cls, task: Task, sample: int, policy: Policy, config_hash: str,
                      error: Exception | Trajectory) -> Trajectory:
        """The record of a sample with no trajectory of its own: its episode failed (``error``), or
        the prefix it was to branch from did (that trajectory, whose error it carries)."""
        traj = cls(instance_id=task.instance_id, sample=sample, policy=policy.name, model=policy.model,
                   config_hash=config_hash)
        if isinstance(error, Trajectory):
            traj.exit_status, traj.error, traj.error_kind = "error", error.error, error.error_kind
        else:
            traj.fail(error)
        return traj

    def fail(self, exc: Exception, context: str = "") -> None:
        """Record ``exc`` as the reason this sample has no outcome."""
        self.exit_status = "error"
        self.error = f"{context}{type(exc).__name__}: {exc}"
        self.error_kind = "model" if isinstance(exc, ModelError) else "infra"

    def actions(self) -> list[tuple[str, str]]:
        """(tool, canonical arguments) per step: what stuck-in-loop detection compares."""
        import json
        return [(s.tool, json.dumps(s.arguments, sort_keys=True)) for s in self.steps]
