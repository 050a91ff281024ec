"""Fidelity measured against a replay server: 1.0 on the repository whose traces it holds, an honest
lower figure on a held-out one; the `sweworld world fidelity` and `serve` commands."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import httpx
import pytest
from typer.testing import CliRunner
from world_tasks import world_model
from world_traces import WRONG, record_episode

from sweworld.cli.app import app
from sweworld.world.fidelity import measure, split_of
from sweworld.world.replay import ReplayServer
from sweworld.world.swr import SWR, SWRConfig
from sweworld.world.swt import SWT, SWTConfig
from sweworld.world.templates import render
from sweworld.world.traces import TraceStore

SEEN, HELD = "local/calc", "local/mul"


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[TraceStore, TraceStore]:
    """Real traces of two repositories (each: a right fix, resolved; a wrong one, unresolved)."""
    root = tmp_path_factory.mktemp("fidelity")
    stores = TraceStore(root / "seen" / "traces.jsonl"), TraceStore(root / "held" / "traces.jsonl")
    for store, repo in zip(stores, (SEEN, HELD), strict=True):
        record_episode(root / repo / "good", store, repo)
        record_episode(root / repo / "wrong", store, repo, fix=WRONG)
    return stores


@pytest.mark.parametrize("style", ["sweworld", "swe-world"])
def test_one_on_seen_traces_and_lower_on_a_held_out_repository(stores, style):
    seen, held = stores
    assert (split_of(SEEN, 0.5), split_of(HELD, 0.5)) == ("train", "test")
    server = ReplayServer(seen.path)  # the "model" has seen the train repository only
    with server as url:
        swt = SWT(world_model(url), SWTConfig(style=style))
        swr = SWR(world_model(url, temperature=0.7), SWRConfig(style=style))
        result = measure(seen.load() + held.load(), swt, swr, test_fraction=0.5, workers=4)
    train, test, both = (result["splits"][name] for name in ("train", "test", "all"))
    assert train["swt"] == {"n": 6, "exit_code_accuracy": 1.0, "output_similarity": 1.0, "sim_failures": 0}
    assert (train["swr"]["accuracy"], train["swr"]["f1"], train["swr"]["confusion"]) == (
        1.0, 1.0, {"tp": 1, "fp": 0, "fn": 0, "tn": 1})
    assert test["swt"]["n"] == 6 and test["swt"]["output_similarity"] < 1.0  # replayed from another repository
    assert (test["swr"]["accuracy"], test["swr"]["recall"], test["swr"]["confusion"]) == (
        0.5, 0.0, {"tp": 0, "fp": 0, "fn": 1, "tn": 1})  # an unseen patch is judged unresolved
    assert (both["swt"]["n"], both["swr"]["n"]) == (12, 4)
    assert result["repos"][HELD] == {"split": "test", **test} and result["repos"][SEEN]["split"] == "train"
    # swe-world prompts show no repository name: the two repositories' first commands render alike
    assert server.stats["swt"]["hit"] == {"sweworld": 6, "swe-world": 8}[style]
    assert server.stats["swr"] == {"hit": 2, "fallback": 0, "miss": 2}


def test_the_fidelity_command_prints_and_writes_json_and_html(stores, tmp_path):
    seen, held = stores
    with ReplayServer(seen.path) as url:
        done = CliRunner().invoke(app, ["world", "fidelity", "--traces", str(seen.path.parent), "--traces",
                                        str(held.path), "--world-url", url, "--prompt-style", "swe-world",
                                        "--json", str(tmp_path / "f.json"), "--html", str(tmp_path / "f.html")])
    assert done.exit_code == 0, done.output
    result = json.loads((tmp_path / "f.json").read_text())
    assert result["splits"]["train"]["swr"]["accuracy"] == 1.0 and result["splits"]["test"]["swr"]["accuracy"] == 0.5
    assert result["swt_style"] == "swe-world" and result["world_url"] == [url]
    assert "SWE-World SWR-72B (Table 4)" in done.output and "0.794" in done.output and HELD in done.output
    page = (tmp_path / "f.html").read_text()
    assert "World fidelity" in page and "SWE-World SWR-72B" in page and "<svg" in page
    missing = CliRunner().invoke(app, ["world", "fidelity", "--traces", str(seen.path)])
    assert missing.exit_code == 2 and "--world-url" in missing.output


def test_the_serve_command_replays_until_interrupted(stores):
    seen, _ = stores
    proc = subprocess.Popen([sys.executable, "-m", "sweworld.cli.app", "world", "serve", "--traces", str(seen.path),
                             "--port", "0", "--model", "recorded"], stdout=subprocess.PIPE, text=True,
                            env={**__import__("os").environ, "PYTHONUNBUFFERED": "1"})
    try:
        banner = proc.stdout.readline()
        url = re.search(r"at (http://\S+/v1) ", banner).group(1)
        trace = seen.steps()[0]
        messages = render("sweworld", "swt", trace.context)
        reply = httpx.post(f"{url}/chat/completions", json={"model": "x", "messages": messages}).json()
        listed = httpx.get(f"{url}/models").json()
    finally:
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate()[0]
    assert json.loads(reply["choices"][0]["message"]["content"]) == {
        "stdout": trace.output, "stderr": "", "exit_code": trace.exit_code}
    assert listed["data"][0]["id"] == "recorded" and "replaying" in banner and proc.returncode == 0
    assert json.loads(rest.strip().splitlines()[-1])["swt"] == {"hit": 1, "fallback": 0, "miss": 0}
