"""Predictions files in every shape the agents write them: JSONL, a JSON list, an object keyed by
instance id, and SWE-agent's per-instance ``<instance_id>.pred`` (one prediction object)."""

from __future__ import annotations

import json

import pytest

from sweworld.core.errors import DatasetError
from sweworld.core.types import Task
from sweworld.harness.predictions import load_predictions

TASKS = [Task(instance_id="psf__requests-863", repo="psf/requests", base_commit="a" * 40)]
ONE = {"model_name_or_path": "sweagent", "instance_id": "psf__requests-863", "model_patch": "diff --git a/x b/x\n"}


def test_swe_agents_pred_file_of_one_instance_is_read(tmp_path):
    pred = tmp_path / "psf__requests-863.pred"
    pred.write_text(json.dumps(ONE))
    found = load_predictions(pred, TASKS)
    assert list(found) == ["psf__requests-863"] and found["psf__requests-863"].model_patch == ONE["model_patch"]


@pytest.mark.parametrize(("name", "text"), [
    ("p.jsonl", json.dumps(ONE) + "\n"),
    ("p.json", json.dumps([ONE])),
    ("p.json", json.dumps({"psf__requests-863": {k: v for k, v in ONE.items() if k != "instance_id"}})),
])
def test_the_other_shapes_still_read_the_same(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    assert load_predictions(tmp_path / name, TASKS)["psf__requests-863"].model_name_or_path == "sweagent"


def test_a_json_string_is_one_clear_error(tmp_path):
    (tmp_path / "p.pred").write_text(json.dumps("not a prediction"))
    with pytest.raises(DatasetError, match="one prediction object"):
        load_predictions(tmp_path / "p.pred", TASKS)
