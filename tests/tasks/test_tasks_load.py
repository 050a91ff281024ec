"""Loading SWE-bench-format files: every format, and every kind of bad row, from real files."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sweworld.core.errors import DatasetError
from sweworld.tasks import TaskSet, load_tasks, validate_rows


def row(n: int, **extra) -> dict:
    base = {
        "instance_id": f"owner__proj-{n}", "repo": "owner/proj", "base_commit": f"{n:040x}",
        "patch": "diff --git a/x.py b/x.py\n", "test_patch": "", "problem_statement": f"issue {n}",
        "hints_text": "", "created_at": "2024-01-01T00:00:00Z", "version": "1.0",
        "environment_setup_commit": f"{n:040x}",
        "FAIL_TO_PASS": json.dumps([f"tests/test_x.py::test_{n}"]), "PASS_TO_PASS": "[]",
    }
    base.update(extra)
    return base


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_jsonl_loads_and_ignores_blank_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(row(1)) + "\n\n   \n" + json.dumps(row(2)) + "\n")
    ts = load_tasks(path)
    assert isinstance(ts, TaskSet)
    assert ts.ids == ["owner__proj-1", "owner__proj-2"]
    assert ts.errors == []
    assert ts.source == str(path)
    assert ts.by_id("owner__proj-2").FAIL_TO_PASS == ["tests/test_x.py::test_2"]
    assert len(ts) == 2 and [t.instance_id for t in ts] == ts.ids
    assert "owner__proj-1" in ts and "nope" not in ts
    with pytest.raises(KeyError, match="nope"):
        ts.by_id("nope")


def test_json_list_single_object_and_instances_wrapper(tmp_path):
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([row(1), row(2, FAIL_TO_PASS=["a", "b"])], indent=2))
    ts = load_tasks(listed)
    assert ts.ids == ["owner__proj-1", "owner__proj-2"]
    assert ts.by_id("owner__proj-2").FAIL_TO_PASS == ["a", "b"]

    single = tmp_path / "one.json"
    single.write_text(json.dumps(row(7)))
    assert load_tasks(single).ids == ["owner__proj-7"]

    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"instances": [row(3), row(4)]}))
    assert load_tasks(str(wrapped)).ids == ["owner__proj-3", "owner__proj-4"]


def test_parquet_written_by_plain_pyarrow_loads(tmp_path):
    path = tmp_path / "hub.parquet"
    pq.write_table(pa.Table.from_pylist([row(1), row(2)]), path)
    ts = load_tasks(path)
    assert ts.ids == ["owner__proj-1", "owner__proj-2"]
    assert ts.by_id("owner__proj-1").base_commit == f"{1:040x}"


def test_invalid_json_line_is_located(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(1), '{"instance_id": "owner__proj-2", "repo": ', row(3)])
    with pytest.raises(DatasetError) as info:
        load_tasks(path)
    err = info.value
    assert err.where == f"{path}:2 (instance_id=owner__proj-2)"
    assert "invalid JSON" in err.message
    assert "skip_invalid" in err.hint
    assert f"{path}:2" in str(err)


def test_missing_required_field_names_field_line_and_id(tmp_path):
    bad = row(2)
    del bad["base_commit"]
    path = write_jsonl(tmp_path / "d.jsonl", [row(1), bad])
    with pytest.raises(DatasetError) as info:
        load_tasks(path)
    err = info.value
    assert err.where == f"{path}:2 (instance_id=owner__proj-2)"
    assert "missing required field 'base_commit'" in err.message
    assert "base_commit" in err.hint


def test_missing_instance_id_is_located_without_id(tmp_path):
    bad = row(2)
    del bad["instance_id"]
    path = write_jsonl(tmp_path / "d.jsonl", [bad])
    with pytest.raises(DatasetError) as info:
        load_tasks(path)
    assert info.value.where == f"{path}:1"
    assert "'instance_id'" in info.value.message


def test_wrong_type_names_field_and_value(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(1), row(2), row(3, FAIL_TO_PASS=3)])
    with pytest.raises(DatasetError) as info:
        load_tasks(path)
    err = info.value
    assert err.where == f"{path}:3 (instance_id=owner__proj-3)"
    assert "FAIL_TO_PASS" in err.message and "got 3" in err.message
    assert "list[str]" in err.hint


def test_json_file_rows_are_located_at_their_first_line(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps([row(1), row(2, PASS_TO_PASS=[1, 2])], indent=2))
    expected_line = path.read_text().splitlines().index("  {", 2) + 1
    with pytest.raises(DatasetError) as info:
        load_tasks(path)
    assert info.value.where == f"{path}:{expected_line} (instance_id=owner__proj-2)"
    assert "PASS_TO_PASS" in info.value.message


def test_broken_json_document_raises_with_line(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('[\n  {"instance_id": "a"},\n  {"instance_id": \n]\n')
    with pytest.raises(DatasetError) as info:
        load_tasks(path, skip_invalid=True)
    assert info.value.where == f"{path}:4"
    assert "invalid JSON" in info.value.message


def test_duplicate_ids_name_both_locations(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(1), row(2), row(1, problem_statement="again")])
    with pytest.raises(DatasetError) as info:
        load_tasks(path)
    message = info.value.message
    assert "duplicate instance_id 'owner__proj-1'" in message
    assert f"{path}:1" in message and f"{path}:3" in message

    ts = load_tasks(path, skip_invalid=True)
    assert ts.ids == ["owner__proj-1", "owner__proj-2"]
    assert ts.by_id("owner__proj-1").problem_statement == "issue 1"
    assert len(ts.errors) == 1


def test_first_error_counts_the_others(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(1), "not json", row(3, repo=""), row(4, FAIL_TO_PASS=5)])
    with pytest.raises(DatasetError) as info:
        load_tasks(path)
    assert info.value.where == f"{path}:2"
    assert "2 more invalid rows" in info.value.message
    assert [e.where.split(" ")[0] for e in info.value.errors] == [f"{path}:2", f"{path}:3", f"{path}:4"]


def test_skip_invalid_keeps_going_and_counts(tmp_path):
    no_repo = row(4)
    del no_repo["repo"]
    rows = [row(1), "{oops", row(2), row(3, PASS_TO_PASS={"a": 1}), no_repo, "[1, 2]", row(5), row(2)]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    ts = load_tasks(path, skip_invalid=True)
    assert ts.ids == ["owner__proj-1", "owner__proj-2", "owner__proj-5"]
    assert len(ts.errors) == 5
    assert all(isinstance(e, DatasetError) for e in ts.errors)
    assert [e.where.split(" ")[0] for e in ts.errors] == [f"{path}:{n}" for n in (2, 4, 5, 6, 8)]
    assert "expected a JSON object" in ts.errors[3].message
    assert ts.summary().endswith("3 tasks loaded from " + str(path) + "; 5 invalid rows skipped")


def test_instance_ids_filter_keeps_source_order(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(n) for n in range(1, 6)])
    ts = load_tasks(path, instance_ids=["owner__proj-4", "owner__proj-2"])
    assert ts.ids == ["owner__proj-2", "owner__proj-4"]


def test_instance_ids_filter_ignores_bad_rows_of_other_instances(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(1), row(2, FAIL_TO_PASS=3), row(3)])
    assert load_tasks(path, instance_ids=["owner__proj-3"]).ids == ["owner__proj-3"]


def test_instance_ids_unknown_are_listed(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(1), row(2)])
    with pytest.raises(DatasetError) as info:
        load_tasks(path, instance_ids=["owner__proj-2", "ghost-1", "ghost-2"])
    assert "2 instance ids not found" in info.value.message
    assert "ghost-1" in info.value.message and "ghost-2" in info.value.message
    assert "owner__proj-2" not in info.value.message


def test_parquet_bad_row_is_located_by_row_number(tmp_path):
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist([row(1), row(2, base_commit=None)]), path)
    with pytest.raises(DatasetError) as info:
        load_tasks(path)
    assert info.value.where == f"{path}[row 1] (instance_id=owner__proj-2)"
    assert "base_commit" in info.value.message


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(DatasetError, match="file not found"):
        load_tasks(tmp_path / "absent.jsonl")
    other = tmp_path / "d.csv"
    other.write_text("instance_id\n")
    with pytest.raises(DatasetError, match=r"unsupported dataset format '\.csv'"):
        load_tasks(other)
    with pytest.raises(DatasetError, match="not a dataset written by save_to_disk"):
        load_tasks(tmp_path)


def test_validate_rows_locates_by_index():
    ts = validate_rows([row(1), {"instance_id": "x"}], source="synth", skip_invalid=True)
    assert ts.ids == ["owner__proj-1"]
    assert ts.errors[0].where == "synth[1] (instance_id=x)"
    assert "missing required field 'repo'" in ts.errors[0].message
