"""Verifier rows (SWE-Gym): labels from the real reward, classes balanced deterministically, the
trajectory or the diff as input, no scripted-policy marker, failed samples never; the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from data_trajectories import trajectory, write_run

from sweworld.core.errors import DatasetError
from sweworld.core.types import Task
from sweworld.data.verifier import VerifierOptions, export_verifier, trajectory_text
from sweworld.trajectory import Step


def task(iid):
    return Task(instance_id=iid, repo="o/r", base_commit="0" * 40, patch="", problem_statement=f"issue of {iid}")


def found():
    rows = [trajectory("a", i, reward=1.0) for i in range(2)] + [trajectory("a", i, reward=0.0) for i in range(2, 7)]
    rows.append(trajectory("b", 0, reward=None, exit_status="error", error_kind="infra"))
    return [("run", t) for t in rows]


def test_rows_are_balanced_labelled_and_deterministic():
    tasks = {"a": task("a"), "b": task("b")}
    rows, summary = export_verifier(found(), tasks)
    assert (summary.trajectories, summary.failed, summary.yes, summary.no) == (8, 1, 2, 5)
    assert summary.balanced_out == 3 and summary.rows == 4
    assert sorted(r["label"] for r in rows) == ["NO", "NO", "YES", "YES"]
    for row in rows:
        system, user, reply = row["messages"]
        assert (system["role"], user["role"], reply["role"]) == ("system", "user", "assistant")
        assert reply["content"] == ("YES" if row["reward"] == 1.0 else "NO") == row["label"]
        assert "issue of a" in user["content"] and "What the agent did" in user["content"]
    assert export_verifier(found(), tasks)[0] == rows
    everything, summary = export_verifier(found(), tasks, VerifierOptions(balance=False, input="diff", format="sharegpt"))
    assert summary.rows == 7 and summary.balanced_out == 0
    assert everything[0]["conversations"][-1] == {"from": "gpt", "value": "YES"}
    assert "What the agent did" not in everything[0]["conversations"][0]["value"]


def test_trajectory_text_cuts_long_observations_and_drops_the_policy_marker():
    t = trajectory("a", 0)
    t.steps = [Step(index=0, tool="execute_bash", arguments={"command": "cat f"}, observation="x" * 5000,
                    thought="perturb: wrong_place\nedit f.py")]
    text = trajectory_text(t, max_chars=200)
    assert "perturb" not in text and "Thought: edit f.py" in text and "characters cut" in text and len(text) < 600


def test_a_sample_without_its_task_is_an_error():
    with pytest.raises(DatasetError, match="no task a"):
        export_verifier(found(), {})


def test_cli(tmp_path):
    from sweworld.datasets import path_of
    from sweworld.tasks import load_tasks

    real = next(iter(load_tasks(path_of("default"))))
    run = write_run(tmp_path / "run", [trajectory(real.instance_id, i, reward=float(i < 3)) for i in range(5)])
    out = tmp_path / "verifier.jsonl"
    result = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "export", "verifier", "--runs", str(run),
                             "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4 and sorted(r["label"] for r in rows) == ["NO", "NO", "YES", "YES"]
    assert real.problem_statement.splitlines()[0] in rows[0]["messages"][1]["content"]
    summary = json.loads((tmp_path / "verifier.summary.json").read_text())
    assert summary["rows"] == 4 and summary["balanced_out"] == 1
