"""``sweworld select`` end to end: runs pooled, predictions, JSON, the HTML report, the table."""

from __future__ import annotations

import json
import subprocess
import sys

from sweworld.runs.store import TrajectoryStore
from sweworld.trajectory import Trajectory


def write_run(directory, rows):
    store = TrajectoryStore(directory / "trajectories.jsonl")
    for iid, sample, reward, patch in rows:
        store.append(Trajectory(instance_id=iid, sample=sample, reward=reward, patch=patch, exit_status="submitted"))
    return directory


def test_select_writes_predictions_curve_and_report(tmp_path):
    first = write_run(tmp_path / "a", [("x", 0, 0.0, "bad-x"), ("x", 1, 1.0, "good-x"), ("y", 0, 0.0, "bad-y")])
    second = write_run(tmp_path / "b", [("y", 0, 0.0, "worse-y"), ("y", 1, 0.0, "bad-y2"), ("x", 2, 0.0, "bad-x2")])
    preds, summary, report = tmp_path / "preds.jsonl", tmp_path / "sel.json", tmp_path / "report"
    result = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "select", "--runs", str(first), str(second),
                             "--verifier", "oracle", "--out", str(preds), "--json", str(summary),
                             "--report", str(report)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in preds.read_text().splitlines()]
    assert [(r["instance_id"], r["model_name_or_path"]) for r in rows] == [("x", "best-of-n-oracle"),
                                                                          ("y", "best-of-n-oracle")]
    assert rows[0]["model_patch"] == "good-x"
    data = json.loads(summary.read_text())
    assert data["instances"] == 2 and data["samples"] == 6 and data["picks"]["x"]["resolved"] is True
    assert data["best_at"] == data["pass_at"] and set(data["pass_at"]) == {"1", "2", "3"}
    assert "pass@k vs best@k" in (report / "index.html").read_text()
    assert "best@k (oracle)" in result.stdout and "picks resolve 50.0%" in result.stdout


def test_select_rejects_an_unknown_verifier_and_a_missing_run(tmp_path):
    run = write_run(tmp_path / "a", [("x", 0, 1.0, "p")])
    for args in (["--runs", str(run), "--verifier", "nope"], ["--runs", str(tmp_path / "missing")]):
        result = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "select", *args],
                                capture_output=True, text=True)
        assert result.returncode == 2, result.stdout + result.stderr
