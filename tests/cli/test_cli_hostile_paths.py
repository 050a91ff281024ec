"""Names and paths from the input never write outside their place (issue 10, items 1, 2, 3, 7):
instance ids, run ids and model names are checked by one validator (``sweworld.core.names``); output
paths and the replay file are checked before any work, and nothing is created for a bad one."""

from __future__ import annotations

from pathlib import Path

import pytest
from badinput import dataset, flat, invoke, missing_source, row, write_jsonl

from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import NoopPolicy
from sweworld.core.config import EvalConfig, RolloutConfig
from sweworld.core.errors import DatasetError
from sweworld.core.types import Task
from sweworld.harness.predictions import Prediction
from sweworld.runs.eval import evaluate_run
from sweworld.runs.rollout import run_rollouts

ESCAPE = "../../ESCAPED"


def hostile_dataset(tmp_path: Path) -> Path:
    source = missing_source(tmp_path)
    rows = [row("org__repo-1", source), row(ESCAPE, source), row(str(tmp_path / "ABS"), source)]
    return write_jsonl(tmp_path / "data.jsonl", rows)


def escaped(tmp_path: Path) -> list[Path]:
    return [*tmp_path.rglob("ESCAPED*"), *tmp_path.rglob("ABS*")]


def test_eval_refuses_instance_ids_that_are_paths_and_skip_invalid_runs_the_others(tmp_path):
    data, logs = hostile_dataset(tmp_path), tmp_path / "run" / "logs"
    result = invoke("eval", "-d", data, "--logs-dir", logs, "--out", tmp_path / "run")
    assert result.exit_code == 2, result.output
    assert f"data.jsonl:2 (instance_id={ESCAPE})" in result.output and "cannot name a file" in result.output
    assert not logs.exists() and not escaped(tmp_path)
    skipped = invoke("eval", "-d", data, "--logs-dir", logs, "--out", tmp_path / "run", "--skip-invalid")
    assert "2 invalid rows skipped" in skipped.output, skipped.output
    assert (logs / "run_evaluation/sweworld/gold/org__repo-1/report.json").is_file()
    assert not escaped(tmp_path)


def test_rollout_refuses_instance_ids_that_are_paths(tmp_path):
    result = invoke("rollout", "-d", hostile_dataset(tmp_path), "--out", tmp_path / "out", "--no-eval")
    assert result.exit_code == 2, result.output
    assert "instance_id '../../ESCAPED' cannot name a file" in result.output
    assert not (tmp_path / "out").exists() and not escaped(tmp_path)


def test_evaluate_run_and_run_rollouts_refuse_a_task_whose_id_is_a_path(tmp_path):
    task = Task(instance_id=ESCAPE, repo="org/repo", base_commit="0" * 40, patch="x",
                repo_source=missing_source(tmp_path))
    preds = {ESCAPE: Prediction(instance_id=ESCAPE, model_patch="x")}
    with pytest.raises(DatasetError, match="cannot name a file"):
        evaluate_run([task], preds,
                     EvalConfig(run_id="r", logs_dir=tmp_path / "a" / "b" / "logs", out=tmp_path / "a" / "b"),
                     model="m")
    with pytest.raises(DatasetError, match="cannot name a file"):
        run_rollouts([task], NoopPolicy, RolloutConfig(out=tmp_path / "a" / "b" / "out"),
                     agent=load_agent_config())
    assert not escaped(tmp_path) and not (tmp_path / "a").exists()


def test_eval_refuses_a_model_name_that_is_no_directory_name(tmp_path):
    preds = write_jsonl(tmp_path / "preds.jsonl", [{"instance_id": "org__repo-1", "model_name_or_path": "..",
                                                   "model_patch": "x"}])
    logs = tmp_path / "run" / "logs"
    result = invoke("eval", "-d", dataset(tmp_path), "-p", preds, "--logs-dir", logs, "--out", tmp_path / "run")
    assert result.exit_code == 2, result.output
    assert "preds.jsonl:1" in result.output and "model_name_or_path '..'" in result.output
    assert not logs.exists()


@pytest.mark.parametrize("run_id", ["../../../X", "a/b", "..", "/abs"])
def test_eval_refuses_a_run_id_that_is_a_path(tmp_path, run_id):
    run = tmp_path / "deep" / "er" / "run"
    result = invoke("eval", "-d", dataset(tmp_path), "--run-id", run_id, "--logs-dir", run / "logs", "--out", run)
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--run-id'" in flat(result)
    assert not (tmp_path / "deep").exists() and not list(tmp_path.rglob("X*"))


@pytest.fixture
def a_file(tmp_path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("keep me\n")
    return path


OUTPUTS = [
    ("eval", "--out", "{file}"),
    ("eval", "--logs-dir", "{file}/logs"),
    ("validate", "--out", "{dir}"),
    ("validate", "--out", "{file}/validated.jsonl"),
    ("rollout", "--out", "{file}"),
    ("synth", "--repo", "{dir}/no-repo", "--out", "{dir}"),
    ("synth", "--repo", "{dir}/no-repo", "--out", "{dir}/x.jsonl", "--work", "{file}"),
    ("demo", "--out", "{file}/demo"),
]


@pytest.mark.parametrize("args", OUTPUTS, ids=[" ".join(a) for a in OUTPUTS])
def test_an_unusable_output_path_stops_the_command_before_any_work(tmp_path, monkeypatch, a_file, args):
    monkeypatch.chdir(tmp_path)  # default outputs land here, where the test looks
    filled = [a.format(file=a_file, dir=tmp_path) for a in args]
    data = [] if args[0] in ("synth", "demo") else ["-d", dataset(tmp_path)]
    option = next(a for a in reversed(args) if a.startswith("--") and a != "--repo")
    before = sorted(tmp_path.rglob("*"))
    result = invoke(*filled, *data)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in flat(result)
    assert sorted(tmp_path.rglob("*")) == before and a_file.read_text() == "keep me\n"


def test_rollout_replay_of_a_missing_file_says_so_and_creates_nothing(tmp_path):
    replay, out = tmp_path / "nodir" / "missing.jsonl", tmp_path / "deep" / "out"
    result = invoke("rollout", "-d", dataset(tmp_path), "--policy", "replay", "--replay", replay, "--out", out)
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--replay'" in flat(result) and "does not exist" in flat(result)
    assert "no stored trajectory" not in result.output
    assert not (tmp_path / "nodir").exists() and not (tmp_path / "deep").exists()
