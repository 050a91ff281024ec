"""The tests verifier (regression tests only, through a Backend) and R2E-Gym's hybrid rule."""

from __future__ import annotations

import pytest

from sweworld.trajectory import Trajectory
from sweworld.verify import create_verifier, select
from sweworld.verify.regression import HybridVerifier, TestsVerifier


def traj(iid, sample, patch, reward=0.0):
    return Trajectory(instance_id=iid, sample=sample, patch=patch, reward=reward, exit_status="submitted")


class ByPatch:
    """Scores read from the patch text: 'base score/regression share'."""

    def __init__(self, part):
        self.part, self.calls = part, []
        self.name = f"scripted-{part}"

    def score(self, task, trajectory):
        self.calls.append(trajectory.sample)
        return float(trajectory.patch.split("/")[self.part])


def test_hybrid_keeps_the_top_half_then_ranks_by_regression_tests():
    base, tests = ByPatch(0), ByPatch(1)
    patches = ["0.9/0.5", "0.8/1.0", "0.7/1.0", "0.6/0.2", "0.2/1.0", "0.1/1.0", "0.05/1.0", "0.0/1.0"]
    found = [("r", traj("a", i, p, reward=float(i == 2))) for i, p in enumerate(patches)]
    verifier = HybridVerifier(base, tests)
    result = select(found, verifier, {"a": None})
    assert verifier.name == "hybrid-scripted-0"
    assert sorted(tests.calls) == [0, 1, 2, 3]  # regression tests run for the kept half only
    assert result.picks["a"].trajectory.sample == 1  # kept, all regression tests pass, higher base score than 2
    order = sorted(range(8), key=lambda i: -verifier.score(None, found[i][1]))
    assert order == [1, 2, 0, 3, 4, 5, 6, 7]
    small = HybridVerifier(ByPatch(0), ByPatch(1))  # 3 samples or fewer: all kept (max(3, half))
    select([("r", traj("b", i, p)) for i, p in enumerate(["0.9/0.1", "0.5/0.9", "0.1/0.5"])], small, {"b": None})
    assert small.score(None, traj("b", 1, "0.5/0.9")) > small.score(None, traj("b", 2, "0.1/0.5")) > \
        small.score(None, traj("b", 0, "0.9/0.1"))


def test_hybrid_refuses_a_base_that_is_not_a_score():
    from sweworld.core.errors import ConfigError
    with pytest.raises(ConfigError, match="cannot rank by 'oracle'"):
        create_verifier("hybrid", base="oracle", backend=object())


@pytest.mark.slow
def test_tests_verifier_runs_only_the_regression_tests_for_real(tmp_path):
    from sweworld.datasets import path_of
    from sweworld.tasks import load_tasks

    task = next(iter(load_tasks(path_of("default"))))
    good = task.patch
    head = "    def __getitem__(self, key, cache_getitem=Cache.__getitem__):"
    bad = good.replace(f"\n {head}\n", f"\n-{head}\n+{head[:-2]}, broken=1 / 0):\n")  # fails at import: every test
    assert bad != good
    verifier = TestsVerifier(log_dir=tmp_path / "logs")
    assert verifier.score(task, traj(task.instance_id, 0, good)) == 1.0
    assert verifier.score(task, traj(task.instance_id, 1, bad)) == 0.0
    assert verifier.score(task, traj(task.instance_id, 2, "")) == 0.0
    assert verifier.score(task, traj(task.instance_id, 3, good)) == 1.0 and verifier.runs == 2  # cached
    reports = sorted((tmp_path / "logs").glob("*/report.json"))
    assert len(reports) == 2
    for report in reports:  # FAIL_TO_PASS is the label: never graded
        assert all(not v.get("tests_status", {}).get("FAIL_TO_PASS", {}).get("success") and
                   not v.get("tests_status", {}).get("FAIL_TO_PASS", {}).get("failure")
                   for v in __import__("json").loads(report.read_text()).values())
