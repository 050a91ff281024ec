"""``sweworld eval|rollout|exec --backend sim|hybrid`` end to end against a served model (a real local
OpenAI-compatible server with scripted replies)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner
from world_tasks import swr_reply, swt_reply

from chatserver import ChatServer
from sweworld.cli.app import app
from sweworld.datasets import path_of
from sweworld.tasks import load_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

FIX_ID = "more-itertools__first-default"


def replies(swt: str, swr: str):
    return lambda body: swr if "test_report" in json.dumps(body["messages"]) else swt


@pytest.fixture(scope="module")
def passing_report() -> str:
    task = load_tasks(path_of("demo")).by_id(FIX_ID)
    return "\n".join(f"PASSED {t}" for t in task.FAIL_TO_PASS + task.PASS_TO_PASS)


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_eval_with_the_sim_backend_grades_swr_predictions(tmp_path, passing_report):
    with ChatServer([], default=replies(swt_reply(), swr_reply(passing_report, 1))) as server:
        result = invoke("eval", "-d", "demo", "-i", FIX_ID, "--backend", "sim", "--world-url", server.url,
                        "--run-id", "sim", "--logs-dir", str(tmp_path / "logs"), "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "resolved 1" in result.output
    summary = json.loads((tmp_path / "gold.sim.json").read_text())
    assert summary["resolved_ids"] == [FIX_ID]
    extras = json.loads((tmp_path / "logs/run_evaluation/sim/gold" / FIX_ID / "sweworld_report.json").read_text())
    assert extras["resolved"] is True


def test_rollout_with_sim_and_hybrid_backends(tmp_path, passing_report):
    with ChatServer([], default=replies(swt_reply("ok\n"), swr_reply(passing_report, 1))) as server:
        for backend in ("sim", "hybrid"):
            out = tmp_path / backend
            result = invoke("rollout", "-d", "demo", "-i", FIX_ID, "--policy", "oracle", "--backend", backend,
                            "--world-url", server.url, "--audit-rate", "1", "--out", str(out))
            assert result.exit_code == 0, result.output
            summary = json.loads((out / "summary.json").read_text())
            assert summary["resolve_rate"] == 1.0 and summary["backend"] == backend
    assert summary["audits"]["evaluations"]["audited"] == 1 and summary["audits"]["evaluations"]["agreed"] == 1


def test_exec_with_the_sim_backend_prints_the_prediction(tmp_path):
    with ChatServer([], default=swt_reply("predicted 42\n", "", 3)) as server:
        result = invoke("exec", "-d", "demo", "--instance", FIX_ID, "--backend", "sim", "--world-url", server.url,
                        "--", "python -c 'print(6*7)' | tr a-z A-Z")
    assert result.exit_code == 0 and "PREDICTED 42" in result.output


def test_served_world_models_without_an_endpoint_is_one_clear_error(tmp_path):
    result = invoke("eval", "-d", "demo", "-i", FIX_ID, "--backend", "sim", "--world", "openai", "--out", str(tmp_path),
                    "--logs-dir", str(tmp_path / "logs"))
    assert result.exit_code == 2 and "--world-url" in result.output and "Traceback" not in result.output
    assert "--world embedded" in result.output  # the other way: no endpoint needed
