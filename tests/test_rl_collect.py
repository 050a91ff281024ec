"""The RL-facing API with scripted policies: ``collect`` yields graded samples as they finish (the
harness verdict with the real backend, SWR's P(resolved) with the sim backend, locally and on Ray),
and ``SWEReward`` scores completions TRL's and verl's way.

Real episodes of the demo's instances (their environments are normally in the test cache); the sim
backend runs the embedded world (CPU models, no endpoint).
"""

from __future__ import annotations

import asyncio

import pytest

from raycluster import EMPTY, FIXED, demo_tasks, local_ray
from sweworld.agents.policies import NoopPolicy, OraclePolicy
from sweworld.backends import make_backend
from sweworld.backends.real import RealBackend
from sweworld.parallel.runner import make_runner
from sweworld.rl import SWEReward, collect, patch_of, reward_of
from sweworld.world.config import WorldConfig

pytestmark = [pytest.mark.ray, pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow,
              pytest.mark.xdist_group("ray")]


@pytest.fixture(scope="module")
def tasks():
    return demo_tasks()


@pytest.fixture(scope="module")
def ray_cluster(sweworld_home):
    with local_ray(sweworld_home) as ray:
        yield ray


def gather(policy, tasks, n, backend, **options) -> list:
    async def run() -> list:
        return [sample async for sample in collect(policy, tasks, n, backend, **options)]
    return asyncio.run(run())


def by_key(samples) -> dict:
    return {(s.trajectory.instance_id, s.trajectory.sample): s for s in samples}


def test_collect_real_rewards_are_the_harness_verdicts(tasks, tmp_path):
    samples = by_key(gather(OraclePolicy, tasks, 2, RealBackend(), out=tmp_path))
    assert sorted(samples) == [(FIXED, 0), (FIXED, 1), (EMPTY, 0), (EMPTY, 1)]
    assert {k: s.reward for k, s in samples.items()} == {(FIXED, 0): 1.0, (FIXED, 1): 1.0, (EMPTY, 0): 0.0,
                                                         (EMPTY, 1): 0.0}
    assert {s.backend for s in samples.values()} == {"real"}
    fixed = samples[(FIXED, 0)].trajectory
    assert fixed.patch and fixed.messages and fixed.report["resolved"] is True
    assert (tmp_path / "eval" / f"{FIXED}.0" / "report.json").exists()


def test_collect_sim_rewards_are_swr_probabilities_and_a_policy_object_is_copied(tasks):
    sim = make_backend("sim", world=WorldConfig.from_options(urls=None, kind="embedded", dataset="demo"))
    samples = by_key(gather(OraclePolicy(), tasks, 2, sim))
    fixed, empty = samples[(FIXED, 0)], samples[(EMPTY, 0)]
    assert fixed.backend == "sim" and fixed.reward == fixed.trajectory.report["sim_probability"]
    assert 0.5 < fixed.reward < 1.0  # a probability, not a verdict
    assert empty.reward == 0.0  # an empty patch: no model call, P(resolved) 0
    assert samples[(FIXED, 1)].reward == fixed.reward


def test_collect_on_ray_yields_what_collect_here_yields(ray_cluster, tasks):
    here = by_key(gather(OraclePolicy, tasks, 2, RealBackend()))
    there = by_key(gather(OraclePolicy, tasks, 2, RealBackend(), runner=make_runner("ray")))
    assert {k: (s.reward, s.backend, s.trajectory.patch) for k, s in there.items()} == \
        {k: (s.reward, s.backend, s.trajectory.patch) for k, s in here.items()}
    sim = make_backend("sim", world=WorldConfig.from_options(urls=None, kind="embedded", dataset="demo"))
    simulated = gather(NoopPolicy, tasks[:1], 1, sim, runner=make_runner("ray"))  # a backend with locks travels
    assert [(s.backend, s.reward) for s in simulated] == [("sim", 0.0)]


def test_reward_function_scores_completions_trl_and_verl_style(tasks):
    reward = SWEReward(RealBackend(), tasks)
    fixed = tasks[0]
    completions = [f"The fix:\n```diff\n{fixed.patch}```\n", "I could not find the bug.", fixed.patch]
    assert reward([["prompt"]] * 3, completions, instance_id=[FIXED] * 3) == [1.0, 0.0, 1.0]
    assert reward.compute_score("sweworld", fixed.patch, FIXED) == 1.0
    assert reward.compute_score("sweworld", "", "unused", extra_info={"instance_id": FIXED}) == 0.0
    with pytest.raises(ValueError, match="instance_id"):
        reward(["p"], ["c"])


def test_reward_of_and_patch_of():
    assert reward_of({"resolved": True}) == 1.0 and reward_of({"resolved": False}) == 0.0
    assert reward_of({"resolved": True, "sim_probability": 0.625}) == 0.625
    assert reward_of({"resolved": False, "error_kind": "infra"}) is None and reward_of(None) is None
    diff = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    assert patch_of(diff) == diff and patch_of(f"Here:\n\n{diff}") == diff
    assert patch_of([{"role": "assistant", "content": f"```diff\n{diff}```"}]) == diff
    assert patch_of("no patch here") == ""
