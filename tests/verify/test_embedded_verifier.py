"""The embedded verifier: trajectory features (test runs read from their output, thoughts never
read), self-consistency agreement, training on labelled samples, the JSON round trip, best-of-n on
an instance it was not trained on, and the CLI (`sweworld verifier train`, `select --verifier embedded`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from realtasks import unified
from sweworld.core.errors import ConfigError, ModelError
from sweworld.core.types import Task
from sweworld.runs.store import TrajectoryStore
from sweworld.trajectory import Step, Trajectory
from sweworld.verify import create_verifier, select
from sweworld.verify.embedded import FEATURE_SETS, EmbeddedVerifier, VerifierModel, train_verifier
from sweworld.verify.features import (
    DIFF_FEATURES,
    REFERENCE_FEATURES,
    agreement,
    run_passed,
    trajectory_features,
)

PATH = "clamp/core.py"
FIXED = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n"
BUGGY = FIXED.replace("return hi", "return lo")
WRONG = [FIXED.replace("x < lo", "x <= lo").replace("return lo", "return lo + 1"), BUGGY.replace("x < lo", "x < lo - 1"),
         BUGGY + "\n# kept\n"]


def task(n: int) -> Task:
    return Task(instance_id=f"local__clamp-{n}", repo="local/clamp", base_commit="0" * 40,
                patch=unified(PATH, BUGGY, FIXED), problem_statement="clamp returns lo for x > hi",
                FAIL_TO_PASS=["tests/test_clamp.py::test_high"], PASS_TO_PASS=[])


def pytest_step(index: int, passed: bool) -> Step:
    summary = "1 passed in 0.01s" if passed else "FAILED tests/test_clamp.py::test_high\n1 failed in 0.01s"
    return Step(index=index, tool="execute_bash", arguments={"command": "python -m pytest -q tests | tail -n 5"},
                observation=summary + "\n[exit code: 0]", exit_code=0)


def sample(iid: str, n: int, text: str, reward: float, thought: str = "") -> Trajectory:
    steps = [Step(index=0, tool="str_replace_editor", arguments={"command": "view", "path": PATH}, observation=BUGGY),
             Step(index=1, tool="str_replace_editor", arguments={"command": "str_replace", "path": PATH},
                  thought=thought, observation="edited"),
             pytest_step(2, reward == 1.0), Step(index=3, tool="submit", observation="submitted")]
    return Trajectory(instance_id=iid, sample=n, reward=reward, patch=unified(PATH, BUGGY, text), steps=steps,
                      exit_status="submitted")


def samples(iid: str) -> list[tuple[str, Trajectory]]:
    texts = [(FIXED, 1.0), (WRONG[0], 0.0), (FIXED, 1.0), (WRONG[1], 0.0), (WRONG[2], 0.0), (FIXED, 1.0)]
    return [("run", sample(iid, i, text, reward)) for i, (text, reward) in enumerate(texts)]


def sources(task):
    return {PATH: BUGGY}.get


def test_trajectory_features_read_test_runs_not_thoughts():
    passed, failed = sample("a", 0, FIXED, 1.0, "perturb: gold"), sample("a", 1, FIXED, 0.0, "perturb: partial")
    f, g = trajectory_features(passed), trajectory_features(failed)
    assert f["passed_after_edit"] == 1 and f["last_test_passed"] == 1 and f["tested_after_edit"] == 1
    assert g["failed_after_edit"] == 1 and g["last_test_passed"] == 0
    assert {k: v for k, v in f.items() if "pass" not in k and "fail" not in k} == \
           {k: v for k, v in g.items() if "pass" not in k and "fail" not in k}
    assert f["edits"] > 0 and f["submitted"] == 1
    script = Step(index=0, tool="execute_bash", arguments={"command": "python reproduce.py"}, exit_code=1,
                  observation="Traceback (most recent call last):\nValueError")
    assert not run_passed(script) and run_passed(script.model_copy(update={"exit_code": 0, "observation": "ok"}))


def test_agreement_is_the_share_of_other_samples_with_the_same_change():
    found = [t for _, t in samples("a")] + [sample("b", 0, FIXED, 1.0)]
    shares = agreement([*found, Trajectory(instance_id="a", sample=9, patch="", exit_status="submitted")])
    assert shares[("a", 0)] == pytest.approx(2 / 6) and shares[("a", 1)] == 0.0 and shares[("a", 9)] == 0.0
    assert shares[("b", 0)] == 0.0
    same, elsewhere = sample("c", 0, FIXED, 1.0), sample("c", 1, FIXED, 1.0)  # the same lines at another place
    elsewhere.patch = same.patch.replace("@@ -2,5 +2,5 @@", "@@ -9,5 +9,5 @@")
    assert elsewhere.patch != same.patch
    assert agreement([same, elsewhere]) == {("c", 0): 0.0, ("c", 1): 0.0}
    assert agreement([same, sample("c", 2, FIXED, 1.0)]) == {("c", 0): 1.0, ("c", 2): 1.0}


def test_feature_sets():
    assert set(FEATURE_SETS["reference"]) - set(FEATURE_SETS["blind"]) == set(REFERENCE_FEATURES)
    assert set(DIFF_FEATURES) <= set(FEATURE_SETS["blind"]) and "lines_off_gold" not in FEATURE_SETS["blind"]


@pytest.mark.parametrize("feature_set", ["blind", "reference"])
def test_trained_verifier_picks_the_fix_on_an_unseen_instance(tmp_path, feature_set):
    train = [pair for n in range(3) for pair in samples(f"local__clamp-{n}")]
    tasks = {f"local__clamp-{n}": task(n) for n in range(4)}
    model = train_verifier(train, tasks, feature_set=feature_set, sources=sources)
    assert model.meta["examples"] == 18 and model.meta["resolved"] == 9 and model.meta["train_accuracy"] == 1.0
    loaded = VerifierModel.load(model.save(tmp_path / "m.json"))
    assert loaded == model and loaded.feature_set == feature_set
    verifier = EmbeddedVerifier(loaded, sources=sources)
    result = select(samples("local__clamp-3"), verifier, tasks)
    assert result.picks["local__clamp-3"].resolved and result.best_at == result.pass_at
    assert verifier.score(tasks["local__clamp-3"], Trajectory(instance_id="local__clamp-3", patch="")) == 0.0


def test_training_needs_both_classes_and_the_tasks():
    resolved = [("run", sample("local__clamp-0", i, FIXED, 1.0)) for i in range(3)]
    with pytest.raises(ModelError, match="with 1 class"):
        train_verifier(resolved, {"local__clamp-0": task(0)}, sources=sources)
    with pytest.raises(ConfigError, match="no task local__clamp-0"):
        train_verifier(resolved, {}, sources=sources)
    with pytest.raises(ConfigError, match="needs a trained model"):
        create_verifier("embedded")


def test_loading_something_else_is_a_model_error(tmp_path):
    (tmp_path / "swr.json").write_text(json.dumps({"format": "sweworld-swr-logistic/1"}))
    (tmp_path / "cut.json").write_text('{"format":"sweworld-verifier-logistic/1"}')
    with pytest.raises(ModelError, match="is not an embedded verifier model"):
        VerifierModel.load(tmp_path / "swr.json")
    with pytest.raises(ModelError, match="is damaged"):
        VerifierModel.load(tmp_path / "cut.json")
    with pytest.raises(ModelError, match="cannot read"):
        create_verifier("embedded", model=tmp_path / "missing.json")


def test_cli_trains_and_selects(tmp_path):
    from sweworld.datasets import path_of
    from sweworld.tasks import load_tasks

    real = list(load_tasks(path_of("default")))[:2]
    for t in real:
        store = TrajectoryStore(tmp_path / "runs" / "trajectories.jsonl")
        for i in range(4):
            good = i % 2 == 0
            patch = t.patch if good else t.patch.replace("\n+", "\n+# changed\n+", 1)
            store.append(Trajectory(instance_id=t.instance_id, sample=i, reward=float(good), patch=patch,
                                    exit_status="submitted", steps=[pytest_step(0, good)]))
    model, summary = tmp_path / "m.json", tmp_path / "sel.json"
    cli = [sys.executable, "-m", "sweworld.cli.app"]
    trained = subprocess.run([*cli, "verifier", "train", "--runs", str(tmp_path / "runs"), "--out", str(model)],
                             capture_output=True, text=True)
    assert trained.returncode == 0, trained.stderr
    assert "8 samples (4 resolved) of 2 instances" in trained.stdout
    assert json.loads(model.read_text())["format"] == "sweworld-verifier-logistic/1"
    chosen = subprocess.run([*cli, "select", "--runs", str(tmp_path / "runs"), "--verifier", "embedded",
                             "--verifier-model", str(model), "--json", str(summary)], capture_output=True, text=True)
    assert chosen.returncode == 0, chosen.stderr
    data = json.loads(summary.read_text())
    assert data["verifier"] == "embedded" and data["best_at"] == data["pass_at"]
    missing = subprocess.run([*cli, "select", "--runs", str(tmp_path / "runs"), "--verifier", "embedded"],
                             capture_output=True, text=True)
    assert missing.returncode != 0 and "needs a trained model" in missing.stdout + missing.stderr
