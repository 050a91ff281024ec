"""Published verdicts (instance, patch, Docker's verdict) as evaluations: read with file:line errors,
trained on by `sweworld world train --verdicts --leave-repo-out`, on repositories the test builds."""

from __future__ import annotations

import json

import pytest
from tests.conftest import make_git_tree
from typer.testing import CliRunner

from realtasks import unified
from sweworld.cli.app import app
from sweworld.core.errors import DatasetError
from sweworld.core.types import Task
from sweworld.world.verdicts import verdict_traces

BUGGY = "def area(w, h):\n    return w + h\n"
FIXED = "def area(w, h):\n    return w * h\n"
TESTS = "from shapes import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"


def _world(tmp_path):
    """Three one-commit repositories with one instance each, and six published verdicts per repository."""
    tasks, rows = [], []
    for name in ("alpha", "beta", "gamma"):
        _, commit = make_git_tree(tmp_path / "repos" / f"local__{name}", {"shapes.py": BUGGY, "tests/test_shapes.py": "\n"})
        task = Task(instance_id=f"local__{name}-1", repo=f"local/{name}", base_commit=commit,
                    patch=unified("shapes.py", BUGGY, FIXED), test_patch=unified("tests/test_shapes.py", "\n", TESTS),
                    FAIL_TO_PASS=["tests/test_shapes.py::test_area"])
        tasks.append(task)
        wrong = [BUGGY.replace("w + h", "w - h"), BUGGY + "\n\ndef unused():\n    return 0\n", BUGGY.replace("w + h", "h + w + 0")]
        rows += [{"instance_id": task.instance_id, "model_name_or_path": "gold-like", "model_patch": task.patch,
                  "docker_resolved": True},
                 {"instance_id": task.instance_id, "model_name_or_path": "gold-like",
                  "model_patch": unified("shapes.py", BUGGY, FIXED.replace("w * h", "h * w")), "docker_resolved": True},
                 {"instance_id": task.instance_id, "model_name_or_path": "other", "model_patch": "", "docker_resolved": False}]
        rows += [{"instance_id": task.instance_id, "model_name_or_path": "other",
                  "model_patch": unified("shapes.py", BUGGY, w), "docker_resolved": False} for w in wrong]
    dataset = tmp_path / "tasks.json"
    dataset.write_text(json.dumps([t.model_dump() for t in tasks]))
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tasks, dataset, verdicts


def test_verdicts_are_evaluations_and_bad_rows_name_their_line(tmp_path):
    tasks, _, verdicts = _world(tmp_path)
    traces = verdict_traces(verdicts, tasks)
    assert len(traces) == 18 and sum(t.resolved for t in traces) == 6
    assert traces[0].agent == "gold-like" and traces[0].context.gold_patch == tasks[0].patch
    bad = tmp_path / "bad.jsonl"
    bad.write_text(verdicts.read_text().splitlines()[0] + "\n" + json.dumps({"instance_id": "nope", "resolved": True}) + "\n")
    with pytest.raises(DatasetError, match=r"bad\.jsonl:2: instance 'nope' is not in the dataset"):
        verdict_traces(bad, tasks)
    bad.write_text(json.dumps({"instance_id": tasks[0].instance_id, "model_patch": ""}) + "\n")
    with pytest.raises(DatasetError, match=r"bad\.jsonl:1: no verdict"):
        verdict_traces(bad, tasks)


def test_world_train_on_verdicts_leaving_each_repository_out(tmp_path):
    _, dataset, verdicts = _world(tmp_path)
    out, figures = tmp_path / "swr.json", tmp_path / "figures.json"
    done = CliRunner().invoke(app, ["world", "train", "--verdicts", str(verdicts), "-d", str(dataset),
                                    "--repos-dir", str(tmp_path / "repos"), "--leave-repo-out",
                                    "-o", str(out), "--json", str(figures)])
    assert done.exit_code == 0, done.output
    report = json.loads(figures.read_text())
    assert report["held_out"]["n"] == 18 and sorted(report["held_out_repos"]) == ["local/alpha", "local/beta", "local/gamma"]
    assert {"auc", "ece", "majority_accuracy"} <= set(report["held_out"]) and report["test_fraction"] is None
    model = json.loads(out.read_text())
    assert model["calibration"] and model["meta"]["evaluations"] == 18
    assert "held out: local/alpha, local/beta, local/gamma" in done.output
    refused = CliRunner().invoke(app, ["world", "train", "--verdicts", str(verdicts), "-o", str(out)])
    assert refused.exit_code != 0 and "--dataset" in refused.output
