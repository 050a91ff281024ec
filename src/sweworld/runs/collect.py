"""``collect``: trajectories with rewards for an RL trainer's rollout loop, as an async iterator.

    async for sample in collect(OraclePolicy, tasks, n_samples=4, backend=make_backend("sim", ...)):
        buffer.add(sample.trajectory.messages, sample.reward)

Every (task, sample) is one work item on ``runner`` (default: a thread pool of ``workers``; Ray with
``make_runner("ray")``), run by the rollout runner's own code (``runs.rollout.rollout_item``):
a fresh episode of ``backend``, the policy, then the evaluation. Samples come back as they finish,
not in order; ``reward`` is ``seam.reward_of`` of the report (None for a sample without outcome:
its ``trajectory.error`` says why).
"""

from __future__ import annotations

import asyncio
import copy
import tempfile
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path

from pydantic import BaseModel

from sweworld.agents.config import AgentConfig, load_agent_config
from sweworld.agents.loop import Policy
from sweworld.backends import Backend
from sweworld.core.config import Timeouts, timeouts
from sweworld.core.types import Task
from sweworld.parallel.runner import ROLLOUT, LocalRunner, Runner, environment_group
from sweworld.parallel.shipping import run_item
from sweworld.runs.rollout import rollout_item
from sweworld.seam.reward import reward_of
from sweworld.trajectory import Trajectory


class Sample(BaseModel):
    """One graded episode."""

    trajectory: Trajectory
    reward: float | None
    """Harness verdict (real) or SWR's P(resolved) (sim); None without outcome."""
    backend: str
    """The backend that ran the episode (``real``, ``sim``, ``hybrid``)."""


def _factory(policy: Policy | Callable[[], Policy]) -> Callable[[], Policy]:
    """A policy class or factory is called once per sample; a policy object is copied per sample
    (episodes run in parallel and a policy keeps per-episode state)."""
    if not isinstance(policy, type) and isinstance(policy, Policy):
        return partial(copy.deepcopy, policy)
    return policy  # type: ignore[return-value]


async def collect(policy: Policy | Callable[[], Policy], tasks: list[Task], n_samples: int, backend: Backend, *,
                  runner: Runner | None = None, workers: int = 2, config: AgentConfig | None = None,
                  out: str | Path | None = None, timeout: float = timeouts.EVALUATION) -> AsyncIterator[Sample]:
    """``n_samples`` graded episodes of ``policy`` per task, yielded as each finishes (see the module
    docstring). ``out`` holds the evaluation logs (default: a temporary directory)."""
    config = config or load_agent_config(None)
    where = Path(out or tempfile.mkdtemp(prefix="sweworld-collect-"))
    make = _factory(policy)
    limits = Timeouts(command=min(timeout, timeouts.COMMAND), evaluation=timeout)  # one timeout: both, as before
    with (runner or LocalRunner()).pool(workers, ROLLOUT) as pool:
        shared = pool.share(backend)
        item = partial(rollout_item, make_policy=make, config=config, out=where, timeouts=limits)
        futures = [asyncio.wrap_future(pool.submit(run_item, item, (task, k), shared, group=environment_group(task)))
                   for task in tasks for k in range(n_samples)]
        for finished in asyncio.as_completed(futures):
            shipped = await finished
            shipped.outputs.land()  # the evaluation logs, written here whichever node ran the item
            traj = shipped.result
            yield Sample(trajectory=traj, reward=None if traj.failed else reward_of(traj.report),
                         backend=traj.backend)
