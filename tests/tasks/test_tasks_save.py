"""Round trips through save_tasks/load_tasks: unknown fields, their types, list encodings."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sweworld.core.errors import DatasetError
from sweworld.core.types import Task
from sweworld.tasks import dump_row, load_tasks, save_tasks


def row(n: int, **extra) -> dict:
    base = {"instance_id": f"o__p-{n}", "repo": "o/p", "base_commit": f"{n:040x}",
            "problem_statement": f"issue {n}", "FAIL_TO_PASS": json.dumps([f"t{n}"]),
            "PASS_TO_PASS": json.dumps(["p1", "p2"])}
    base.update(extra)
    return base


ROWS = [
    row(1, meta={"difficulty": "easy", "tags": ["a", "b"]}, score=1, flag=True, note=None),
    # lists instead of JSON strings; 'score' a string here (mixed types across rows); 'meta' with
    # other keys; 'only_here' absent from the other rows; a float and a nested list of dicts
    row(2, FAIL_TO_PASS=["t2", "t3"], PASS_TO_PASS=[], meta={"other": 1.5}, score="high", flag=False,
        note=None, only_here=[{"x": 1}, {"y": [None, 2.5]}]),
    row(3, meta={"difficulty": "hard", "tags": []}, score=3, flag=True, note="n", pip_packages=["pytest<8"]),
]


def reload(tmp_path, name: str):
    src = tmp_path / "src.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    first = load_tasks(src)
    out = save_tasks(first, tmp_path / name)
    return first, load_tasks(out), out


@pytest.mark.parametrize("name", ["out.json", "out.jsonl", "out.parquet"])
def test_round_trip_keeps_values_unknown_fields_and_types(tmp_path, name):
    first, again, _ = reload(tmp_path, name)
    assert [dump_row(t) for t in again] == [dump_row(t) for t in first]
    for original, task in zip(ROWS, again, strict=True):
        dumped = dump_row(task)
        for key, value in original.items():
            assert dumped[key] == value, key
            assert type(dumped[key]) is type(value), key
    assert "only_here" not in dump_row(again[0])
    assert type(dump_row(again[1])["score"]) is str and type(dump_row(again[0])["score"]) is int


@pytest.mark.parametrize("name", ["out.json", "out.jsonl", "out.parquet"])
def test_list_encoding_is_kept_per_task(tmp_path, name):
    _, again, out = reload(tmp_path, name)
    assert again[0].FAIL_TO_PASS == ["t1"]
    assert dump_row(again[0])["FAIL_TO_PASS"] == '["t1"]'
    assert dump_row(again[0])["PASS_TO_PASS"] == '["p1", "p2"]'
    assert dump_row(again[1])["FAIL_TO_PASS"] == ["t2", "t3"]
    assert dump_row(again[2])["pip_packages"] == ["pytest<8"]
    if name == "out.jsonl":
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert lines[0]["FAIL_TO_PASS"] == '["t1"]' and lines[1]["FAIL_TO_PASS"] == ["t2", "t3"]


def test_parquet_keeps_uniform_columns_native(tmp_path):
    tasks = [Task(instance_id=f"i{n}", repo="r", base_commit="c", FAIL_TO_PASS=["a"], rank=n) for n in range(3)]
    out = save_tasks(tasks, tmp_path / "t.parquet")
    schema = pq.read_schema(out)
    assert pa.types.is_list(schema.field("FAIL_TO_PASS").type)
    assert pa.types.is_string(schema.field("FAIL_TO_PASS").type.value_type)
    assert pa.types.is_int64(schema.field("rank").type)
    assert json.loads(schema.metadata[b"sweworld.json_columns"]) == []
    assert [t.model_extra["rank"] for t in load_tasks(out)] == [0, 1, 2]


def test_dump_row_is_a_plain_swebench_row():
    task = Task(instance_id="i", repo="r", base_commit="c", custom={"a": [1]})
    dumped = dump_row(task)
    assert list(dumped)[:12] == ["instance_id", "repo", "base_commit", "patch", "test_patch",
                                 "problem_statement", "hints_text", "created_at", "version",
                                 "environment_setup_commit", "FAIL_TO_PASS", "PASS_TO_PASS"]
    assert "python" not in dumped and "test_cmd" not in dumped
    assert dumped["custom"] == {"a": [1]}
    dumped["custom"]["a"].append(2)
    assert task.model_extra["custom"] == {"a": [1]}


def test_empty_task_list_round_trips(tmp_path):
    for name in ("e.json", "e.jsonl", "e.parquet"):
        assert len(load_tasks(save_tasks([], tmp_path / name))) == 0


def test_unsupported_output_extension(tmp_path):
    with pytest.raises(DatasetError, match="unsupported output format"):
        save_tasks([], tmp_path / "out.csv")
