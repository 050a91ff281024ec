"""SFT export of a real rollout directory: the oracle and noop policies rolled out for real
(bubblewrap sandboxes, the real harness) on two instances of the shipped demo dataset."""

from __future__ import annotations

import json

import pytest

from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import NoopPolicy, OraclePolicy
from sweworld.core.config import RolloutConfig, RunnerConfig
from sweworld.data.sft import SFTOptions, export_sft, summary_path, write_sft
from sweworld.datasets import path_of
from sweworld.tasks import load_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.network]
IDS = ("more-itertools__first-default", "more-itertools__first-and-ilen")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from sweworld.runs.rollout import run_rollouts

    tasks = [t for t in load_tasks(path_of("demo")) if t.instance_id in IDS]
    root = tmp_path_factory.mktemp("rollouts")
    oracle = run_rollouts(tasks, OraclePolicy,
                          RolloutConfig(out=root / "oracle", n_samples=2, runner=RunnerConfig(workers=2)),
                          agent=load_agent_config())
    noop = run_rollouts(tasks, NoopPolicy, RolloutConfig(out=root / "noop", runner=RunnerConfig(workers=2)),
                        agent=load_agent_config())
    assert oracle["resolve_rate"] == 1.0 and noop["resolve_rate"] == 0.0
    return root / "oracle", root / "noop"


def test_resolved_rows_of_a_real_rollout(runs, tmp_path):
    out = tmp_path / "sft.jsonl"
    summary = write_sft(runs, out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((r["instance_id"], r["sample"]) for r in rows) == sorted((i, k) for i in IDS for k in (0, 1))
    assert summary.trajectories == 6 and summary.removed["unresolved"] == 2 and summary.rows == 4
    assert json.loads(summary_path(out).read_text())["removed"] == summary.removed
    for row in rows:
        assert row["policy"] == "oracle" and row["reward"] == 1.0 and row["exit_status"] == "submitted"
        assert row["messages"][0]["role"] == "system" and row["messages"][1]["role"] == "user"
        last = row["messages"][-1]
        assert last["role"] == "assistant" and last["tool_calls"][0]["function"]["name"] == "submit"
        calls = [m for m in row["messages"] if m.get("tool_calls")]
        assert len(calls) == row["steps"] and all(isinstance(c["tool_calls"][0]["function"]["arguments"], str)
                                                  for c in calls)


def test_cap_and_all_on_a_real_rollout(runs):
    rows, summary = export_sft(runs, SFTOptions(cap_per_instance=1, seed=3))
    assert sorted(r["instance_id"] for r in rows) == sorted(IDS) and summary.removed["cap"] == 2
    rows, summary = export_sft(runs, SFTOptions(keep_unresolved=True, cap_per_instance=1))
    assert all(r["reward"] == 1.0 for r in rows)  # resolved ones come first under the cap
    rows, summary = export_sft(runs, SFTOptions(keep_unresolved=True))
    assert summary.rows == 6 and sum(r["policy"] == "noop" and r["reward"] == 0.0 for r in rows) == 2
