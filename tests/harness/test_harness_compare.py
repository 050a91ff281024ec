"""Agreement with reference verdicts (``sweworld eval --compare-to``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweworld.core.errors import DatasetError
from sweworld.harness.compare import compare, load_verdicts


def test_reference_formats(tmp_path: Path) -> None:
    docker = tmp_path / "docker.json"
    docker.write_text(json.dumps({"a": {"gold_resolved": True, "sweagent_resolved": False},
                                  "b": {"gold_resolved": False, "sweagent_resolved": True}}))
    assert load_verdicts(str(docker), gold=True) == {"a": True, "b": False}
    assert load_verdicts(str(docker)) == {"a": False, "b": True}  # the one other *_resolved key
    assert load_verdicts(f"{docker}:gold_resolved") == {"a": True, "b": False}
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"resolved_ids": ["a"], "submitted_ids": ["a", "b"]}))
    assert load_verdicts(str(summary)) == {"a": True, "b": False}
    with pytest.raises(DatasetError, match="no key 'nope'"):
        load_verdicts(f"{docker}:nope")
    with pytest.raises(DatasetError, match="cannot read"):
        load_verdicts(str(tmp_path / "missing.json"))


def test_agreement_names_every_disagreement() -> None:
    result = compare({"a": True, "b": False, "c": None, "d": True, "x": True},
                     {"a": True, "b": True, "c": True, "d": False})
    assert (result.agree, result.reference_only, result.ours_only, result.not_graded) == (["a"], ["b"], ["d"], ["c"])
    line = result.line()
    assert "1/3" in line and "reference only: b" in line and "here only: d" in line and "not graded here: c" in line


def test_rows_of_the_dataset_carry_reference_verdicts() -> None:
    from sweworld.core.types import Task
    from sweworld.harness.compare import verdicts_from_tasks

    def task(i: str, **extra) -> Task:
        return Task(instance_id=i, repo="o/r", base_commit="c", **extra)
    rows = [task("a", gold_resolved=True, sweagent_resolved=False), task("b", gold_resolved=False,
                                                                          sweagent_resolved=True), task("c")]
    assert verdicts_from_tasks(rows, gold=True) == {"a": True, "b": False}
    assert verdicts_from_tasks(rows, gold=False) == {"a": False, "b": True}
    assert verdicts_from_tasks([task("c")], gold=True) is None
    ambiguous = [task("a", x_resolved=True, y_resolved=False)]
    assert verdicts_from_tasks(ambiguous, gold=False) is None
