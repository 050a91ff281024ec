"""Nothing to do is an error, and no prediction is dropped silently (issue 10, item 8): an empty
dataset, an ``--instance-ids`` filter that selects nothing, or predictions none of which is for an
instance of the dataset exit 2 and list the ids; a prediction for an unknown instance is named on
the console and counted as submitted."""

from __future__ import annotations

import json

import pytest
from badinput import dataset, invoke, write_jsonl


@pytest.mark.parametrize("command", ["eval", "validate", "rollout"])
def test_an_empty_dataset_is_an_error_and_writes_no_summary(tmp_path, command):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = invoke(command, "-d", empty, "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert f"error: {empty}: nothing to do: no valid instance in it" in result.output
    assert not (tmp_path / "out").exists() and not list(tmp_path.rglob("unknown.*"))


def test_an_instance_filter_that_selects_nothing_is_an_error(tmp_path):
    result = invoke("eval", "-d", dataset(tmp_path), "-i", ",", "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "the --instance-ids filter selects none" in result.output
    assert not (tmp_path / "out").exists()


def predictions(tmp_path, ids) -> str:
    rows = [{"instance_id": i, "model_name_or_path": "org/model", "model_patch": "x"} for i in ids]
    return str(write_jsonl(tmp_path / "preds.jsonl", rows))


def test_predictions_for_no_instance_of_the_dataset_are_an_error_listing_ten_ids(tmp_path):
    ids = [f"other__repo-{n:02d}" for n in range(12)]
    result = invoke("eval", "-d", dataset(tmp_path), "-p", predictions(tmp_path, ids), "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "none of the 12 predictions is for an instance of the dataset" in result.output
    assert ", ".join(ids[:10]) + " ... (2 more)" in result.output and ids[10] not in result.output
    assert not (tmp_path / "out").exists()


def test_an_empty_predictions_file_is_an_error(tmp_path):
    result = invoke("eval", "-d", dataset(tmp_path), "-p", predictions(tmp_path, []), "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "no prediction in the file" in result.output


def test_a_prediction_for_an_unknown_instance_is_named_and_counted_as_submitted(tmp_path):
    preds = predictions(tmp_path, ["org__repo-1", "stray__repo-9"])
    out = tmp_path / "out"
    result = invoke("eval", "-d", dataset(tmp_path), "-p", preds, "--out", out, "--logs-dir", out / "logs")
    assert "1 prediction(s) for instances not in the dataset" in result.output
    assert "stray__repo-9" in result.output
    summary = json.loads((out / "org__model.sweworld.json").read_text())
    assert summary["submitted_ids"] == ["org__repo-1", "stray__repo-9"] and summary["total_instances"] == 1
