"""Branched rollouts: ``sweworld rollout --branch-at STEP --branches K`` (``docs/branching_rollouts.md``).

Per instance, each of the ``n_samples`` prefixes is one episode run for ``STEP`` steps, snapshotted
(``core.protocols.Branchable``), then continued ``K`` times: branch 0 in the prefix's own episode,
branches 1..K-1 each in a fork of the snapshot (files, shell cwd and exports; no running process).
Every branch starts from the prefix's messages and steps with its own policy sample (prefix ``p``,
branch ``b`` is sample ``p * K + b``, bound to it as any sample is; see ``agents.search.resume_policy``
for how a scripted policy is brought to the prefix's end), and is graded as a normal sample. The K
trajectories carry ``prefix_id`` (the same for the K), ``prefix_steps`` and ``branch``.

An episode that ends within the prefix (it submitted, hit a limit) is not forked: its one
trajectory is branch 0 with ``prefix_ended`` true, the other K-1 samples of that prefix do not exist,
and the summary counts it (``branching.ended_in_prefix``). An episode that cannot be forked (a
backend without snapshots) stops the run with one ``ConfigError`` saying why; a snapshot or a fork
refused (``SnapshotError``: the episode's disk limit) or failed leaves those branches without an
outcome (an infra error: a rerun tries the prefix again), and the others go on.

Resuming: a prefix is done when its branch 0 has an outcome and either ended in the prefix or its K
branches all have outcomes; otherwise the whole prefix runs again and its K new records replace the
old ones (a store keeps the last record of a sample), so the branches of a prefix always share one
``prefix_id``. Only this module's caller (``runs.rollout``) writes the store.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path

from sweworld.agents.config import AgentConfig
from sweworld.agents.loop import AgentRun
from sweworld.agents.search import bound, continuation, need_branchable
from sweworld.backends import Backend
from sweworld.core.config import RolloutConfig, Timeouts
from sweworld.core.errors import InfraError, SnapshotError, WorldError
from sweworld.core.executor import Executor
from sweworld.core.protocols import Audited, Policy
from sweworld.core.types import Task
from sweworld.parallel.map import map_items
from sweworld.parallel.runner import ROLLOUT, Runner, environment_group
from sweworld.runs.store import TrajectoryStore
from sweworld.trajectory import Trajectory

Grade = Callable[..., Trajectory]
"""``runs.rollout.evaluate_sample``: ``(traj, task, backend, out, *, evaluate, timeouts) -> traj``."""


def samples_of(prefix: int, branches: int) -> range:
    """The sample indices of prefix ``prefix``'s branches."""
    return range(prefix * branches, (prefix + 1) * branches)


def _mark(traj: Trajectory, prefix_id: str, steps: int | None, branch: int, ended: bool | None = None) -> Trajectory:
    traj.prefix_id, traj.prefix_steps, traj.branch, traj.prefix_ended = prefix_id, steps, branch, ended
    return traj


def _finished(traj: Trajectory, executor: Executor, backend: Backend) -> Trajectory:
    traj.backend = backend.name
    traj.audits = executor.audits if isinstance(executor, Audited) else None
    return traj


def rollout_prefix(task: Task, prefix: int, make_policy: Callable[[], Policy], config: AgentConfig, backend: Backend,
                   *, branch_at: int, branches: int, timeouts: Timeouts | None = None) -> list[Trajectory]:
    """The trajectories of prefix ``prefix`` of ``task`` (not graded): its K branches, or its one
    trajectory when the episode ended within the prefix (see the module docstring)."""
    timeouts = timeouts or Timeouts()
    samples = samples_of(prefix, branches)
    policy = bound(make_policy, task.instance_id, samples[0])
    prefix_id = f"{task.instance_id}.{samples[0]}.{uuid.uuid4().hex[:12]}"
    try:
        with backend.open(task, timeout=timeouts.command, label=f"{task.instance_id}.{samples[0]}") as episode:
            need_branchable(episode, "--branches")
            run = AgentRun(task, episode, policy, config, sample=samples[0])
            head = run.run(until=branch_at)
            if not run.paused:
                if head.failed:
                    return [_mark(Trajectory.failed_sample(task, s, policy, config.digest(), head), prefix_id, None, b)
                            for b, s in enumerate(samples)]
                return [_mark(_finished(head, episode, backend), prefix_id, len(head.steps), 0, ended=True)]
            shared = head.model_copy(deep=True)
            try:
                handle, refused = episode.snapshot(), None
            except SnapshotError as exc:  # refused (the disk limit): branch 0 goes on, the others have no outcome
                handle, refused = None, exc
            found: list[Trajectory] = []
            for branch, sample in enumerate(samples[1:], 1):
                own = bound(make_policy, task.instance_id, sample)
                try:
                    if refused is not None:
                        raise refused
                    with episode.fork(handle) as fork:
                        traj = continuation(task, fork, own, config, shared, run.tools, sample).run()
                        _finished(traj, fork, backend)
                except (InfraError, WorldError, SnapshotError) as exc:  # no outcome for this branch; the others go on
                    traj = Trajectory.failed_sample(task, sample, own, config.digest(), exc)
                found.append(_mark(traj, prefix_id, len(shared.steps), branch))
            if handle is not None:
                episode.release(handle)
            first = _finished(run.run(), episode, backend)  # branch 0 goes on in the prefix's episode
            return [_mark(first, prefix_id, len(shared.steps), 0), *found]
    except InfraError as exc:
        return [_mark(Trajectory.failed_sample(task, s, policy, config.digest(), exc), prefix_id, None, b) for b, s in enumerate(samples)]


def branched_item(item: tuple[Task, int], backend: Backend, *, make_policy: Callable[[], Policy], config: AgentConfig,
                  out: Path, branch_at: int, branches: int, grade: Grade, evaluate: bool = True,
                  timeouts: Timeouts | None = None) -> list[Trajectory]:
    """One item of a branched run, (task, prefix): its trajectories, each graded by ``grade``."""
    task, prefix = item
    found = rollout_prefix(task, prefix, make_policy, config, backend, branch_at=branch_at, branches=branches,
                           timeouts=timeouts)
    return [grade(traj, task, backend, out, evaluate=evaluate, timeouts=timeouts) for traj in found]


def prefix_done(stored: dict[tuple[str, int], Trajectory], instance_id: str, prefix: int, branches: int) -> bool:
    """Whether prefix ``prefix`` of ``instance_id`` has every outcome it can have (module docstring)."""
    samples = samples_of(prefix, branches)
    head = stored.get((instance_id, samples[0]))
    if head is None or head.failed:
        return False
    if head.prefix_ended:
        return True
    return all((t := stored.get((instance_id, s))) is not None and not t.failed and t.prefix_id == head.prefix_id
               for s in samples[1:])


def current(trajectories: list[Trajectory], instance_ids: set[str], n_samples: int, branches: int) -> list[Trajectory]:
    """The stored trajectories of this run: per prefix, those sharing its branch 0's ``prefix_id``
    (a stale record of an earlier try of the prefix is left out)."""
    stored = {t.key: t for t in trajectories if t.instance_id in instance_ids and t.sample < n_samples * branches}
    heads = {(iid, s // branches): t.prefix_id for (iid, s), t in stored.items() if s % branches == 0}
    return [t for (iid, s), t in stored.items() if (iid, s // branches) in heads
            and (t.prefix_id == heads[(iid, s // branches)] or s % branches == 0)]


def summary_of(trajectories: list[Trajectory], run: RolloutConfig) -> dict:
    heads = [t for t in trajectories if t.branch == 0 and not t.failed]
    return {"branch_at": run.branch_at, "branches": run.branches, "prefixes": len(heads),
            "ended_in_prefix": sum(bool(t.prefix_ended) for t in heads),
            "forks": sum(t.branch not in (None, 0) for t in trajectories)}


def run_branched(tasks: list[Task], make_policy: Callable[[], Policy], run: RolloutConfig, *, agent: AgentConfig,
                 backend: Backend, runner: Runner, store: TrajectoryStore,
                 on_done: Callable[[tuple[Task, int], Trajectory], None], grade: Grade) -> tuple[list[Trajectory], dict]:
    """The prefixes of ``run`` not done yet (items (task, prefix) on ``runner``), each of their
    trajectories passed to ``on_done`` as it comes; returns this run's stored trajectories and the
    summary's ``branching`` part."""
    branches, n_samples = run.branches or 1, run.n_samples
    if run.branch_at is None:
        raise ValueError("a branched run needs branch_at")
    stored = {t.key: t for t in store.load()}
    map_items([(task, p) for task in tasks for p in range(n_samples)],
              partial(branched_item, make_policy=make_policy, config=agent, out=run.out, branch_at=run.branch_at,
                      branches=branches, grade=grade, evaluate=run.evaluate, timeouts=run.timeouts),
              runner=runner, workers=run.runner.workers, hints=ROLLOUT, group=lambda item: environment_group(item[0]),
              share=backend, done=lambda item: prefix_done(stored, item[0].instance_id, item[1], branches),
              on_done=lambda item, found: [on_done(item, traj) for traj in found])
    kept = current(store.load(), {t.instance_id for t in tasks}, n_samples, branches)
    return kept, {"branching": summary_of(kept, run)}


__all__ = ["branched_item", "current", "prefix_done", "rollout_prefix", "run_branched", "samples_of"]
