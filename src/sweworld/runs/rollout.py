"""Parallel, resumable rollouts: K samples per instance, each episode in a fresh isolated sandbox,
each trajectory appended to ``trajectories.jsonl`` as soon as it is finished and evaluated by the
harness (reward = 1.0 when resolved). A rerun skips the (instance, sample) pairs already stored, so
a crash loses at most the episodes in flight and duplicates none. A sample whose model endpoint or
infrastructure failed (``error_kind``) has no outcome: it is stored with its error, kept out of the
predictions and the metrics, and run again by a rerun.

Branched rollouts (``--branch-at STEP --branches K``) are ``runs.branching``'s.

Outputs in ``out``: ``trajectories.jsonl``, ``predictions.jsonl`` (SWE-bench format, sample 0),
``predictions.all.jsonl`` (every sample, with its index), ``eval/`` (harness logs), ``summary.json``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

from sweworld.agents.config import AgentConfig
from sweworld.agents.loop import Policy, run_episode
from sweworld.backends import Backend, audits
from sweworld.core import names
from sweworld.core.config import RolloutConfig, Timeouts
from sweworld.core.errors import InfraError
from sweworld.core.protocols import Audited, Bindable
from sweworld.core.types import Task
from sweworld.harness.report import write_atomic
from sweworld.parallel.map import map_items
from sweworld.parallel.runner import ROLLOUT, Runner, environment_group, runner_of
from sweworld.runs.branching import run_branched
from sweworld.runs.metrics import summarize
from sweworld.runs.store import TrajectoryStore
from sweworld.seam import grade
from sweworld.trajectory import Trajectory

log = logging.getLogger(__name__)


def rollout_one(task: Task, sample: int, policy: Policy, config: AgentConfig, backend: Backend, out: Path,
                *, evaluate: bool = True, timeouts: Timeouts | None = None) -> Trajectory:
    """One episode of ``policy`` on ``task`` (a fresh episode of ``backend``), then its evaluation.
    A policy that draws per sample (``bind(instance_id, sample)``: perturb, explorer) is bound to
    this pair first, so every sample gets its own reproducible draw whatever the order. Each command
    has ``timeouts.command``, the evaluation ``timeouts.evaluation``."""
    timeouts = timeouts or Timeouts()
    if isinstance(policy, Bindable):
        policy = policy.bind(task.instance_id, sample)
    try:
        with backend.open(task, timeout=timeouts.command, label=f"{task.instance_id}.{sample}") as sb:
            traj = run_episode(task, sb, policy, config, sample=sample)
        traj.backend = backend.name
        traj.audits = sb.audits if isinstance(sb, Audited) else None
    except InfraError as exc:
        return Trajectory.failed_sample(task, sample, policy, config.digest(), exc)
    return evaluate_sample(traj, task, backend, out, evaluate=evaluate, timeouts=timeouts)


def evaluate_sample(traj: Trajectory, task: Task, backend: Backend, out: Path, *, evaluate: bool = True,
                    timeouts: Timeouts | None = None) -> Trajectory:
    """``traj`` graded by the harness (logs in ``out/eval/<instance_id>.<sample>``): its report and
    reward, or its infra error; a failed sample, or ``evaluate=False``, as it is."""
    timeouts = timeouts or Timeouts()
    if evaluate and not traj.failed:  # a failed sample has no outcome to grade
        graded = grade(backend, task, traj.patch, model=traj.model or traj.policy, logs=out / "eval",
                       name=f"{task.instance_id}.{traj.sample}", timeout=timeouts.evaluation, binary=True,
                       staged=True)
        if graded.report is not None:
            traj.report = graded.report.model_dump()
            traj.audits = audits.merge([traj.audits, graded.report.audits])
        if graded.failed:
            traj.error, traj.error_kind = graded.error, "infra"
        else:
            traj.reward = graded.reward  # the trajectory's reward is its verdict, 1.0/0.0 on every backend
    return traj


def rollout_item(item: tuple[Task, int], backend: Backend, *, make_policy: Callable[[], Policy],
                 config: AgentConfig, out: Path, evaluate: bool = True, timeouts: Timeouts | None = None) -> Trajectory:
    """One item of a run, (task, sample): ``rollout_one`` with a policy made where the item runs (a
    policy holding a client is made on the worker that uses it, not shipped)."""
    task, sample = item
    return rollout_one(task, sample, make_policy(), config, backend, out, evaluate=evaluate, timeouts=timeouts)


def write_outputs(out: Path, trajectories: list[Trajectory], extra: dict | None = None) -> dict:
    ordered = sorted(trajectories, key=lambda t: t.key)
    model = {t.key: t.model or t.policy for t in ordered}
    with open(out / "predictions.jsonl.tmp", "w", encoding="utf-8") as first, \
            open(out / "predictions.all.jsonl.tmp", "w", encoding="utf-8") as every:
        for traj in (t for t in ordered if not t.failed):
            row = {"instance_id": traj.instance_id, "model_name_or_path": model[traj.key], "model_patch": traj.patch}
            every.write(json.dumps({**row, "sample": traj.sample}) + "\n")
            if traj.sample == 0:
                first.write(json.dumps(row) + "\n")
    os.replace(out / "predictions.jsonl.tmp", out / "predictions.jsonl")
    os.replace(out / "predictions.all.jsonl.tmp", out / "predictions.all.jsonl")
    summary = {**summarize(ordered), **audits.summary_part(ordered), **(extra or {})}
    write_atomic(out / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def run_rollouts(tasks: list[Task], make_policy: Callable[[], Policy], run: RolloutConfig | None = None, *,
                 agent: AgentConfig | None = None, backend: Backend | None = None,
                 on_done: Callable[[Trajectory], None] | None = None, runner: Runner | None = None) -> dict:
    """Run what is missing of ``run`` (its ``out``, ``n_samples``, ``evaluate``, ``timeouts``,
    workers) with ``backend`` (default: the one ``run.backend`` describes) on ``runner`` (default:
    ``run.runner``'s), each episode under ``agent`` (default: ``run.agent_config``, ``step_limit``,
    ``text_actions``), then write predictions and the summary; returns the summary. Only this
    process writes the store, one record per finished item, whichever worker ran it. With
    ``run.branches``, each sample of ``n_samples`` is a prefix continued in forks (``runs.branching``)."""
    run = run or RolloutConfig()
    out, n_samples, workers, evaluate = run.out, run.n_samples, run.runner.workers, run.evaluate
    if agent is None:
        from sweworld.agents.config import load_agent_config
        agent = load_agent_config(run.agent_config, step_limit=run.step_limit, text_actions=run.text_actions or None)
    if backend is None:
        from sweworld.backends import make_backend
        backend = make_backend(run.backend, timeouts=run.timeouts)
    runner = runner or runner_of(run.runner)
    for task in tasks:  # each names its eval directories: out/eval/<instance_id>.<sample>
        names.check(task.instance_id, what="instance_id")
    out.mkdir(parents=True, exist_ok=True)
    store = TrajectoryStore(out / "trajectories.jsonl")
    done = store.done()

    def finished(_item: tuple[Task, int], traj: Trajectory) -> None:
        store.append(traj)
        if on_done:
            on_done(traj)

    if run.branches is not None:  # prefixes, each continued in forks
        kept, extra = run_branched(tasks, make_policy, run, agent=agent, backend=backend, runner=runner,
                                   store=store, on_done=finished, grade=evaluate_sample)
        return write_outputs(out, kept, {"backend": backend.name, **extra})
    map_items([(task, k) for task in tasks for k in range(n_samples)],
              partial(rollout_item, make_policy=make_policy, config=agent, out=out, evaluate=evaluate,
                      timeouts=run.timeouts),
              runner=runner, workers=workers, hints=ROLLOUT, group=lambda item: environment_group(item[0]),
              share=backend, done=lambda item: (item[0].instance_id, item[1]) in done, on_done=finished)
    wanted = {t.instance_id for t in tasks}
    return write_outputs(out, [t for t in store.load() if t.instance_id in wanted and t.sample < n_samples],
                         {"backend": backend.name})
