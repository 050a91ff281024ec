"""``seam.grade``, the one place a patch becomes a verdict and a reward, on the demo's real instances:
one meaning of reward on the real and sim backends, logs kept or removed, no outcome said as such."""

from __future__ import annotations

import json
import tempfile

import pytest

from raycluster import EMPTY, FIXED, demo_tasks
from sweworld.backends import make_backend
from sweworld.seam import grade, reward_of
from sweworld.world.config import WorldConfig

pytestmark = [pytest.mark.bwrap, pytest.mark.network]


@pytest.fixture(scope="module")
def tasks():
    return {t.instance_id: t for t in demo_tasks()}


@pytest.fixture(scope="module")
def real():
    return make_backend("real")


@pytest.fixture(scope="module")
def sim():
    return make_backend("sim", world=WorldConfig.from_options(urls=None, kind="embedded", dataset="demo"))


def test_real_rewards_the_harness_verdict_and_keeps_the_logs_it_was_given(real, tasks, tmp_path):
    fixed = tasks[FIXED]
    graded = grade(real, fixed, fixed.patch, model="me", logs=tmp_path, name="fixed")
    assert (graded.reward, graded.resolved, graded.error, graded.failed) == (1.0, True, None, False)
    assert graded.log_dir == tmp_path / "fixed"
    saved = json.loads((tmp_path / "fixed" / "report.json").read_text())
    assert saved[FIXED]["resolved"] is True
    empty = grade(real, tasks[EMPTY], "", logs=tmp_path)
    assert (empty.reward, empty.resolved) == (0.0, False)
    assert empty.log_dir is not None and empty.log_dir.name.startswith(f"{EMPTY}.")


def test_sim_rewards_p_resolved_and_binary_asks_for_the_verdict(sim, tasks):
    fixed = tasks[FIXED]
    graded = grade(sim, fixed, fixed.patch)
    probability = graded.report.model_dump()["sim_probability"]
    assert graded.reward == probability and 0.0 < probability < 1.0 and graded.log_dir is None
    binary = grade(sim, fixed, fixed.patch, binary=True)
    assert binary.reward == (1.0 if binary.resolved else 0.0)
    assert reward_of(graded.report) == probability and reward_of(graded.report, binary=True) == binary.reward
    assert grade(sim, tasks[EMPTY], "").reward == 0.0


def test_without_logs_nothing_is_left_behind(real, tasks, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    graded = grade(real, tasks[EMPTY], "")
    assert graded.report is not None and graded.log_dir is None
    assert list(tmp_path.iterdir()) == []


def test_an_infrastructure_failure_has_no_outcome_and_says_why(real, tasks, tmp_path):
    broken = tasks[FIXED].model_copy(update={"base_commit": "0" * 40})  # no such commit: no environment
    graded = grade(real, broken, tasks[FIXED].patch, logs=tmp_path)
    assert graded.failed and graded.reward == 0.0 and graded.error.startswith("evaluation: ")
    assert graded.report is not None and graded.report.error_kind == "infra"
    assert reward_of(graded.report) is None
