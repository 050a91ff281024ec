"""Which world answers ``--backend sim|hybrid`` (issue 20): without ``--world-url`` and ``--world``, the
embedded CPU models (the offline default), said in one line; ``--world openai`` without an endpoint is
one error that names ``--world embedded`` as the other way. Run through the real ``sweworld`` app on
a small local repository (no network)."""

from __future__ import annotations

import json

import pytest
from badinput import invoke
from tests.cli.conftest import INSTANCE

from sweworld.cli.backend_opts import EMBEDDED_DEFAULT, world_kind

pytestmark = pytest.mark.bwrap


@pytest.mark.parametrize("backend", ["sim", "hybrid"])
def test_eval_without_a_world_url_uses_the_embedded_world_and_says_so_once(tmp_path, data, backend):
    out = tmp_path / "out"
    result = invoke("eval", "-d", data, "--backend", backend, "--audit-rate", "0", "--out", out,
                    "--logs-dir", out / "logs")
    assert result.exit_code == 0, result.output
    assert result.output.count(EMBEDDED_DEFAULT) == 1, result.output
    assert json.loads((out / "gold.sweworld.json").read_text())["completed_ids"] == [INSTANCE]
    log = (out / "logs/run_evaluation/sweworld/gold" / INSTANCE / "run_instance.log").read_text()
    assert "simulated: SWR" in log


def test_rollout_without_a_world_url_uses_the_embedded_world(tmp_path, data):
    result = invoke("rollout", "-d", data, "--backend", "sim", "--policy", "oracle", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert result.output.count(EMBEDDED_DEFAULT) == 1, result.output
    assert json.loads((tmp_path / "out/summary.json").read_text())["backend"] == "sim"


@pytest.mark.parametrize("command", ["eval", "rollout"])
def test_world_openai_without_a_world_url_is_one_error_naming_the_embedded_world(tmp_path, data, command):
    result = invoke(command, "-d", data, "--backend", "sim", "--world", "openai", "--out", tmp_path / "out",
                    *(("--logs-dir", tmp_path / "logs") if command == "eval" else ()))
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert error == ["error: the sim and hybrid backends need the world models' endpoint (--world openai)"]
    assert "--world-url" in result.output and "--world embedded" in result.output
    assert EMBEDDED_DEFAULT not in result.output and "Traceback" not in result.output


def test_a_world_url_alone_means_served_models_and_the_real_backend_needs_no_world():
    assert world_kind(None, ["http://127.0.0.1:1/v1"]) == "openai"
    assert world_kind("embedded", None) == "embedded"
    result = invoke("eval", "--help")
    assert "default: openai with --world-url, else embedded" in " ".join(result.output.replace("│", " ").split())
