"""What the embedded SWT keeps from its traces: plain data, saved as JSON.

- ``InstanceFacts``: the task (gold fields included when an evaluation or a dataset gave them),
  per-test statuses by workspace state (``states[diff_digest]``; the empty digest is the base
  commit), failure sections and summary lines of failed tests, test-run durations, the
  docstring lines and skip reasons unittest prints;
- ``RepoFacts``: the pytest session header, Django's lines around the report, sympy's header, the
  lines tox and nox print before the test command, the static import graph;
- ``StepRecord``: one recorded code-execution step (nearest-neighbour and exact replay);
- ``EmbeddedData``: all of it, with ``replay`` (state key -> step) and ``problems`` (problem
  statement digest -> instance, to know the task of a ``swe-world`` prompt, which names none).

``diff_digest`` and ``state_key`` are the keys: a command's workspace state is its diff (``index``
lines and trailing blanks ignored) and the files it executes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field

from sweworld.core.types import Task
from sweworld.world.context import SWTContext

FORMAT = "sweworld-embedded-swt/1"


def digest(text: str, n: int = 24) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def diff_digest(diff: str) -> str:
    """The key of a workspace state ("" for the base commit)."""
    lines = [line.rstrip() for line in diff.splitlines() if not line.startswith("index ")]
    text = "\n".join(lines).strip()
    return digest(text) if text and text not in ("(no changes)", "No changes yet.") else ""


def problem_key(problem: str) -> str:
    """The key of a task by its problem statement (its head: contexts may cut the tail)."""
    return digest(problem.strip()[:1000])


def state_key(context: SWTContext) -> str:
    """The key of exact replay: instance, command, workspace state, executed files."""
    files = [(f.path, digest(f.content)) for f in context.files]
    return digest(json.dumps([context.task.instance_id, context.command.strip(), diff_digest(context.diff), files]),
                  32)


class InstanceFacts(BaseModel):
    task: dict[str, Any]
    states: dict[str, dict[str, str]] = Field(default_factory=dict, description="diff digest -> test -> status")
    failures: dict[str, list[str]] = Field(default_factory=dict, description="test -> recorded failure section")
    summaries: dict[str, str] = Field(default_factory=dict, description="test -> recorded short-summary line")
    durations: list[float] = Field(default_factory=list, description="Seconds of recorded test runs.")
    descriptions: dict[str, str] = Field(default_factory=dict, description="unittest name -> docstring line.")
    reasons: dict[str, str] = Field(default_factory=dict, description="test -> skip reason as printed.")

    def as_task(self) -> Task:
        return Task.model_validate(self.task)

    def known_tests(self) -> list[str]:
        """Every test id the facts name, recorded order first, then the task's lists."""
        ids: dict[str, None] = {}
        for statuses in self.states.values():
            ids.update(dict.fromkeys(statuses))
        ids.update(dict.fromkeys(self.task.get("FAIL_TO_PASS") or []))
        ids.update(dict.fromkeys(self.task.get("PASS_TO_PASS") or []))
        return list(ids)


class RepoFacts(BaseModel):
    header: list[str] = Field(default_factory=list, description="pytest session header lines.")
    python: str = Field(default="", description="The interpreter pytest -v names in its header.")
    warnings: list[str] = Field(default_factory=list, description="Collection-time warnings summary.")
    warning_count: int = 0
    preamble: list[str] = Field(default_factory=list, description="Django runner lines before the progress.")
    epilogue: list[str] = Field(default_factory=list, description="Django runner lines after the result.")
    sympy_header: list[str] = Field(default_factory=list, description="bin/test lines after its banner.")
    wrapped: dict[str, list[str]] = Field(default_factory=dict,
                                          description="tox | nox -> its lines before the test command.")
    graph: dict[str, list[str]] = Field(default_factory=dict, description="Static import graph (path -> imports).")


class StepRecord(BaseModel):
    instance_id: str
    repo: str
    command: str
    files: list[str] = Field(default_factory=list)
    diff: str = Field(default="", description="diff_digest of the workspace state.")
    state: str = Field(default="", description="predictor.state_class of the workspace against the gold patch.")
    output: str = ""
    exit_code: int = 0


class EmbeddedData(BaseModel):
    format: str = FORMAT
    instances: dict[str, InstanceFacts] = Field(default_factory=dict)
    repos: dict[str, RepoFacts] = Field(default_factory=dict)
    steps: list[StepRecord] = Field(default_factory=list)
    replay: dict[str, int] = Field(default_factory=dict)
    problems: dict[str, str] = Field(default_factory=dict)

    def add_task(self, task: Task, *, replace: bool = True) -> InstanceFacts:
        """The facts of ``task``'s instance, its task row set (kept when ``replace`` is False)."""
        facts = self.instances.get(task.instance_id)
        if facts is None:
            facts = self.instances[task.instance_id] = InstanceFacts(task=task.model_dump(mode="json"))
        elif replace:
            facts.task = task.model_dump(mode="json")
        if task.problem_statement:
            self.problems[problem_key(task.problem_statement)] = task.instance_id
        self.repos.setdefault(task.repo, RepoFacts())
        return facts
