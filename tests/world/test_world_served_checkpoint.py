"""The learned-LLM path a user with a GPU takes, run end to end on CPU with a tiny model (issue 20):
real traces (``sweworld world collect``, a scripted policy on a demo instance) -> ``sweworld export
world`` -> ``sweworld train sft`` on the SWT and SWR rows into a tiny model built from a config (no
download) -> the checkpoint served by ``transformers serve`` (the ``serve`` extra: a standard
OpenAI-compatible server; vLLM plays that part on GPUs, docs/world.md) -> ``sweworld rollout --backend
sim --world openai`` against it. A tiny model writes garbage: what is checked is the plumbing, that
the world's requests reach the served checkpoint and the rollout ends with a trajectory and an
evaluation, each reply parsed or counted invalid as the SWT/SWR client counts it. ``--world-max-tokens``
reaches every world request (a fast test)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from world_tasks import swt_reply

from chatserver import ChatServer
from sweworld.cli.backend_opts import backend_from_options
from sweworld.world.traces import TraceStore

CLI = [sys.executable, "-m", "sweworld.cli.app"]
INSTANCE = "more-itertools__first-default"  # demo: oracle-tests runs its failing tests before and after the fix
QUIET = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_UPDATE_CHECK": "1"}
"""One thread per process on a shared CPU; nothing asks the Hugging Face hub (or PyPI for updates)."""
MAX_TOKENS = 16
"""--world-max-tokens: ``transformers serve`` generates 1024 tokens at least unless the request caps them."""
SIM_FAILURE = re.compile(r"could not produce the output of this command \((\d+) invalid replies")


def sweworld(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, env={**os.environ, **QUIET})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def served(checkpoint: Path, log: Path, home: Path):
    """``transformers serve CHECKPOINT`` on a free local port; yields its base URL once /health answers."""
    port = free_port()
    env = {**os.environ, **QUIET, "HF_HOME": str(home), "HF_HUB_CACHE": str(home / "hub")}
    (home / "hub").mkdir(parents=True, exist_ok=True)  # its /v1/models lists this (empty) cache
    with log.open("w") as out:
        server = subprocess.Popen([sys.executable, "-m", "transformers.cli.transformers", "serve", str(checkpoint),
                                   "--host", "127.0.0.1", "--port", str(port), "--device", "cpu",
                                   "--log-level", "info"], stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            while server.poll() is None:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.5)
            assert server.poll() is None, f"transformers serve exited {server.returncode}:\n{log.read_text()}"
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            server.terminate()
            server.wait()


def test_world_max_tokens_caps_every_world_request(tmp_path):
    with ChatServer([], default=swt_reply("ok\n")) as server:
        sim = backend_from_options("sim", world_url=[server.url], world_model=str(tmp_path), world_max_tokens=7)
        result = sim.swt.predict_messages([{"role": "user", "content": "python -c 'print(1)'"}])
        uncapped = backend_from_options("sim", world_url=[server.url], world_model=str(tmp_path / "u"))
        uncapped.swt.predict_messages([{"role": "user", "content": "python -c 'print(1)'"}])
    assert result.output == "ok\n" and sim.world.swr_model["max_tokens"] == 7
    assert server.requests[0]["max_tokens"] == 7 and "max_tokens" not in server.requests[1]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> dict:
    """Real traces, the rows exported from them and the tiny model trained on those rows."""
    pytest.importorskip("trl", reason="the train extra is not installed (pip install 'sweworld[train]')")
    from sweworld.train.rows import load_rows
    from sweworld.train.tiny import build_tiny_for

    root = tmp_path_factory.mktemp("served")
    collected = sweworld("world", "collect", "--dataset", "demo", "-i", INSTANCE, "--policy", "oracle-tests",
                         "--out", root / "collect")
    assert collected.returncode == 0, collected.stdout + collected.stderr
    records = TraceStore(root / "collect" / "traces.jsonl").load()
    assert sum(r.kind == "step" and r.routed == "sim" for r in records) == 2
    assert [r.resolved for r in records if r.kind == "eval"] == [True]

    exported = sweworld("export", "world", "--traces", root / "collect", "--out", root / "world")
    assert exported.returncode == 0, exported.stdout + exported.stderr
    counts = json.loads((root / "world" / "summary.json").read_text())
    assert (counts["swt"]["rows"], counts["swr"]["rows"]) == (2, 1)
    data = [root / "world" / "swt.jsonl", root / "world" / "swr.jsonl"]

    tiny = build_tiny_for(root / "tiny", load_rows(data))
    trained = sweworld("train", "sft", "--data", *data, "--model", tiny, "--out", root / "ckpt", "--max-steps", 4,
                       "--lr", "1e-2", "--logging-steps", 1, "--max-length", 1024, "--too-long", "cut")
    assert trained.returncode == 0, trained.stdout + trained.stderr
    summary = json.loads((root / "ckpt" / "train_summary.json").read_text())
    assert summary["kinds"] == {"swt": 2, "swr": 1} and summary["steps"] == 4 and summary["device"] == "cpu"
    assert len(summary["losses"]) == 4 and (root / "ckpt" / "model.safetensors").is_file()
    return {"root": root, "ckpt": root / "ckpt"}


@pytest.mark.slow
@pytest.mark.train
@pytest.mark.bwrap
@pytest.mark.network
def test_a_sim_rollout_asks_the_served_checkpoint_and_ends_with_a_trajectory_and_an_evaluation(checkpoint):
    pytest.importorskip("fastapi", reason="transformers serve needs the serve extra (pip install 'sweworld[serve]')")
    pytest.importorskip("uvicorn", reason="transformers serve needs the serve extra (pip install 'sweworld[serve]')")
    root, ckpt = checkpoint["root"], checkpoint["ckpt"]
    log, out = root / "serve.log", root / "rollout"
    with served(ckpt, log, root / "hf") as url:
        # transformers serve answers the name it was started with: the checkpoint's path
        done = sweworld("rollout", "-d", "demo", "-i", INSTANCE, "--policy", "oracle-tests", "--backend", "sim",
                        "--world", "openai", "--world-url", url, "--world-model", ckpt,
                        "--world-max-tokens", MAX_TOKENS, "--out", out)
    served_log = log.read_text()

    (trajectory,) = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert (trajectory["instance_id"], trajectory["backend"], trajectory["exit_status"]) == (INSTANCE, "sim",
                                                                                            "submitted")
    bash = [s for s in trajectory["steps"] if s["tool"] == "execute_bash"]
    assert [s["backend"] for s in bash] == ["sim", "sim"] and trajectory["steps"][-1]["tool"] == "submit"
    failed = [SIM_FAILURE.search(s["observation"]) for s in bash]
    assert all(s["exit_code"] == -1 for s, f in zip(bash, failed, strict=True) if f)  # SWT's simulation failure

    report = json.loads((out / "eval" / f"{INSTANCE}.0" / "sweworld_report.json").read_text())
    assert report["simulated"] and report["sim_samples"] == 1 and report["patch_successfully_applied"]
    if report["sim_invalid"]:  # no valid SWR reply: no verdict, an infrastructure error, as the client counts it
        assert report["error_kind"] == "infra" and "the reward model gave no valid reply" in report["error"]
        assert trajectory["error_kind"] == "infra" and done.returncode == 1  # every episode failed: exit 1
        assert "the reward model gave no valid reply" in done.stdout + done.stderr
    else:
        assert len(report["sim_rewards"]) == 1 and report["resolved"] in (True, False) and done.returncode == 0

    # every request reached the served checkpoint: 3 per invalid SWT step, >= 1 per parsed one, then SWR's
    posts = served_log.count('"POST /v1/chat/completions HTTP/1.1" 200')
    asked = served_log.count(f"[Request received] Model: {ckpt}")
    least = sum(int(f.group(1)) if f else 1 for f in failed) + report["sim_attempts"]
    assert posts == asked and (posts == least if all(failed) else posts >= least), served_log[-2000:]
