"""World-model rows from real traces: the training prompt is the inference prompt byte for byte (both
styles), targets parse back to the real results, the per-episode cap, the counts and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from data_traces import record

from sweworld.data.world import WorldOptions, world_rows
from sweworld.world.parse import parse_swr, parse_swt
from sweworld.world.replay import recorded_test_report
from sweworld.world.router import route
from sweworld.world.swr import SWR, SWRConfig
from sweworld.world.swt import SWT, SWTConfig, to_result
from sweworld.world.templates import styles
from sweworld.world.traces import EvalTrace, StepTrace, load_traces


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return record(tmp_path_factory.mktemp("traces"))


def as_bytes(messages) -> bytes:
    return json.dumps(messages, ensure_ascii=False).encode()


@pytest.mark.parametrize("style", styles())
def test_training_prompts_are_the_inference_prompts_and_targets_parse_back(traces, style):
    records = load_traces(traces)
    steps = {(t.episode, t.step): t for t in records if isinstance(t, StepTrace)}
    evals = {t.instance_id: t for t in records if isinstance(t, EvalTrace)}
    rows, _ = world_rows(records, WorldOptions(style=style))
    swt, swr = SWT(None, SWTConfig(style=style)), SWR(None, SWRConfig(style=style))
    assert len(rows["swt"]) == 6 and len(rows["swr"]) == 2
    for row in rows["swt"]:
        trace = steps[row["episode"], row["step"]]
        assert as_bytes(row["messages"][:-1]) == as_bytes(swt.messages(trace.context))
        assert row["messages"][-1]["role"] == "assistant" and row["cot"] == "none"
        answer = parse_swt(row["messages"][-1]["content"])
        assert to_result(answer).output == trace.output and answer.exit_code == trace.exit_code
    for row in rows["swr"]:
        trace = evals[row["instance_id"]]
        assert as_bytes(row["messages"][:-1]) == as_bytes(swr.messages(trace.context))
        answer = parse_swr(row["messages"][-1]["content"])
        assert answer.test_report == recorded_test_report(trace) and answer.reward == int(trace.resolved)
        assert answer.exit_code == trace.report["test_exit_code"] and row["cot"] == "summary"
        assert f"reward is {int(trace.resolved)}" in answer.reasoning
    assert sorted((r["instance_id"], r["resolved"]) for r in rows["swr"]) == [
        ("local__calc-1", True), ("local__mul-1", False)]


def test_at_most_n_sim_steps_per_episode_chosen_by_the_seed(traces):
    records = load_traces(traces)
    picks = set()
    for seed in range(8):
        rows, counts = world_rows(records, WorldOptions(max_steps_per_trajectory=2, seed=seed))
        assert rows == world_rows(records, WorldOptions(max_steps_per_trajectory=2, seed=seed))[0]
        by_episode = {}
        for row in rows["swt"]:
            assert route(row["command"]).spans  # only what the simulator would be asked
            by_episode.setdefault(row["episode"], []).append(row["step"])
        assert len(by_episode) == 2 and all(len(s) == 2 and s == sorted(s) for s in by_episode.values())
        picks.add(tuple(sorted(map(tuple, by_episode.values()))))
        assert counts["swt"] == {"steps": 10, "sim_routed": 6, "episodes": 2, "over_cap": 2, "duplicates": 0,
                                 "rows": 4}
    assert len(picks) > 1


def test_the_counts_and_the_cli(traces, tmp_path):
    empty = next(t for t in load_traces(traces) if isinstance(t, EvalTrace)).model_copy(update={"patch": ""})
    extra = tmp_path / "extra.jsonl"
    extra.write_text(empty.model_dump_json() + "\n" + next(
        t for t in load_traces(traces) if isinstance(t, StepTrace) and t.routed == "sim").model_dump_json() + "\n")
    out = tmp_path / "world"
    result = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "export", "world", "--traces", str(traces),
                             str(extra), "--out", str(out), "--style", "swe-world"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["style"] == "swe-world" and summary["traces"] == 14
    assert summary["swt"] == {"steps": 11, "sim_routed": 7, "episodes": 2, "over_cap": 0, "duplicates": 1, "rows": 6}
    assert summary["swr"] == {"evaluations": 3, "not_asked": 1, "duplicates": 0, "rows": 2, "resolved": 1}
    assert "cot" not in summary
    lines = {kind: (out / f"{kind}.jsonl").read_text().splitlines() for kind in ("swt", "swr")}
    assert len(lines["swt"]) == 6 and len(lines["swr"]) == 2
    assert "6 SWT rows" in result.stdout and "2 SWR rows" in result.stdout
