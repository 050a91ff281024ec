"""perturb and explorer-perturb rolled out for real (bubblewrap sandboxes, the real harness) on two
instances of the demo dataset: p = 0.5 over 4 samples gives both labels, and the labels are the
harness's; explorer-perturb makes perturb's draws (the same patches, the same labels) after running
the failing tests and a reproduction script that fail for real."""

from __future__ import annotations

from functools import partial

import pytest

from sweworld.agents.config import load_agent_config
from sweworld.agents.explorer import SCRIPT, ExplorerPolicy
from sweworld.agents.perturb import KINDS, PerturbPolicy, perturb_kind
from sweworld.backends.real import RealBackend
from sweworld.core.config import RolloutConfig, RunnerConfig
from sweworld.datasets import path_of
from sweworld.runs.rollout import run_rollouts
from sweworld.runs.store import TrajectoryStore
from sweworld.synth import mutations_for_file
from sweworld.tasks import load_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.network]
IDS = ("more-itertools__first-default", "more-itertools__first-and-ilen")
SAMPLES = 4


@pytest.fixture(scope="module")
def tasks():
    return [t for t in load_tasks(path_of("demo")) if t.instance_id in IDS]


def roll(tasks, make, out):
    run_rollouts(tasks, make, RolloutConfig(out=out, n_samples=SAMPLES, runner=RunnerConfig(workers=4)),
                 agent=load_agent_config(), backend=RealBackend())
    return {t.key: t for t in TrajectoryStore(out / "trajectories.jsonl").load()}


@pytest.fixture(scope="module")
def perturbed(tasks, tmp_path_factory):
    return roll(tasks, partial(PerturbPolicy, p=0.5, mutate=mutations_for_file), tmp_path_factory.mktemp("perturb"))


def test_perturb_gives_both_real_labels(tasks, perturbed):
    assert len(perturbed) == len(IDS) * SAMPLES and not any(t.failed for t in perturbed.values())
    assert {t.reward for t in perturbed.values()} == {0.0, 1.0}
    for traj in perturbed.values():
        assert perturb_kind(s.thought for s in traj.steps) in KINDS
        assert traj.report is not None and traj.report["resolved"] == (traj.reward == 1.0)


def test_explorer_perturb_draws_like_perturb_after_real_failing_runs(tasks, perturbed, tmp_path):
    explored = roll(tasks, partial(ExplorerPolicy, fix="perturb", mutate=mutations_for_file), tmp_path)
    assert {k: (t.patch, t.reward) for k, t in explored.items()} == {k: (t.patch, t.reward)
                                                                     for k, t in perturbed.items()}
    for traj in explored.values():
        runs = [s for s in traj.steps if s.tool == "execute_bash"]
        repro = [s for s in runs if s.arguments["command"].endswith(f"python {SCRIPT}")]
        tests = [s for s in runs if "python -m pytest" in s.arguments["command"]]
        assert repro[0].exit_code == 1 and "FAIL tests/test_more.py::FirstTests::test_empty" in repro[0].observation
        assert "failed" in tests[0].observation
        if traj.reward == 1.0:
            assert repro[-1].exit_code == 0 and "0 failing" in repro[-1].observation
