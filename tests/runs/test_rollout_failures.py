"""``sweworld rollout`` when the model endpoint fails: the sample is an error, not an outcome.

Real episodes of the demo's six instance (its environment is normally in the test cache), a real
closed port on 127.0.0.1 for a dead endpoint and a real local chat server for a live one.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from chatserver import ChatServer
from sweworld.runs.store import TrajectoryStore

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

SIX_ID = "benjaminp__six-1.16.0"
SUBMIT = [("submit", {})]


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: bound, then closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rollout(out, url: str, samples: int) -> subprocess.CompletedProcess:
    """``sweworld rollout`` in its own process; ``output`` holds stdout and stderr."""
    return subprocess.run([sys.executable, "-m", "sweworld.cli.app", "rollout", "--dataset", "demo",
                           "--instance-ids", SIX_ID, "--policy", "openai", "--model-url", url, "--model", "m",
                           "--model-retries", "0", "-k", str(samples), "--out", str(out)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def summary_of(out) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_dead_endpoint_fails_every_sample_and_a_rerun_retries_them(tmp_path):
    out = tmp_path / "run"
    dead = rollout(out, f"http://127.0.0.1:{closed_port()}/v1", 2)
    assert dead.returncode == 1, dead.stdout
    assert "ConnectError" in dead.stdout and SIX_ID in dead.stdout
    stored = TrajectoryStore(out / "trajectories.jsonl").load()
    assert len(stored) == 2
    assert all(t.error_kind == "model" and t.reward is None and t.report is None for t in stored)
    assert summary_of(out) == {"trajectories": 0, "errors": 2, "error_kinds": {"model": 2}, "backend": "real"}
    assert (out / "predictions.jsonl").read_text() == ""

    with ChatServer(default=SUBMIT) as server:
        live = rollout(out, server.url, 2)
    assert live.returncode == 0, live.stdout
    assert len(server.requests) == 2  # both failed samples were run again
    summary = summary_of(out)
    assert summary["trajectories"] == 2 and summary["errors"] == 0 and summary["resolve_rate"] == 0.0
    assert TrajectoryStore(out / "trajectories.jsonl").done() == {(SIX_ID, 0), (SIX_ID, 1)}


def test_a_failed_sample_stays_out_of_the_metrics(tmp_path):
    out = tmp_path / "run"
    with ChatServer([400], default=SUBMIT) as server:  # the first request is refused, the second submits
        result = rollout(out, server.url, 2)
    assert result.returncode == 0, result.stdout
    assert "HTTP 400" in result.stdout
    summary = summary_of(out)
    assert summary["trajectories"] == 1 and summary["errors"] == 1 and summary["error_kinds"] == {"model": 1}
    assert summary["exit_status"] == {"submitted": 1}
    assert len((out / "predictions.all.jsonl").read_text().splitlines()) == 1


def test_a_runs_audits_are_the_sum_of_what_its_trajectories_carry():
    """A hybrid run's audit counts travel on each trajectory (and report): the summary adds them up
    whichever runner ran the items; a run whose items carry none has no audits."""
    from sweworld.backends import audits
    from sweworld.trajectory import Trajectory

    def carrying(steps: tuple[int, int], evaluations: tuple[int, int]) -> Trajectory:
        tally = audits.new_tally()
        for kind, (n, agreed) in (("steps", steps), ("evaluations", evaluations)):
            for k in range(n):
                audits.routed(tally, kind, False)
                audits.audited(tally, kind, k < agreed)
        return Trajectory(instance_id="a", sample=0, policy="p", audits=tally)

    part = audits.summary_part([carrying((3, 2), (1, 1)), carrying((1, 0), (1, 0)), Trajectory(instance_id="b")])
    steps, evaluations = part["audits"]["steps"], part["audits"]["evaluations"]
    assert (steps["audited"], steps["agreed"], steps["agreement"], steps["agreement_with_routing"]) == (4, 2, 0.5, 0.5)
    assert (evaluations["audited"], evaluations["agreed"]) == (2, 1)
    assert audits.summary_part([Trajectory(instance_id="b")]) == {}
