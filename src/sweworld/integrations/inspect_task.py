"""sweworld's datasets as inspect-ai tasks: ``inspect eval sweworld/sweworld_task -T dataset=lite``.

``sweworld_task(dataset, ...)``: one sample per instance (input: the problem statement), each in its
own ``sweworld`` sandbox (``inspect_sandbox``: real by default, ``sim`` or ``hybrid`` with
``-T backend=sim``), solved by any inspect solver (default: inspect's ``basic_agent`` with its own
``bash()`` and ``text_editor()`` tools) and scored by ``sweworld_scorer()``: the episode's diff
against the base commit, graded by the backend's harness (real: the tests run as SWE-bench's harness
runs them; sim: the SWR's verdict), the SWE-bench report in the score's metadata.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import Solver, TaskState, basic_agent
from inspect_ai.tool import bash, text_editor
from inspect_ai.util import SandboxEnvironmentSpec, sandbox

from sweworld.core.errors import InfraError
from sweworld.core.paths import subdir
from sweworld.integrations.episodes import EpisodeSpec, backend_for, load_tasks_of
from sweworld.integrations.inspect_sandbox import SweworldSandboxConfig, SweworldSandboxEnvironment
from sweworld.seam import grade

PROMPT = ("You are working in the repository at /testbed (the shell starts there). Resolve the issue below by "
          "editing the repository's source files; do not change its tests. When you are done, submit.\n\n"
          "<issue>\n{problem}\n</issue>")


def samples(spec: EpisodeSpec, instance_ids: list[str] | None = None, prompt: str = PROMPT) -> list[Sample]:
    """One inspect ``Sample`` per instance of ``spec.dataset``, each with its sweworld sandbox."""
    result = []
    for item in load_tasks_of(spec.dataset, spec.split, instance_ids):
        config = SweworldSandboxConfig(**{**spec.model_dump(exclude={"instance_id", "image"}),
                                          "instance_id": item.instance_id})
        result.append(Sample(
            id=item.instance_id, input=prompt.format(problem=item.problem_statement),
            metadata={"instance_id": item.instance_id, "dataset": spec.dataset, "repo": item.repo,
                      "base_commit": item.base_commit, "version": item.version},
            sandbox=SandboxEnvironmentSpec("sweworld", config)))
    return result


@scorer(metrics=[accuracy(), stderr()])
def sweworld_scorer(model_name: str = "inspect") -> Scorer:
    """Grade the sample's episode: its diff against the base commit, through the backend's harness."""

    async def score(state: TaskState, target: Target) -> Score:
        env = sandbox().as_type(SweworldSandboxEnvironment)
        patch = await anyio.to_thread.run_sync(env.executor.diff)
        backend = backend_for(env.spec)
        graded = await anyio.to_thread.run_sync(lambda: grade(
            backend, env.task, patch, model=model_name, logs=subdir("runs", "inspect"), binary=True))
        if graded.report is None:  # the evaluation raised: inspect records the sample's error
            raise InfraError(f"{env.task.instance_id}: {graded.error}")
        report = graded.report
        data: dict[str, Any] = report.model_dump(mode="json")
        return Score(value=CORRECT if graded.reward == 1.0 else INCORRECT, answer=patch,
                     explanation=f"{env.backend} harness: " + ("resolved" if report.resolved else "not resolved")
                     + (f" ({report.error})" if report.error else ""),
                     metadata={"report": data, "backend": env.backend})

    return score


def default_solver() -> Solver:
    """inspect's own agent with its own tools: ``bash()`` and ``text_editor()``."""
    return basic_agent(tools=[bash(timeout=180), text_editor(timeout=180)])


@task
def sweworld_task(dataset: str = "lite", instance_ids: str | list[str] | None = None, split: str | None = None,
                  backend: str = "real", repos_dir: str | None = None, solver: Solver | None = None,
                  message_limit: int = 30, **backend_options: Any) -> Task:
    """sweworld instances as an inspect task (``-T dataset=... -T instance_ids=a,b -T backend=sim``)."""
    ids = instance_ids.split(",") if isinstance(instance_ids, str) else instance_ids
    spec = EpisodeSpec(dataset=dataset, split=split, backend=backend, repos_dir=repos_dir,
                       backend_options=backend_options)
    return Task(dataset=MemoryDataset(samples(spec, ids), name=f"sweworld-{Path(dataset).stem}"),
                solver=solver or default_solver(), scorer=sweworld_scorer(), message_limit=message_limit,
                sandbox=("sweworld", None))


__all__ = ["PROMPT", "default_solver", "samples", "sweworld_scorer", "sweworld_task"]
