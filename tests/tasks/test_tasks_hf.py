"""Hugging Face ``datasets`` sources: save_to_disk directories, and the hub when it is unreachable."""

from __future__ import annotations

import json

import pytest

from sweworld.core.errors import DatasetError
from sweworld.tasks import dump_row, load_tasks, save_tasks

datasets = pytest.importorskip("datasets")


def row(n: int) -> dict:
    return {"instance_id": f"o__p-{n}", "repo": "o/p", "base_commit": f"{n:040x}", "version": "0.1",
            "FAIL_TO_PASS": json.dumps([f"t{n}"]), "PASS_TO_PASS": "[]", "difficulty": f"level {n}"}


def test_dataset_dict_directory_picks_test_split(tmp_path):
    saved = tmp_path / "dd"
    datasets.DatasetDict({
        "train": datasets.Dataset.from_list([row(1)]),
        "test": datasets.Dataset.from_list([row(2), row(3)]),
    }).save_to_disk(str(saved))
    ts = load_tasks(saved)
    assert ts.split == "test"
    assert ts.ids == ["o__p-2", "o__p-3"]
    assert load_tasks(saved, split="train").ids == ["o__p-1"]
    with pytest.raises(DatasetError, match="no split 'dev'; available splits: train, test"):
        load_tasks(saved, split="dev")


def test_only_split_is_default_and_round_trip(tmp_path):
    saved = tmp_path / "dd"
    datasets.DatasetDict({"lite": datasets.Dataset.from_list([row(1), row(2)])}).save_to_disk(str(saved))
    ts = load_tasks(str(saved))
    assert ts.split == "lite"
    assert dump_row(ts[0])["FAIL_TO_PASS"] == '["t1"]'
    again = load_tasks(save_tasks(ts, tmp_path / "lite.jsonl"))
    assert [dump_row(t) for t in again] == [dump_row(t) for t in ts]
    assert again.by_id("o__p-2").model_extra["difficulty"] == "level 2"


def test_single_dataset_directory_and_located_bad_row(tmp_path):
    bad = row(2)
    bad["FAIL_TO_PASS"] = "[not json"
    saved = tmp_path / "ds"
    datasets.Dataset.from_list([row(1), bad]).save_to_disk(str(saved))
    ts = load_tasks(saved, skip_invalid=True)
    assert ts.ids == ["o__p-1"] and ts.split is None
    assert ts.errors[0].where == f"{saved}[row 1] (instance_id=o__p-2)"
    assert "FAIL_TO_PASS" in ts.errors[0].message


def test_several_splits_without_test_need_a_choice(tmp_path):
    saved = tmp_path / "dd"
    datasets.DatasetDict({"a": datasets.Dataset.from_list([row(1)]),
                          "b": datasets.Dataset.from_list([row(2)])}).save_to_disk(str(saved))
    with pytest.raises(DatasetError, match="several splits"):
        load_tasks(saved)


def test_unreachable_hub_gives_clear_error(tmp_path, monkeypatch):
    import huggingface_hub.constants

    # datasets and huggingface_hub read HF_HUB_OFFLINE at import time: set the variable and their copies
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.chdir(tmp_path)  # so the name cannot resolve to a local path
    name = "sweworld-tests/not-cached-anywhere"
    with pytest.raises(DatasetError) as info:
        load_tasks(name, split="test")
    err = info.value
    assert err.where == name
    assert "cannot reach the Hugging Face hub" in err.message
    assert "download" in err.hint and "path" in err.hint
