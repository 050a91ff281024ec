"""SFT export on hand-made trajectories: each filter, the per-instance cap, the formats, token counts
(a real tokenizer and the stated estimate), the summary, and the CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from data_trajectories import trajectory, word_tokenizer, write_run

from sweworld.core.errors import ConfigError
from sweworld.data.sft import SFTOptions, export_sft
from sweworld.data.tokens import ESTIMATE, MESSAGE_OVERHEAD, load_counter
from sweworld.tools import default_tools

MIXED = [trajectory("a", 0), trajectory("a", 1, error_kind="model", reward=None, exit_status="error"),
         trajectory("b", 0, reward=0.0), trajectory("b", 1, reward=None), trajectory("c", 0, format_error=True),
         trajectory("c", 1, exit_status="step_limit"), trajectory("d", 0, exit_status="stuck")]


def ids(rows) -> list[tuple[str, int]]:
    return [(r["instance_id"], r["sample"]) for r in rows]


def test_each_filter_counts_what_it_removes(tmp_path):
    run = write_run(tmp_path / "run", MIXED)
    rows, summary = export_sft([run])
    assert ids(rows) == [("a", 0)]
    assert summary.removed == {"failed": 1, "unresolved": 2, "format_errors": 1, "hit_limit": 1,
                               "not_submitted": 1, "too_long": 0, "cap": 0}
    assert summary.trajectories == 7 and summary.rows == summary.resolved_rows == summary.instances == 1

    rows, summary = export_sft([run], SFTOptions(keep_unresolved=True))  # --all: every outcome, failures never
    assert ids(rows) == [("a", 0), ("b", 0), ("b", 1)]
    assert summary.removed["unresolved"] == 0 and summary.removed["failed"] == 1
    assert [r["reward"] for r in rows] == [1.0, 0.0, None]


def test_a_row_ends_with_the_submit_call_and_says_where_it_came_from(tmp_path):
    run = write_run(tmp_path / "run", [trajectory("a", 0, steps=3)])
    (row,), _ = export_sft([run])
    assert row["tools"] == default_tools().schemas()
    last = row["messages"][-1]
    assert last["role"] == "assistant" and last["content"] == ""
    assert last["tool_calls"][0]["function"] == {"name": "submit", "arguments": "{}"}
    assert [m["role"] for m in row["messages"]] == ["system", "user"] + ["assistant", "tool"] * 2 + ["assistant"]
    assert {k: row[k] for k in ("instance_id", "sample", "policy", "model", "reward", "exit_status", "steps")} == {
        "instance_id": "a", "sample": 0, "policy": "scripted", "model": "m", "reward": 1.0,
        "exit_status": "submitted", "steps": 3}
    assert row["run"] == str(run) and row["tokens"] > 0


def test_the_cap_keeps_the_shortest_and_the_seed_only_breaks_ties(tmp_path):
    run = write_run(tmp_path / "run", [trajectory("x", 0, steps=3), trajectory("x", 1, steps=2),
                                       trajectory("x", 2, steps=2), trajectory("x", 3, steps=4),
                                       trajectory("y", 0, steps=5)])
    picks = {}
    for seed in range(16):
        rows, summary = export_sft([run], SFTOptions(cap_per_instance=1, seed=seed))
        assert summary.removed["cap"] == 3 and len(rows) == 2
        assert rows == export_sft([run], SFTOptions(cap_per_instance=1, seed=seed))[0]  # deterministic
        picks[seed] = ids(rows)[0]
    assert set(picks.values()) == {("x", 1), ("x", 2)}  # the 2-step ones, each chosen by some seed
    rows, _ = export_sft([run], SFTOptions(cap_per_instance=2))
    assert ids(rows) == [("x", 1), ("x", 2), ("y", 0)]  # input order kept

    unresolved = write_run(tmp_path / "all", [trajectory("z", 0, steps=2, reward=0.0), trajectory("z", 1, steps=6)])
    rows, _ = export_sft([unresolved], SFTOptions(keep_unresolved=True, cap_per_instance=1))
    assert ids(rows) == [("z", 1)]  # resolved first, then shortest


def test_max_tokens_with_a_real_tokenizer_and_with_the_stated_estimate(tmp_path):
    counter = load_counter(word_tokenizer(tmp_path / "tokenizer.json"))
    assert counter.name == f"tokenizer: {tmp_path / 'tokenizer.json'}" and not counter.estimated
    assert counter.text("echo word word, word") == 5  # words and punctuation runs
    assert counter.messages([{"role": "user", "content": "a b"}]) == MESSAGE_OVERHEAD + 1 + 2
    run = write_run(tmp_path / "run", [trajectory("a", 0, words=3), trajectory("b", 0, words=400)])
    _, full = export_sft([run], counter=counter)
    rows, summary = export_sft([run], SFTOptions(max_tokens=1000), counter)
    assert ids(rows) == [("a", 0)] and summary.removed["too_long"] == 1
    assert summary.tokens["counter"] == counter.name and full.tokens["longest"] > 1000 > summary.tokens["longest"]

    estimate = load_counter(None)
    assert estimate.name == ESTIMATE and estimate.estimated and estimate.text("x" * 9) == math.ceil(9 / 4)
    _, summary = export_sft([run], SFTOptions(max_tokens=10_000))
    assert summary.tokens["counter"] == ESTIMATE and summary.rows == 2
    with pytest.raises(ConfigError, match="no tokenizer file"):
        load_counter(tmp_path / "missing" / "tokenizer.json")


def test_sharegpt_and_object_arguments(tmp_path):
    run = write_run(tmp_path / "run", [trajectory("a", 0, steps=2)])
    (row,), _ = export_sft([run], SFTOptions(format="sharegpt"))
    assert row["system"] == "You fix bugs." and json.loads(row["tools"]) == default_tools().schemas()
    turns = row["conversations"]
    assert [t["from"] for t in turns] == ["human", "function_call", "observation", "function_call"]
    assert json.loads(turns[1]["value"]) == {"name": "execute_bash", "arguments": {"command": "echo word word word"}}
    assert "messages" not in row and row["instance_id"] == "a"

    (row,), _ = export_sft([run], SFTOptions(arguments="object"))
    assert row["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"command": "echo word word word"}


def test_cli_writes_the_rows_and_the_summary(tmp_path):
    first = write_run(tmp_path / "one", MIXED)
    second = write_run(tmp_path / "two", [trajectory("a", 0, steps=1), trajectory("e", 0)])
    out = tmp_path / "sft" / "rows.jsonl"
    result = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "export", "sft", "--runs", str(first),
                             str(second), "--out", str(out), "--cap-per-instance", "1"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["run"], r["instance_id"], r["steps"]) for r in rows] == [(str(second), "a", 1), (str(second), "e", 2)]
    summary = json.loads((tmp_path / "sft" / "rows.summary.json").read_text())
    assert summary["trajectories"] == 9 and summary["rows"] == 2 and summary["removed"]["cap"] == 1
    assert summary["removed"]["unresolved"] == 2 and summary["runs"] == [str(first), str(second)]
    assert "2 rows (2 resolved) of 2 instances" in result.stdout and ESTIMATE in result.stdout

    bad = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "export", "sft", "--runs", str(tmp_path / "no"),
                          "--out", str(out)], capture_output=True, text=True)
    assert bad.returncode == 2 and "no such file or directory" in bad.stderr
