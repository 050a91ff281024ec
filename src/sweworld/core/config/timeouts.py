"""The three timeouts of a run, defined once (every default elsewhere is one of these).

- ``command``: the wall limit of one command an agent (or ``sweworld exec``) runs in an episode;
  ``sweworld rollout --timeout``. A command over it is killed and its output says so.
- ``evaluation``: the wall limit of one evaluation (one test run of the harness, or SWR's
  simulated one): ``sweworld eval --timeout``, ``validate --timeout``, ``mine --timeout``. An
  evaluation over it is unresolved, as SWE-bench counts a timeout.
- ``build``: the wall limit of one environment build script (interpreter venv, install layer).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

COMMAND = 600.0
"""Seconds one command of an episode may run (``Timeouts.command``)."""
EVALUATION = 1800.0
"""Seconds one evaluation's test run may take (``Timeouts.evaluation``)."""
BUILD = 3600.0
"""Seconds one environment build script may take (``Timeouts.build``)."""


class Timeouts(BaseModel):
    """How long each kind of work may take, in seconds (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    command: float = Field(default=COMMAND, gt=0, description=(
        "Wall limit of one command in an episode, seconds (`sweworld rollout --timeout`, `exec --timeout`)."))
    evaluation: float = Field(default=EVALUATION, gt=0, description=(
        "Wall limit of one evaluation's test run, seconds (`sweworld eval|validate|mine --timeout`); "
        "over it the instance is unresolved."))
    build: float = Field(default=BUILD, gt=0, description="Wall limit of one environment build script, seconds.")


__all__ = ["BUILD", "COMMAND", "EVALUATION", "Timeouts"]
