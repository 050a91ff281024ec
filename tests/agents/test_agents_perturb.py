"""The perturb policy: the gold patch with probability p, else a plausible wrong or partial edit,
chosen per (seed, instance, sample); on a small two-bug module and on real tasks of the default
dataset (base files from PyPI), through the editor tool on the fake executor."""

from __future__ import annotations

import ast
from collections import Counter

import pytest
from scripted_tasks import MODULE, default_tasks, episode, two_bug_task
from tests.backends.fake import FakeBackend, apply_patch

from sweworld.agents.config import load_agent_config
from sweworld.agents.perturb import KINDS, PerturbPolicy, perturb_kind
from sweworld.agents.policies import OraclePolicy
from sweworld.core.config import RolloutConfig
from sweworld.core.errors import ModelError
from sweworld.runs.rollout import run_rollouts
from sweworld.runs.store import TrajectoryStore
from sweworld.synth import mutations_for_file


def perturb(p: float, sample: int, task, seed: int = 0, mutate=mutations_for_file) -> PerturbPolicy:
    return PerturbPolicy(p=p, seed=seed, mutate=mutate).bind(task.instance_id, sample)


def kind_of(traj) -> str | None:
    return perturb_kind(s.thought for s in traj.steps)


def test_p1_is_the_oracle_and_p0_never_the_gold_patch_with_every_kind():
    task, files = two_bug_task()
    oracle = episode(task, files, OraclePolicy()).patch
    assert episode(task, files, perturb(1.0, 0, task)).patch == oracle
    kinds = Counter()
    for sample in range(24):
        traj = episode(task, files, perturb(0.0, sample, task))
        kinds[kind_of(traj)] += 1
        assert traj.exit_status == "submitted" and traj.patch and traj.patch != oracle
        assert not any(s.observation.startswith("No replacement") for s in traj.steps[-2:])
        ast.parse(apply_patch(files, traj.patch)[MODULE])  # a plausible edit: the module still parses
    assert set(kinds) == {"mutated_fix", "bug_kept", "partial", "wrong_place"}, kinds


def test_the_kind_is_marked_on_the_first_action_after_the_views():
    task, files = two_bug_task()
    for sample in range(6):
        traj = episode(task, files, perturb(0.5, sample, task))
        views = [s for s in traj.steps if s.arguments.get("command") == "view"]
        first = traj.steps[len(views)]
        assert traj.steps[:len(views)] == views and first.thought.startswith("perturb: ")
        assert kind_of(traj) in KINDS and sum("perturb: " in s.thought for s in traj.steps) == 1


def test_without_mutations_only_partial_and_wrong_place_remain():
    task, files = two_bug_task()
    kinds = {kind_of(episode(task, files, perturb(0.0, k, task, mutate=None))) for k in range(12)}
    assert kinds == {"partial", "wrong_place"}


def test_two_constructions_act_alike_and_samples_differ():
    task, files = two_bug_task()

    def actions(sample: int, seed: int = 0):
        return [(s.tool, s.arguments) for s in episode(task, files, perturb(0.5, sample, task, seed)).steps]
    assert all(actions(k) == actions(k) for k in range(4))
    assert len({repr(actions(k)) for k in range(8)}) > 2
    assert any(actions(k, seed=1) != actions(k, seed=2) for k in range(4))


def test_an_unbound_policy_counts_the_episodes_of_each_instance():
    task, files = two_bug_task()
    policy = PerturbPolicy(p=0.5, mutate=mutations_for_file)
    unbound = [episode(task, files, policy).patch for _ in range(4)]
    assert unbound == [episode(task, files, perturb(0.5, k, task)).patch for k in range(4)]


def test_a_bound_policy_refuses_another_instance():
    task, _ = two_bug_task()
    policy = PerturbPolicy().bind("someone-else", 0)
    with pytest.raises(ModelError, match="bound to"):
        policy.reset(task)


def test_a_resumed_rollout_gives_each_sample_what_a_full_run_gives_it(tmp_path):
    task, files = two_bug_task()
    backend, config = FakeBackend({task.instance_id: files}), load_agent_config()

    def make():
        return PerturbPolicy(p=0.5, seed=3, mutate=mutations_for_file)

    def rollouts(out, n):
        run_rollouts([task], make, RolloutConfig(out=out, n_samples=n), agent=config,
                     backend=backend)  # the runner binds each sample
        return {t.key: (t.patch, kind_of(t), t.reward) for t in TrajectoryStore(out / "trajectories.jsonl").load()}
    rollouts(tmp_path / "resumed", 2)
    resumed, full = rollouts(tmp_path / "resumed", 6), rollouts(tmp_path / "full", 6)
    assert resumed == full and len(full) == 6
    assert {r for _, _, r in full.values()} == {0.0, 1.0}  # the fake grader: only the gold patch resolves


@pytest.fixture(scope="module")
def real():
    return default_tasks(10)


@pytest.mark.network
def test_on_default_tasks_p1_equals_the_oracle(real):
    for task, files in real:
        assert episode(task, files, perturb(1.0, 0, task)).patch == episode(task, files, OraclePolicy()).patch


@pytest.mark.network
def test_on_default_tasks_p0_differs_from_the_gold_patch_with_kinds_spread(real):
    by_kind: dict[str, set[str]] = {}
    for task, files in real:
        gold = episode(task, files, OraclePolicy()).patch
        for sample in range(2):
            traj = episode(task, files, perturb(0.0, sample, task))
            assert traj.patch and traj.patch != gold, (task.instance_id, sample)
            by_kind.setdefault(kind_of(traj), set()).add(task.instance_id)
    assert "gold" not in by_kind and "no_edit" not in by_kind
    assert len(by_kind) >= 3 and sum(len(ids) >= 2 for ids in by_kind.values()) >= 2, by_kind
