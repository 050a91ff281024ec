"""The agent loop on real sandboxes, driven by a real local chat-completions server with scripted
replies (both action styles), and the built-in policies through the rollout runner."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from chatserver import ChatServer, Reply
from realtasks import FIRST_BUG, MODULE, real_tasks  # the real instances of the harness tests
from sweworld.agents.actions import render_text_action
from sweworld.agents.config import load_agent_config
from sweworld.agents.loop import run_episode
from sweworld.agents.policies import ModelPolicy, NoopPolicy, OraclePolicy
from sweworld.core.config import RolloutConfig, RunnerConfig
from sweworld.envs import EnvBuilder, episode_sandbox
from sweworld.models.base import ModelConfig
from sweworld.models.openai import OpenAIChatModel
from sweworld.runs.rollout import run_rollouts
from sweworld.tasks import save_tasks

pytestmark = [pytest.mark.bwrap, pytest.mark.network]
PATH = f"/testbed/{MODULE}"
FIX = {"command": "str_replace", "path": PATH, "old_str": FIRST_BUG[1], "new_str": FIRST_BUG[0]}


@pytest.fixture(scope="module")
def task():
    return real_tasks()["first"]


@pytest.fixture(scope="module")
def layer(task):
    return EnvBuilder().instance(task)


def model_policy(server, text_actions=False):
    config = ModelConfig(url=server.url, model="scripted", backoff=0.01, native_tools=not text_actions)
    return ModelPolicy(OpenAIChatModel(config), "scripted")


def episode(task, layer, policy, **overrides):
    with episode_sandbox(layer) as sb:
        return run_episode(task, sb, policy, load_agent_config(**overrides))


def test_native_tool_calls_fix_the_bug_and_submit(task, layer):
    script = [[("search", {"search_term": "def first(", "path": "/testbed/more_itertools"})],
              [("str_replace_editor", {"command": "view", "path": PATH, "view_range": [197, 222]})],
              [("str_replace_editor", FIX)],
              [("execute_bash", {"command": "python -c 'import more_itertools as m; print(m.first([], 7))'"})],
              [("submit", {})]]
    with ChatServer(script) as server:
        traj = episode(task, layer, model_policy(server))
        first_request = server.requests[0]
    assert traj.exit_status == "submitted", traj.error
    assert [s.tool for s in traj.steps] == ["search", "str_replace_editor", "str_replace_editor", "execute_bash",
                                            "submit"]
    assert traj.steps[3].observation.startswith("7") and traj.steps[3].exit_code == 0
    assert "+    if default is _marker:" in traj.patch
    assert {t["function"]["name"] for t in first_request["tools"]} >= {"execute_bash", "str_replace_editor"}
    roles = [m["role"] for m in traj.messages]
    assert roles[:2] == ["system", "user"] and roles[2:4] == ["assistant", "tool"]
    assert traj.usage["prompt_tokens"] > 0


def test_text_actions_in_xml_form(task, layer):
    script = [render_text_action("str_replace_editor", FIX, thought="Fix the inverted check."),
              render_text_action("submit", {})]
    with ChatServer(script) as server:
        traj = episode(task, layer, model_policy(server, text_actions=True), text_actions=True)
        first_request = server.requests[0]
    assert traj.exit_status == "submitted"
    assert "tools" not in first_request and "<function=" in first_request["messages"][0]["content"]
    assert traj.steps[0].thought.startswith("Fix the inverted check")
    assert "+    if default is _marker:" in traj.patch


def test_three_identical_actions_are_stuck(task, layer):
    same = [("execute_bash", {"command": "ls /testbed"})]
    with ChatServer([same] * 5) as server:
        traj = episode(task, layer, model_policy(server))
    assert traj.exit_status == "stuck" and len(traj.steps) == 3


def test_malformed_replies_are_format_errors(task, layer):
    script = ["I think I should look around.", [("execute_bash", "{not json")],
              Reply(content="still no action"), "nothing", "nothing again"]
    with ChatServer(script) as server:
        traj = episode(task, layer, model_policy(server), max_format_errors=3)
    assert traj.exit_status == "format_errors"
    assert all(s.format_error for s in traj.steps) and len(traj.steps) == 4
    assert "Format error" in traj.steps[0].observation


def test_step_limit_truncates(task, layer):
    script = [[("execute_bash", {"command": f"echo {i}"})] for i in range(5)]
    with ChatServer(script) as server:
        traj = episode(task, layer, model_policy(server), step_limit=2)
    assert traj.exit_status == "step_limit" and len(traj.steps) == 2


def test_oracle_resolves_and_noop_does_not(tmp_path):
    tasks = list(real_tasks().values())
    oracle = run_rollouts(tasks, OraclePolicy,
                          RolloutConfig(out=tmp_path / "oracle", runner=RunnerConfig(workers=2)),
                          agent=load_agent_config())
    noop = run_rollouts(tasks, NoopPolicy,
                        RolloutConfig(out=tmp_path / "noop", n_samples=2, runner=RunnerConfig(workers=2)),
                        agent=load_agent_config())
    assert oracle["resolve_rate"] == 1.0 and oracle["empty_patch_rate"] == 0.0 and oracle["pass@1"] == 1.0
    assert noop["resolve_rate"] == 0.0 and noop["empty_patch_rate"] == 1.0 and noop["pass@2"] == 0.0
    assert noop["trajectories"] == 6 and noop["exit_status"] == {"submitted": 6}
    rows = [json.loads(line) for line in (tmp_path / "oracle/predictions.jsonl").read_text().splitlines()]
    assert sorted(r["instance_id"] for r in rows) == sorted(t.instance_id for t in tasks)
    assert all(set(r) == {"instance_id", "model_name_or_path", "model_patch"} for r in rows)


@pytest.mark.slow
def test_killed_rollout_resumes_without_loss_or_duplicates(tmp_path):
    tasks = list(real_tasks().values())
    dataset = tmp_path / "d.jsonl"
    save_tasks(tasks, dataset)
    out = tmp_path / "out"
    cli = [sys.executable, "-m", "sweworld.cli.app", "rollout", "--dataset", str(dataset), "--policy", "noop",
           "--n-samples", "3", "--out", str(out)]
    proc = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    store = out / "trajectories.jsonl"
    while proc.poll() is None and (not store.exists() or len(store.read_text().splitlines()) < 2):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = [json.loads(line) for line in store.read_text().splitlines() if line.strip().endswith("}")]
    assert 2 <= len(before) < 9
    rerun = subprocess.run(cli, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    after = [json.loads(line) for line in store.read_text().splitlines()]
    keys = [(t["instance_id"], t["sample"]) for t in after]
    assert len(keys) == len(set(keys)) == 9
    assert all(t in after for t in before)


def test_old_observations_are_elided_then_the_context_limit_ends_the_episode(task, layer):
    script = [[("execute_bash", {"command": f"printf '%09000d' {i}"})] for i in range(6)] + [[("submit", {})]]
    with ChatServer(script) as server:
        traj = episode(task, layer, model_policy(server), context_budget=6000)
        last_prompt = server.requests[-1]["messages"]
    assert traj.exit_status == "submitted" and len(traj.steps) == 7
    elided = [m for m in last_prompt if m.get("content") == "[observation elided to fit the context budget]"]
    assert elided and last_prompt.index(elided[0]) < len(last_prompt) - 2  # the oldest go first
    assert len(json.dumps(last_prompt)) // 4 <= 6000
    with ChatServer([[("submit", {})]]) as server:
        traj = episode(task, layer, model_policy(server), context_budget=50)
    assert traj.exit_status == "context_limit" and not traj.steps


def test_time_limit_ends_the_episode(task, layer):
    script = [[("execute_bash", {"command": "sleep 1.2"})]] * 2 + [[("execute_bash", {"command": "true"})]]
    with ChatServer(script) as server:
        traj = episode(task, layer, model_policy(server), time_limit=1.0)
    assert traj.exit_status == "time_limit" and len(traj.steps) == 1


def test_replay_reproduces_a_stored_trajectory(tmp_path):
    from sweworld.agents.policies import ReplayPolicy
    from sweworld.runs.store import TrajectoryStore
    tasks = [real_tasks()["two"]]
    run_rollouts(tasks, OraclePolicy, RolloutConfig(out=tmp_path / "oracle", evaluate=False),
                 agent=load_agent_config())
    stored = {t.instance_id: t for t in TrajectoryStore(tmp_path / "oracle/trajectories.jsonl").load()}
    summary = run_rollouts(tasks, lambda: ReplayPolicy(stored), RolloutConfig(out=tmp_path / "replay"),
                           agent=load_agent_config())
    replayed = TrajectoryStore(tmp_path / "replay/trajectories.jsonl").load()[0]
    assert summary["resolve_rate"] == 1.0
    assert [s.tool for s in replayed.steps] == [s.tool for s in stored[tasks[0].instance_id].steps]
    assert replayed.patch == stored[tasks[0].instance_id].patch
