"""An instance whose base tree cannot be built is one infrastructure error, with its cause, counted
alike everywhere (issue 20): the printed summary line, the run summary JSON, each instance's
``sweworld_report.json`` and the printed list of causes, for real and sim evaluations, of non-empty
and empty predictions (an empty patch used to be counted as 'empty patch' while listed as failed)."""

from __future__ import annotations

import json
import re

import pytest
from badinput import invoke, row, write_jsonl
from tests.conftest import git, make_git_tree

pytestmark = pytest.mark.bwrap

NO_BLOB, NO_COMMIT = "org__repo-1", "org__repo-2"


@pytest.fixture
def broken(tmp_path):
    """A repository whose history lacks a blob (its object file deleted), and a commit it does not hold."""
    tree, commit = make_git_tree(tmp_path / "repo", {"README": "hello\n", "mod.py": "def f():\n    return 1\n"})
    blob = git(tree, "rev-parse", "HEAD:mod.py")
    (tree / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    rows = [row(NO_BLOB, str(tree), base_commit=commit), row(NO_COMMIT, str(tree), base_commit="1" * 40)]
    return write_jsonl(tmp_path / "data.jsonl", rows), blob


def empty_predictions(path):
    path.write_text(json.dumps([{"instance_id": i, "model_name_or_path": "empty", "model_patch": ""}
                                for i in (NO_BLOB, NO_COMMIT)]))
    return path


@pytest.mark.parametrize("predictions", ["gold", "empty"])
@pytest.mark.parametrize("backend", [("--backend", "real"), ("--backend", "sim", "--world", "embedded")])
def test_an_unbuildable_base_tree_is_one_infrastructure_error_counted_alike(tmp_path, broken, backend,
                                                                            predictions):
    data, blob = broken
    preds = "gold" if predictions == "gold" else empty_predictions(tmp_path / "preds.json")
    out = tmp_path / "out"
    result = invoke("eval", "-d", data, "-p", preds, *backend, "--out", out, "--logs-dir", out / "logs")
    assert isinstance(result.exception, SystemExit), repr(result.exception)  # no crash: reported errors
    assert result.exit_code == 1, result.output  # every instance failed for the infrastructure
    summary = json.loads((out / f"{predictions}.sweworld.json").read_text())
    assert summary["infra_error_ids"] == summary["error_ids"] == [NO_BLOB, NO_COMMIT]
    assert summary["empty_patch_instances"] == summary["completed_instances"] == 0
    assert "empty patch 0  errors 2 (infrastructure 2)" in result.output
    extras = {i: json.loads((out / "logs/run_evaluation/sweworld" / predictions / i / "sweworld_report.json")
                            .read_text()) for i in (NO_BLOB, NO_COMMIT)}
    assert {i for i, r in extras.items() if r["error_kind"] == "infra"} == set(summary["infra_error_ids"])
    assert blob in extras[NO_BLOB]["error"] and "commit not found" in extras[NO_COMMIT]["error"]
    listed = result.output.split("infrastructure failures (not the model's", 1)[1]
    assert set(re.findall(r"\[1: (\S+)\]", listed)) == set(summary["infra_error_ids"])
    cause = {i: next(line for line in listed.splitlines() if f"[1: {i}]" in line) for i in (NO_BLOB, NO_COMMIT)}
    assert "RepoError" in cause[NO_BLOB] and blob in cause[NO_BLOB], result.output  # the missing object
    assert "RepoError: commit not found" in cause[NO_COMMIT], result.output
