"""The set-up agent in a mining run: each inferred release line is tried before validation, and the
agent (``mine.setup_agent``) is asked for a recipe where the inferred one fails.

A release line is tried on its newest candidate (the one whose base commit is its environment
commit): its environment and install layer built, then one run of its tests with the test patch
(``harness.evaluate.run_tests``), which must give the row's log parser some test results. A line that
passes keeps its inferred recipe and costs nothing more (the build is the one validation needs); a
line that fails is handed to the agent, and the recipe it settles on replaces the inferred fields of
every row of the line. A line the agent cannot fix keeps its rows as they were: validation then
drops them with the build's or the run's own reason.
"""

from __future__ import annotations

import logging
from typing import Any

from sweworld.core.errors import SWEWorldError
from sweworld.core.types import ENV_FIELDS, Task
from sweworld.mine.candidates import Screen
from sweworld.mine.setup_agent import set_up
from sweworld.models.base import ChatModel
from sweworld.sandbox import Layers, Sandbox, SandboxConfig

log = logging.getLogger(__name__)

TAIL = 3000
"""Characters of a build log or a test run's output shown to the agent."""


def trial(task: Task, backend: Any, timeout: float) -> str | None:
    """None when ``task``'s environment builds and one run of its tests reports results, else what failed."""
    from sweworld.harness import grade
    from sweworld.harness.evaluate import run_tests

    try:
        prepared = backend.prepared(task, timeout=timeout)
        with prepared.open() as sb:
            run, result = run_tests(sb, task, prepared.recipe, timeout=timeout, stand_ins=prepared.stand_ins)
    except SWEWorldError as exc:
        return f"the environment did not build: {exc}"[-TAIL:]
    if result.timed_out:
        return f"the tests did not finish in {timeout:.0f}s:\n{result.output[-TAIL:]}"
    statuses = grade.grade(task, run).status_map if run.markers_found else {}
    if not statuses:
        return f"the test command gave no test results (exit code {run.exit_code}):\n{run.test_output[-TAIL:]}"
    return None


def with_config(task: Task, config: dict[str, Any], notes: list[str]) -> Task:
    """``task`` built by ``config`` (its own environment fields dropped, the repository's source kept)."""
    row = task.model_dump(mode="json")
    for key in ENV_FIELDS:
        if key != "repo_source":
            row.pop(key, None)
    row.update(install_config=config, recipe_source="agent", recipe_notes=[*(row.get("recipe_notes") or []), *notes])
    return Task.model_validate(row)


def tree_episode(backend: Any, task: Task):
    """A real isolated episode of ``task``'s base tree, with no environment and no network."""
    tree = backend.builder.repos.base_tree(task)
    return Sandbox({"/testbed": Layers([tree])}, config=SandboxConfig(timeout=120), base_commit=task.base_commit,
                   label=f"setup-{task.instance_id}")


def fix_lines(screened: Screen, backend: Any, model: ChatModel, *, timeout: float, attempts: int = 3) -> dict[str, list[str]]:
    """Try every inferred release line of ``screened``; where it fails, ask the agent and rewrite the
    line's rows with the recipe it settles on. Returns the notes of each line tried."""
    told: dict[str, list[str]] = {}
    for version, choice in screened.versions.items():
        if choice.kind != "inferred":
            continue
        env_commit = choice.fields.get("environment_setup_commit")  # a group's (mine.envgroups)
        rows = [c for c in screened.candidates if c.task.environment_setup_commit == env_commit]
        newest = next((c for c in rows if c.task.base_commit == env_commit), None)
        if newest is None:
            continue
        failure = trial(newest.task, backend, timeout)
        if failure is None:
            continue
        log.info("release line %s: the inferred recipe fails (%s); asking the set-up agent", version,
                 failure.splitlines()[0])
        outcome = set_up(model, newest.task, open_episode=lambda t=newest.task: tree_episode(backend, t),
                         attempt=lambda config, t=newest.task: trial(with_config(t, config, []), backend, timeout),
                         attempts=attempts, notes=choice.notes)
        told[version] = [f"inferred recipe failed: {failure.splitlines()[0][:300]}", *outcome.notes]
        choice.notes = [*choice.notes, *told[version]]
        if outcome.config is None:
            continue
        choice.kind = "agent"
        for candidate in rows:
            candidate.task = with_config(candidate.task, outcome.config, told[version])
    return told
