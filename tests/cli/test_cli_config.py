"""``--config FILE.yaml`` on the run commands, through the real ``sweworld`` app: a file configures
the run, flags given on the command line override it, the run writes the resolved ``config.yaml``
that repeats it, an unknown key is one error naming the key and the file (exit 2, nothing run), and
``rollout --timeout`` is the backend's command limit. Fast paths: the sim backend with the embedded
world on a small local repository (no network)."""

from __future__ import annotations

import json

import pytest
import yaml
from badinput import invoke
from tests.cli.conftest import INSTANCE
from tests.data.data_trajectories import trajectory, write_run

from sweworld.backends.sim import SimBackend
from sweworld.cli.options import config_path
from sweworld.core.config import CONFIG_FILE, EvalConfig, ExportSFTConfig, RolloutConfig, Timeouts, load
from sweworld.world.config import WorldConfig

OUT_FLAG = {"world fidelity": "--json"}
"""The output flag of a command without ``--out``."""


def write_yaml(path, config: dict):
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def sim_rollout(data, out, **extra) -> dict:
    return {"dataset": str(data), "policy": "oracle", "out": str(out), "evaluate": False,
            "backend": {"kind": "sim", "world": {"kind": "embedded"}}, **extra}


@pytest.mark.bwrap
def test_rollout_from_a_config_file_flags_override_and_its_config_yaml_repeats_it(tmp_path, data):
    out = tmp_path / "out"
    run = write_yaml(tmp_path / "run.yaml", sim_rollout(data, out, n_samples=1, seed=3))
    result = invoke("rollout", "--config", run, "--n-samples", 2)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["backend"] == "sim" and summary["trajectories"] == 2, summary  # the flag over the file's 1
    written = load(RolloutConfig, out / CONFIG_FILE)
    assert written.n_samples == 2 and written.seed == 3 and written.policy == "oracle" and not written.evaluate
    assert written.backend.kind == "sim" and written.backend.world.kind == "embedded"
    assert written.timeouts == Timeouts()
    before = (out / CONFIG_FILE).read_text()
    again = invoke("rollout", "--config", out / CONFIG_FILE)  # resumed: every sample is there already
    assert again.exit_code == 0, again.output
    assert (out / CONFIG_FILE).read_text() == before
    assert json.loads((out / "summary.json").read_text())["trajectories"] == 2


@pytest.mark.bwrap
def test_rollout_timeout_is_the_backends_command_limit(tmp_path, data, monkeypatch):
    seen: list[float] = []
    workspace = SimBackend.workspace

    def recording(self, task, **kwargs):
        sandbox = workspace(self, task, **kwargs)
        seen.append(sandbox.config.timeout)
        return sandbox

    monkeypatch.setattr(SimBackend, "workspace", recording)
    out = tmp_path / "out"
    result = invoke("rollout", "-d", data, "--backend", "sim", "--world", "embedded", "--policy", "noop",
                    "--no-eval", "--out", out, "--timeout", 7)
    assert result.exit_code == 0, result.output
    assert seen == [7.0]
    assert load(RolloutConfig, out / CONFIG_FILE).timeouts == Timeouts(command=7)


@pytest.mark.bwrap
def test_eval_from_a_config_file_writes_its_config_in_the_run_directory(tmp_path, data):
    out = tmp_path / "out"
    run = write_yaml(tmp_path / "run.yaml", {"dataset": str(data), "run_id": "fromfile", "out": str(out),
                                             "logs_dir": str(out / "logs"), "timeouts": {"evaluation": 99},
                                             "backend": {"kind": "sim", "world": {"kind": "embedded"}}})
    result = invoke("eval", "--config", run, "--run-id", "flagged")
    assert result.exit_code == 0, result.output
    assert json.loads((out / "gold.flagged.json").read_text())["completed_ids"] == [INSTANCE]
    written = load(EvalConfig, out / "logs/run_evaluation/flagged/gold" / CONFIG_FILE)
    assert written.run_id == "flagged" and written.timeouts.evaluation == 99 and written.backend.kind == "sim"


@pytest.mark.parametrize(("command", "config", "key"), [
    ("rollout", {"dataset": "demo", "backend": {"kind": "sim", "audit_rate": 0.5}}, "backend.audit_rate"),
    ("rollout", {"dataset": "demo", "timeouts": {"commnd": 5}}, "timeouts.commnd"),
    ("eval", {"dataset": "demo", "predictons": "gold"}, "predictons"),
    ("validate", {"dataset": "demo", "backend": {"kind": "real", "world": {}}}, "backend.world"),
    ("synth", {"repo": "x", "out": "o.jsonl", "worker": 2}, "worker"),
    ("mine", {"repo": "x", "runner": {"workers": 2, "adress": "auto"}}, "runner.adress"),
    ("train sft", {"data": ["d.jsonl"], "model": "m", "lora_rank": 4}, "lora_rank"),
    ("world collect", {"dataset": "demo", "backend": {"kind": "real", "netwrk": True}}, "backend.netwrk"),
    ("select", {"runs": ["r"], "verifer": "random"}, "verifer"),
    ("world fidelity", {"traces": ["t"], "swr_sample": 2}, "swr_sample"),
    ("world train", {"verdicts": ["v"], "dataset": "demo", "leave_repos_out": True}, "leave_repos_out"),
    ("verifier train", {"runs": ["r"], "feature": "solo"}, "feature"),
    ("export sft", {"runs": ["r"], "cap": 1}, "cap"),
    ("export world", {"traces": ["t"], "max_steps": 3}, "max_steps"),
    ("export verifier", {"runs": ["r"], "balanced": False}, "balanced"),
])
def test_an_unknown_key_is_one_error_naming_the_key_and_file_line(tmp_path, command, config, key):
    out = tmp_path / "out"
    run = tmp_path / "run.yaml"
    text = yaml.safe_dump(config, sort_keys=False)
    run.write_text(text, encoding="utf-8")
    line = next(n for n, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith(key.split(".")[-1] + ":"))
    result = invoke(*command.split(), "--config", run, OUT_FLAG.get(command, "--out"), out)
    assert result.exit_code == 2, result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error: ")]
    assert errors == [f"error: {run}:{line}: unknown key {key!r}"], result.output
    assert "Traceback" not in result.output and not out.exists()


@pytest.mark.parametrize(("args", "option"), [
    ("synth --out x.jsonl", "--repo"), ("select", "--runs"), ("export sft --out x.jsonl", "--runs"),
    ("export world --traces t", "--out"), ("verifier train --runs r", "--out"),
])
def test_a_required_option_without_a_config_is_still_clicks_missing_option(args, option, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing is written, here least of all
    result = invoke(*args.split())
    assert result.exit_code == 2 and f"Missing option '{option}'" in result.output, result.output
    assert not any(tmp_path.iterdir())


def test_export_sft_from_a_config_file_flags_override_and_its_config_yaml_repeats_it(tmp_path):
    runs = write_run(tmp_path / "run", [trajectory("a", 0, steps=3), trajectory("a", 1, steps=2),
                                        trajectory("b", 0, reward=0.0)])
    out = tmp_path / "rows" / "sft.jsonl"
    run = write_yaml(tmp_path / "run.yaml", {"runs": [str(runs)], "out": str(out), "all": True,
                                             "cap_per_instance": 2, "format": "openai"})
    result = invoke("export", "sft", "--config", run, "--cap-per-instance", 1)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["instance_id"], r["sample"]) for r in rows] == [("a", 1), ("b", 0)]  # the flag's cap over the file's 2
    written = load(ExportSFTConfig, config_path(out))
    assert written.cap_per_instance == 1 and written.all and written.runs == [runs] and written.out == out
    before, config = out.read_text(), config_path(out).read_text()
    out.unlink()
    again = invoke("export", "sft", "--config", config_path(out))
    assert again.exit_code == 0, again.output
    assert out.read_text() == before and config_path(out).read_text() == config


def test_timeouts_are_defined_once_and_world_config_reads_its_older_backend_key():
    assert Timeouts() == Timeouts(command=600, evaluation=1800, build=3600)
    assert WorldConfig.model_validate({"backend": "embedded"}).kind == "embedded"
    assert WorldConfig(kind="replay").kind == "replay"
