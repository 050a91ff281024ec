"""Best-of-n: the exact best@k against brute force; best@k <= pass@k; the oracle reaches pass@k; a
constant verifier gives the mean resolve rate; the pick's tie-breaks; verifiers by name; the section."""

from __future__ import annotations

import itertools
import random

import pytest

from sweworld.core.errors import ConfigError
from sweworld.htmlreport import render_html
from sweworld.htmlreport.model import Report
from sweworld.trajectory import Step, Trajectory
from sweworld.verify import (
    Scored,
    Selection,
    SWRVerifier,
    best_at_k,
    bestofn_section,
    create_verifier,
    pick,
    predictions,
    select,
)


def traj(iid, sample, reward, steps=2, patch="diff", failed=False):
    return Trajectory(instance_id=iid, sample=sample, reward=reward, patch=patch or "",
                      exit_status="error" if failed else "submitted",
                      steps=[Step(index=i, tool="execute_bash") for i in range(steps)])


class Constant:
    name = "constant"

    def score(self, task, trajectory):
        return 0.5


class ByPatch:
    """Scores read from the patch text, to script a verifier."""
    name = "scripted"

    def score(self, task, trajectory):
        return float(trajectory.patch)


def brute_force(scores, rewards, k):
    """Average over k-subsets of the mean reward of the subset's top-scored samples (random tie-break)."""
    values = []
    for subset in itertools.combinations(range(len(scores)), k):
        top = max(scores[i] for i in subset)
        tied = [rewards[i] for i in subset if scores[i] == top]
        values.append(sum(tied) / len(tied))
    return sum(values) / len(values)


@pytest.mark.parametrize("seed", range(8))
def test_best_at_k_matches_brute_force(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 7)
    scores = [rng.choice([0.1, 0.4, 0.4, 0.9]) for _ in range(n)]
    rewards = [float(rng.random() < 0.5) for _ in range(n)]
    for k in range(1, n + 1):
        assert best_at_k(scores, rewards, k) == pytest.approx(brute_force(scores, rewards, k))


def test_best_at_k_needs_enough_samples():
    with pytest.raises(ValueError):
        best_at_k([0.1], [1.0], 2)


def runs(seed=0, instances=6, n=5):
    rng = random.Random(seed)
    return [("run", traj(f"i{i}", s, float(rng.random() < 0.4), steps=rng.randint(1, 5),
                         patch=f"{rng.random():.3f}")) for i in range(instances) for s in range(n)]


@pytest.mark.parametrize("seed", range(4))
def test_best_never_above_pass_and_bounds(seed):
    found = runs(seed)
    for verifier in (ByPatch(), create_verifier("random", seed=seed), create_verifier("oracle"), Constant()):
        result = select(found, verifier)
        assert set(result.best_at) == set(result.pass_at) == {1, 2, 3, 4, 5}
        for k in result.pass_at:
            assert result.best_at[k] <= result.pass_at[k] + 1e-12
        assert result.best_at[1] == pytest.approx(result.pass_at[1])
    oracle = select(found, create_verifier("oracle"))
    assert oracle.best_at == pytest.approx(oracle.pass_at)
    constant = select(found, Constant())
    assert all(v == pytest.approx(constant.mean_resolve, abs=1e-4) for v in constant.best_at.values())


def test_pick_ties_and_failed_samples_excluded():
    found = [("r", traj("a", 0, 0.0, steps=4, patch="0.9")), ("r", traj("a", 1, 1.0, steps=2, patch="0.9")),
             ("r", traj("a", 2, 1.0, steps=2, patch="0.9")), ("r", traj("a", 3, 1.0, patch="0.99", failed=True)),
             ("r", traj("b", 0, 0.0, patch="0.2")), ("r", traj("b", 1, 1.0, patch="0.1"))]
    result = select(found, ByPatch())
    assert result.failed == 1 and result.samples == 5 and result.instances == 2
    assert result.picks["a"].trajectory.sample == 1 and result.picks["b"].trajectory.sample == 0
    assert result.selected_resolve == 0.5 and set(result.pass_at) == {1, 2}
    rows = predictions(result)
    assert rows == [{"instance_id": "a", "model_name_or_path": "best-of-n-scripted", "model_patch": "0.9"},
                    {"instance_id": "b", "model_name_or_path": "best-of-n-scripted", "model_patch": "0.2"}]
    assert pick([Scored(trajectory=traj("c", 5, 0.0), score=1.0), Scored(trajectory=traj("c", 2, 0.0), score=1.0)
                 ]).trajectory.sample == 2


def test_no_outcome_gives_an_empty_selection():
    result = select([("r", traj("a", 0, None, failed=True))], create_verifier("oracle"))
    assert result.instances == 0 and result.failed == 1 and result.best_at == {}


def test_random_verifier_is_seeded():
    t = traj("a", 3, 0.0)
    assert create_verifier("random", seed=1).score(None, t) == create_verifier("random", seed=1).score(None, t)
    assert create_verifier("random", seed=1).score(None, t) != create_verifier("random", seed=2).score(None, t)


def test_unknown_verifier_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown verifier 'nope'") as info:
        create_verifier("nope")
    assert "oracle, random, swr" in info.value.hint


def test_an_option_the_verifier_does_not_take_is_an_error_naming_both():
    with pytest.raises(ConfigError, match="the oracle verifier does not take 'seed'") as info:
        create_verifier("oracle", seed=0)
    assert info.value.hint == "it takes no options"
    with pytest.raises(ConfigError, match="the swr verifier does not take 'votes'") as info:
        create_verifier("swr", swr=object(), votes=3)
    assert info.value.hint == "it takes swr, repos_dir"
    with pytest.raises(ConfigError, match=r"hybrid verifier \(base random\) does not take 'votes'") as info:
        create_verifier("hybrid", base="random", votes=3)
    assert "seed" in info.value.hint and "log_dir" in info.value.hint


def test_the_hybrid_verifier_gives_each_of_its_verifiers_the_options_it_takes(tmp_path):
    hybrid = create_verifier("hybrid", base="random", seed=7, backend=object(), log_dir=str(tmp_path))
    assert hybrid.base.seed == 7 and hybrid.tests.log_dir == tmp_path


class FakeSWR:
    def __init__(self):
        self.calls = 0

    def evaluate_context(self, task, patch):
        self.calls += 1
        return type("Report", (), {"sim_probability": 0.75})()


def test_swr_verifier_caches_per_patch_and_needs_the_task():
    swr = FakeSWR()
    verifier = create_verifier("swr", swr=swr)
    assert isinstance(verifier, SWRVerifier)
    task = object()
    assert verifier.score(task, traj("a", 0, 0.0)) == 0.75 and verifier.score(task, traj("a", 1, 0.0)) == 0.75
    assert verifier.score(task, traj("a", 2, 0.0, patch="")) == 0.0 and swr.calls == 1
    with pytest.raises(ConfigError, match="needs the task"):
        verifier.score(None, traj("b", 0, 0.0))


def test_section_renders_the_curve():
    section = bestofn_section(select(runs(), ByPatch()))
    assert section.table.columns == ["k", "pass@k", "best@k", "gap"] and len(section.table.rows) == 5
    assert section.chart.categories == [f"k={k}" for k in range(1, 6)]
    assert "best@k (scripted)" in section.chart.series
    html = render_html(Report(title="t", sections=[section]))
    assert "pass@k vs best@k" in html and "<svg" in html
    assert bestofn_section(Selection(verifier="x")).table.rows == []
