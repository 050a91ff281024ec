"""Traces of real rollouts (bubblewrap sandboxes over a built environment of more-itertools): every
command with SWT's context and the real output, every evaluation with SWR's context and the real
verdict; a sim rollout on a replay of them sees what the real one saw; `sweworld world collect`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner
from world_tasks import world_model

from realtasks import real_tasks
from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import OraclePolicy
from sweworld.backends.real import RealBackend
from sweworld.backends.sim import SimBackend
from sweworld.cli.app import app
from sweworld.core.config import RolloutConfig
from sweworld.envs import EnvBuilder
from sweworld.runs.rollout import run_rollouts
from sweworld.runs.store import TrajectoryStore
from sweworld.tasks.rows import dump_row
from sweworld.world.context import INLINE_PATH
from sweworld.world.replay import ReplayServer
from sweworld.world.swr import SWR
from sweworld.world.swt import SWT
from sweworld.world.traces import TraceStore

pytestmark = [pytest.mark.bwrap, pytest.mark.network]
REPRO = "python -c 'from more_itertools import first; print(first([], \"d\"))'"
LOOK = "grep -n 'def first' more_itertools/more.py"
TESTS = "python -m pytest -q -p no:cacheprovider tests/test_more.py -k FirstTests 2>&1 | tail -1"


class LookFixRun(OraclePolicy):
    """Reproduce, look, apply the gold patch with the editor, reproduce again, run the tests."""

    name = "look-fix-run"

    def actions(self, task):
        def bash(command):
            return ("execute_bash", {"command": command}, "")
        return [bash(REPRO), bash(LOOK), *super().actions(task), bash(REPRO), bash(TESTS)]


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """A real rollout with traces: (task, run directory, trace store)."""
    task = real_tasks()["first"]
    out = tmp_path_factory.mktemp("collect") / "real"
    store = TraceStore(out / "traces.jsonl")
    summary = run_rollouts([task], LookFixRun, RolloutConfig(out=out), agent=load_agent_config(),
                           backend=RealBackend(traces=store.path))
    assert summary["resolve_rate"] == 1.0
    return task, out, store


def test_a_real_rollout_records_steps_with_contexts_and_its_evaluation(collected):
    task, _, store = collected
    every = store.steps()
    probes = [s for s in every if s.command.startswith("if test -d ")]  # the editor's own commands are recorded too
    steps = [s for s in every if s not in probes]
    assert [s.command for s in steps] == [REPRO, LOOK, REPRO, TESTS] and len(probes) == 2
    assert [s.routed for s in steps] == ["sim", "real", "sim", "sim"] and {s.routed for s in probes} == {"real"}
    assert [s.step for s in every] == list(range(6)) and len({s.episode for s in every}) == 1
    assert steps[0].exit_code == 1 and "ValueError" in steps[0].output
    assert (steps[2].output, steps[2].exit_code) == ("d\n", 0) and "passed" in steps[3].output
    assert "def first(" in steps[1].output and {s.backend for s in steps} == {"real"}
    before, after = steps[0].context, steps[2].context
    assert (before.workdir, before.diff, before.history, before.task.instance_id) == ("/testbed", "", [], task.instance_id)
    assert [f.path for f in before.files] == [INLINE_PATH] and "first([], \"d\")" in before.files[0].content
    assert "+    if default is _marker:" in after.diff
    assert [h.command for h in after.history] == [REPRO, LOOK, *(p.command for p in probes)]
    assert after.history[0].exit_code == 1 and "ValueError" in after.history[0].output
    (evaluation,) = store.evals()
    assert (evaluation.resolved, evaluation.report["resolved"], evaluation.patch_applies) == (True, True, True)
    assert evaluation.patch == after.diff and evaluation.context.patch == evaluation.patch
    assert evaluation.context.fail_to_pass == task.FAIL_TO_PASS and "pytest" in evaluation.context.test_command
    assert [f.path for f in evaluation.context.test_files] == ["tests/test_more.py"]
    assert "SWEWORLD START TEST OUTPUT <nonce>" in evaluation.test_output
    assert "PASSED tests/test_more.py::FirstTests::test_empty" in evaluation.test_output


def test_a_sim_rollout_on_the_replayed_traces_sees_what_the_real_one_saw(collected, tmp_path):
    task, out, store = collected
    server = ReplayServer(store.path)
    with server as url:
        sim = SimBackend(EnvBuilder().repos, swt=SWT(world_model(url)), swr=SWR(world_model(url, temperature=0.7)))
        summary = run_rollouts([task], LookFixRun, RolloutConfig(out=tmp_path / "sim"),
                               agent=load_agent_config(), backend=sim)
    (real,), (simulated,) = TrajectoryStore(out / "trajectories.jsonl").load(), \
        TrajectoryStore(tmp_path / "sim" / "trajectories.jsonl").load()
    assert [s.observation for s in simulated.steps] == [s.observation for s in real.steps]
    assert [s.backend for s in simulated.steps if s.tool == "execute_bash"] == ["sim", "real", "sim", "sim"]
    assert (summary["resolve_rate"], simulated.patch) == (1.0, real.patch)
    # the two python commands are exact hits; the pytest one is asked for without its `| tail -1`
    assert server.stats["swt"] == {"hit": 2, "fallback": 1, "miss": 0}
    assert server.stats["swr"] == {"hit": 1, "fallback": 0, "miss": 0}


def test_the_collect_command_records_a_replayed_policy(collected, tmp_path):
    task, out, _ = collected
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(json.dumps(dump_row(task)) + "\n")
    done = CliRunner().invoke(app, ["world", "collect", "--dataset", str(dataset), "--policy", "replay", "--replay",
                                    str(out / "trajectories.jsonl"), "--out", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    assert "6 steps, 3 of them code execution; 1 evaluations" in done.output
    records = TraceStore(tmp_path / "run" / "traces.jsonl").load()
    assert [r.kind for r in records] == ["step"] * 6 + ["eval"] and records[-1].resolved
    assert (tmp_path / "run" / "trajectories.jsonl").exists() and (tmp_path / "run" / "summary.json").exists()
