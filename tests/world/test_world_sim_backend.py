"""The sim and hybrid backends on a real repository (more-itertools 10.5.0 from PyPI, a real bug):
navigation runs for real and equals real mode byte for byte; code execution is SWT's prediction
(through a real local HTTP server), piped through the real utilities; evaluation is SWR's, laid out
as the harness's; hybrid audits count agreement."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from world_tasks import swr_reply, swt_reply

from chatserver import ChatServer
from realtasks import real_tasks
from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import OraclePolicy
from sweworld.backends.audits import summarize
from sweworld.backends.hybrid import HybridBackend
from sweworld.backends.real import RealBackend
from sweworld.backends.sim import SimBackend
from sweworld.core.config import RolloutConfig
from sweworld.harness import report as reports
from sweworld.harness.predictions import Prediction
from sweworld.harness.report import EXTRAS_FILE, read_report
from sweworld.runs.rollout import run_rollouts
from sweworld.world.config import WorldConfig

pytestmark = [pytest.mark.bwrap, pytest.mark.network]

NAVIGATION = ["ls", "ls docs | head", "git ls-files | head -5", "grep -n 'def first' more_itertools/more.py | head -3", "git status --short; git log --oneline | wc -l",
              "cat setup.cfg 2>/dev/null | head -5; find tests -name '*.py' | sort | head -4", "cd tests && pwd && ls | wc -l"]


def replies(swt: str, swr: str):
    """SWR requests (they ask for a test report) get ``swr``, every other request ``swt``."""
    return lambda body: swr if "test_report" in json.dumps(body["messages"]) else swt


def world(url: str) -> WorldConfig:
    config = WorldConfig.from_options(urls=[url], model="world")
    config.swt_model["backoff"] = config.swr_model["backoff"] = 0.0
    config.swt_model["cache"] = config.swr_model["cache"] = False
    return config


def report_writes(monkeypatch) -> list[Path]:
    """The files ``write_report`` writes from now on, one entry per write."""
    written: list[Path] = []
    write = reports.write_atomic
    monkeypatch.setattr(reports, "write_atomic", lambda path, text: (written.append(path), write(path, text))[1])
    return written


@pytest.fixture(scope="module")
def task():
    return real_tasks()["first"]


def test_navigation_runs_for_real_and_equals_real_mode_byte_for_byte(task):
    with ChatServer([]) as server:
        real_backend = RealBackend()
        sim = SimBackend(world=world(server.url), builder=real_backend.builder)
        with real_backend.open(task) as real, sim.open(task) as episode:
            for command in NAVIGATION:
                mine, theirs = episode.run(command), real.run(command)
                assert (mine.output, mine.exit_code) == (theirs.output, theirs.exit_code), command
                assert not mine.simulated
    assert server.requests == []  # nothing was predicted


def test_execution_is_predicted_and_piped_through_real_utilities(task):
    script = ChatServer([], default=replies(swt_reply("alpha\nbeta\n", "warn\n", 3), swr_reply("", 0)))
    with script as server, SimBackend(world=world(server.url)).open(task) as episode:
        piped = episode.run("python repro.py 2>/dev/null | grep beta")
        status = episode.run("python repro.py > out.txt; echo rc=$?; cat out.txt | wc -l")
        moved = episode.run("cd tests && python -m pytest -q; pwd")
        diff = episode.diff()
    assert piped.simulated and (piped.output, piped.exit_code) == ("beta\n", 0)
    assert status.output.splitlines() == ["warn", "rc=3", "2"]  # stderr on the terminal, stdout in the real file
    assert moved.output.endswith("/testbed/tests\n")
    assert "out.txt" in diff  # the redirection wrote a real file in the workspace
    assert len(server.requests) == 3


def test_a_simulation_failure_is_an_observation(task):
    with ChatServer([], default="not json at all") as server, SimBackend(world=world(server.url)).open(task) as episode:
        result = episode.run("python -c 'print(1)'")
    assert result.exit_code == -1 and result.sim_failure and "could not produce" in result.output


def test_sim_evaluation_is_laid_out_as_the_harness_and_empty_patches_make_no_call(task, tmp_path):
    report_text = "\n".join(f"PASSED {t}" for t in task.FAIL_TO_PASS + task.PASS_TO_PASS)
    with ChatServer([], default=replies(swt_reply(), swr_reply(report_text, 1))) as server:
        sim = SimBackend(world=world(server.url))
        gold = sim.evaluate(task, Prediction(instance_id=task.instance_id, model_patch=task.patch), tmp_path / "gold")
        calls = len(server.requests)
        empty = sim.evaluate(task, Prediction(instance_id=task.instance_id, model_patch=""), tmp_path / "empty")
    assert gold.resolved and gold.sim_probability == 1.0 and calls == 1
    saved = json.loads((tmp_path / "gold" / "report.json").read_text())[task.instance_id]
    assert saved["resolved"] is True and saved["tests_status"]["FAIL_TO_PASS"]["success"] == task.FAIL_TO_PASS
    assert report_text in (tmp_path / "gold" / "test_output.txt").read_text()
    assert not empty.resolved and len(server.requests) == calls  # no call for an empty patch


def test_sim_rollout_of_the_oracle_edits_for_real_and_is_rewarded_by_swr(task, tmp_path):
    report_text = "\n".join(f"PASSED {t}" for t in task.FAIL_TO_PASS + task.PASS_TO_PASS)
    with ChatServer([], default=replies(swt_reply(), swr_reply(report_text, 1))) as server:
        summary = run_rollouts([task], OraclePolicy, RolloutConfig(out=tmp_path / "out"),
                               agent=load_agent_config(), backend=SimBackend(world=world(server.url)))
    assert summary["resolve_rate"] == 1.0 and summary["backend"] == "sim"
    (traj,) = [json.loads(line) for line in (tmp_path / "out" / "trajectories.jsonl").read_text().splitlines()]
    assert traj["backend"] == "sim" and traj["patch"].strip()
    assert all(step["backend"] == "real" for step in traj["steps"])  # the editor always runs for real


def test_hybrid_audits_every_step_and_evaluation_at_rate_one(task, tmp_path, monkeypatch):
    report_text = "\n".join(f"PASSED {t}" for t in task.FAIL_TO_PASS + task.PASS_TO_PASS)
    written = report_writes(monkeypatch)
    with ChatServer([], default=replies(swt_reply("hello\n"), swr_reply(report_text, 1))) as server:
        hybrid = HybridBackend(world=world(server.url), audit_rate=1.0, traces=tmp_path / "traces.jsonl")
        with hybrid.open(task) as episode:
            agree = episode.run("python -c 'print(\"hello\")'")
            disagree = episode.run("python -c 'import sys; sys.exit(4)'")
        report = hybrid.evaluate(task, Prediction(instance_id=task.instance_id, model_patch=task.patch),
                                 tmp_path / "eval")
    assert agree.output == "hello\n" and disagree.output == "hello\n"  # the agent sees the simulation
    assert read_report(tmp_path / "eval").audits == report.audits  # carried by the report on disk
    assert written.count(tmp_path / "eval" / EXTRAS_FILE) == 1  # written once, after the audit
    audits = summarize([episode.audits, report.audits])
    assert audits["steps"]["audited"] == 2 and audits["steps"]["agreed"] == 1
    assert audits["evaluations"] == {**audits["evaluations"], "audited": 1, "agreed": 1}
    low, high = audits["steps"]["wilson95"]
    assert 0.0 < low < 0.5 < high < 1.0
    records = [json.loads(line) for line in (tmp_path / "traces.jsonl.audits.jsonl").read_text().splitlines()]
    assert {r["kind"] for r in records} == {"steps", "evaluations"}
    assert any(r["kind"] == "steps" and not r["agreed"] and r["real"]["exit_code"] == 4 for r in records)


def test_swe_env_and_the_mini_swe_agent_adapter_run_on_the_sim_backend(task, tmp_path):
    from sweworld.integrations.gym import SWEEnv
    from sweworld.integrations.minisweagent import SweworldEnvironment

    report_text = "\n".join(f"PASSED {t}" for t in task.FAIL_TO_PASS + task.PASS_TO_PASS)
    with ChatServer([], default=replies(swt_reply("predicted\n"), swr_reply(report_text, 1))) as server:
        sim = SimBackend(world=world(server.url))
        env = SWEEnv([task], backend=sim, log_dir=tmp_path / "gym")
        env.reset()
        observation, *_ = env.step({"tool": "execute_bash", "arguments": {"command": "python -c 'print(1)'"}})
        for tool, arguments, _ in OraclePolicy().actions(task):
            env.step({"tool": tool, "arguments": arguments})
        _, reward, terminated, _, info = env.step({"tool": "submit", "arguments": {}})
        env.close()
        adapter = SweworldEnvironment(task=task, backend=sim)
        executed = adapter.execute({"command": "python -c 'print(1)' | wc -l"})
        adapter.close()
    assert "predicted" in observation
    assert terminated and reward == 1.0 and info["report"]["resolved"]
    assert executed["output"].strip() == "1" and executed["returncode"] == 0


def test_hybrid_routes_unsure_predictions_to_real_execution(task, tmp_path):
    """A prediction under --route-below runs for real (the agent sees the real result); the others
    are simulated and, at audit rate 1, audited: the summary gives the share that ran for real and
    the agreement the agent experienced."""
    unsure = json.dumps({"stdout": "guess\n", "stderr": "", "exit_code": 0, "confidence": 0.3})
    sure = json.dumps({"stdout": "hello\n", "stderr": "", "exit_code": 0, "confidence": 0.95})

    def reply(body):
        text = json.dumps(body["messages"])
        return sure if "hello" in text else unsure  # the second prompt holds the first step as history
    with ChatServer([], default=reply) as server:
        hybrid = HybridBackend(world=world(server.url), audit_rate=1.0, route_below=0.5)
        with hybrid.open(task) as episode:
            routed = episode.run("python -c 'import sys; sys.exit(4)'")
            simulated = episode.run("python -c 'print(\"hello\")'")
    assert routed.exit_code == 4 and not routed.simulated  # the real result
    assert simulated.simulated and simulated.output == "hello\n"
    steps = summarize([episode.audits])["steps"]
    assert (steps["simulated"], steps["ran_real"], steps["share_real"]) == (2, 1, 0.5)
    assert (steps["audited"], steps["agreed"], steps["agreement_with_routing"]) == (1, 1, 1.0)


def test_hybrid_routes_an_undecided_evaluation_to_the_real_harness(task, tmp_path, monkeypatch):
    """An evaluation whose SWR probability is not decisive (two samples that disagree: 0.5) is graded
    by the real harness in the same directory; the report written there (once) is the real one and
    carries the routing count."""
    passed = "\n".join(f"PASSED {t}" for t in task.FAIL_TO_PASS + task.PASS_TO_PASS)
    failed = "\n".join([*(f"FAILED {t}" for t in task.FAIL_TO_PASS), *(f"PASSED {t}" for t in task.PASS_TO_PASS)])
    verdicts = itertools.cycle([swr_reply(passed, 1), swr_reply(failed, 0)])
    written = report_writes(monkeypatch)
    with ChatServer([], default=lambda body: next(verdicts)) as server:
        config = world(server.url)
        config.swr.k = 2
        hybrid = HybridBackend(world=config, audit_rate=0.0, route_below=0.9)
        report = hybrid.evaluate(task, Prediction(instance_id=task.instance_id, model_patch=task.patch),
                                 tmp_path / "eval")
    assert report.resolved and getattr(report, "sim_probability", None) is None  # the real harness's
    assert report.audits["evaluations"] == {**report.audits["evaluations"], "simulated": 1, "ran_real": 1}
    on_disk = read_report(tmp_path / "eval")
    assert on_disk.audits == report.audits and on_disk.resolved
    assert written.count(tmp_path / "eval" / EXTRAS_FILE) == 1
