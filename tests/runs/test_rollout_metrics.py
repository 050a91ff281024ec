"""Metrics: the unbiased pass@k estimator and the SWE-Gym rates."""

from __future__ import annotations

import itertools
import json

import pytest

from sweworld.runs.metrics import pass_at_k, summarize
from sweworld.runs.store import TrajectoryStore
from sweworld.trajectory import Step, Trajectory


def brute_force(n: int, c: int, k: int) -> float:
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(outcomes[i] for i in subset) for subset in subsets) / len(subsets)


@pytest.mark.parametrize(("n", "c", "k"), [(5, 0, 1), (5, 1, 1), (5, 2, 3), (6, 3, 2), (4, 4, 4), (7, 1, 7)])
def test_pass_at_k_matches_brute_force(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(brute_force(n, c, k))


def test_pass_at_k_needs_enough_samples():
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def traj(iid, sample, reward, patch="diff", status="submitted", steps=2):
    return Trajectory(instance_id=iid, sample=sample, reward=reward, patch=patch, exit_status=status,
                      steps=[Step(index=i, tool="execute_bash") for i in range(steps)],
                      usage={"prompt_tokens": 10, "completion_tokens": 5})


def test_summary_rates_and_pass_at_k():
    runs = [traj("a", 0, 1.0), traj("a", 1, 0.0, patch=""), traj("b", 0, 0.0, status="stuck", steps=3),
            traj("b", 1, 0.0)]
    summary = summarize(runs)
    assert summary["resolve_rate"] == 0.25 and summary["empty_patch_rate"] == 0.25
    assert summary["stuck_rate"] == 0.25 and summary["mean_steps"] == 2.25 and summary["mean_tokens"] == 15
    assert summary["pass@1"] == 0.25 and summary["pass@2"] == 0.5
    assert summary["exit_status"] == {"stuck": 1, "submitted": 3}


def test_store_ignores_a_torn_last_line_and_keeps_every_record(tmp_path):
    path = tmp_path / "t.jsonl"
    store = TrajectoryStore(path)
    store.append(traj("a", 0, 1.0))
    with open(path, "a") as handle:
        handle.write(json.dumps(traj("a", 1, 0.0).model_dump())[:50])  # killed mid-write
    store = TrajectoryStore(path)
    assert store.done() == {("a", 0)}
    store.append(traj("a", 1, 0.0))
    assert sorted(store.done()) == [("a", 0), ("a", 1)]
    assert len(path.read_text().splitlines()) == 2
