"""The Ray runner on a local Ray (2 CPUs): rollouts, evaluation, validation, synthesis and ``world
collect`` give what the local runner gives, written by the driver into the same stores with the
same resume logic; a worker killed mid-item has its item run again and nothing stored twice.

Real episodes of the demo's instances (their environments are normally in the test cache).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from raycluster import EMPTY, FIXED, demo_tasks, local_ray
from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import OraclePolicy
from sweworld.backends.real import RealBackend
from sweworld.config import EvalConfig, RolloutConfig, RunnerConfig, Timeouts, ValidateConfig
from sweworld.harness.predictions import Prediction
from sweworld.runs.eval import evaluate_run
from sweworld.runs.rollout import run_rollouts
from sweworld.runs.runner import LocalRunner, make_runner
from sweworld.runs.store import TrajectoryStore
from sweworld.runs.validate import validate_tasks

pytestmark = [pytest.mark.ray, pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow,
              pytest.mark.xdist_group("ray")]


@pytest.fixture(scope="module")
def ray_cluster(sweworld_home):
    """One local Ray for the module; items pickled from this module travel by value."""
    with local_ray(sweworld_home, by_value=sys.modules[__name__]) as ray:
        yield ray


@pytest.fixture(scope="module")
def tasks():
    return demo_tasks()


def stored(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]


def rollouts(tasks, out: Path, runner, make_policy=OraclePolicy, done=None) -> dict:
    return run_rollouts(tasks, make_policy,
                        RolloutConfig(out=out, n_samples=2, runner=RunnerConfig(workers=2)),
                        agent=load_agent_config(None), backend=RealBackend(), runner=runner, on_done=done)


def test_ray_rollouts_store_what_local_rollouts_store_and_resume(ray_cluster, tasks, tmp_path):
    local = rollouts(tasks, tmp_path / "local", LocalRunner())
    ray = rollouts(tasks, tmp_path / "ray", make_runner("ray"))
    assert ray == local
    assert ray["trajectories"] == 4 and ray["resolve_rate"] == 0.5 and ray["backend"] == "real"
    rewards = {(r["instance_id"], r["sample"]): r["reward"] for r in stored(tmp_path / "ray")}
    assert rewards == {(FIXED, 0): 1.0, (FIXED, 1): 1.0, (EMPTY, 0): 0.0, (EMPTY, 1): 0.0}
    again: list = []
    assert rollouts(tasks, tmp_path / "ray", make_runner("ray"), done=again.append) == ray
    assert again == [] and len(stored(tmp_path / "ray")) == 4  # every sample was done: nothing ran


class StallOnce(OraclePolicy):
    """The oracle; the first episode of FIXED to start writes its process id to ``marker`` and waits
    there to be killed (the item's retry finds the marker and runs normally)."""

    def __init__(self, marker: str):
        super().__init__()
        self.marker = Path(marker)

    def reset(self, task) -> None:
        super().reset(task)
        if task.instance_id != FIXED:
            return
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        while True:  # killed here
            time.sleep(0.1)


def kill_when_written(marker: Path, killed: list[int], stop: threading.Event) -> None:
    while not (marker.exists() and marker.read_text()):
        if stop.wait(0.05):  # the run ended without stalling
            return
    pid = int(marker.read_text())
    os.kill(pid, signal.SIGKILL)
    killed.append(pid)


def test_a_killed_worker_has_its_item_retried_and_nothing_stored_twice(ray_cluster, tasks, tmp_path):
    marker, killed, stop = tmp_path / "stalled.pid", [], threading.Event()
    killer = threading.Thread(target=kill_when_written, args=(marker, killed, stop), daemon=True)
    killer.start()
    try:
        summary = rollouts(tasks, tmp_path / "run", make_runner("ray"), make_policy=partial(StallOnce, str(marker)))
    finally:
        stop.set()
        killer.join()
    assert killed and killed[0] != os.getpid()
    with pytest.raises(ProcessLookupError):
        os.kill(killed[0], 0)  # the worker is gone
    records = stored(tmp_path / "run")
    keys = [(r["instance_id"], r["sample"]) for r in records]
    assert sorted(keys) == [(FIXED, 0), (FIXED, 1), (EMPTY, 0), (EMPTY, 1)]  # each once
    assert all(r["error"] is None for r in records)
    assert {k: r["reward"] for k, r in zip(keys, records, strict=True) if k[0] == FIXED} == {(FIXED, 0): 1.0,
                                                                                             (FIXED, 1): 1.0}
    assert summary["trajectories"] == 4 and summary["resolve_rate"] == 0.5
    assert TrajectoryStore(tmp_path / "run" / "trajectories.jsonl").done() == set(keys)


def test_ray_evaluation_writes_the_harness_layout_and_resumes(ray_cluster, tasks, tmp_path):
    preds = {t.instance_id: Prediction(instance_id=t.instance_id, model_name_or_path="gold", model_patch=t.patch)
             for t in tasks}
    seen: list = []
    summary, _ = evaluate_run(tasks, preds,
                              EvalConfig(run_id="r", logs_dir=tmp_path / "logs", out=tmp_path, runner=RunnerConfig(workers=2)),
                              model="gold", backend=RealBackend(), runner=make_runner("ray"),
                              on_done=seen.append)
    assert summary["resolved_ids"] == [FIXED] and summary["empty_patch_ids"] == [EMPTY]
    assert sorted(r.instance_id for r in seen) == [FIXED, EMPTY]
    report = tmp_path / "logs" / "run_evaluation" / "r" / "gold" / FIXED / "report.json"
    assert json.loads(report.read_text())[FIXED]["resolved"] is True
    written = report.stat().st_mtime_ns
    again, _ = evaluate_run(tasks, preds,
                            EvalConfig(run_id="r", logs_dir=tmp_path / "logs", out=tmp_path, runner=RunnerConfig(workers=2)),
                            model="gold", backend=RealBackend(), runner=make_runner("ray"))
    assert again == summary and report.stat().st_mtime_ns == written  # finished: not evaluated again


def test_ray_validation_keeps_what_local_validation_keeps(ray_cluster, tasks):
    fixed = tasks[:1]
    run = ValidateConfig(timeouts=Timeouts(evaluation=600))
    local = validate_tasks(fixed, run, backend=RealBackend())
    ray = validate_tasks(fixed, run, backend=RealBackend(), runner=make_runner("ray"))
    assert [v.kept for v in ray] == [v.kept for v in local] == [True]
    assert ray[0].fail_to_pass == local[0].fail_to_pass and ray[0].pass_to_pass == local[0].pass_to_pass


def test_ray_synthesis_decides_what_local_synthesis_decides(ray_cluster, tmp_path):
    from sweworld.synth.pipeline import SynthOptions, synthesize
    from sweworld.synth.release import ReleaseSpec

    spec, options = ReleaseSpec(repo="pypi:cachetools==5.5.0"), SynthOptions(max_instances=2, seed=7, workers=2,
                                                                              combine_share=0.0)
    local = synthesize(spec, options, work=tmp_path / "local")
    ray = synthesize(spec, options, work=tmp_path / "ray", runner=make_runner("ray"))
    assert [t.model_dump() for t in ray.instances] == [t.model_dump() for t in local.instances]
    assert len(ray.instances) == 2
    assert [(o.key, o.status) for o in ray.outcomes] == [(o.key, o.status) for o in local.outcomes]
    outcomes = [json.loads(line)["outcome"]["key"] for line in (tmp_path / "ray" / "outcomes.jsonl").read_text().splitlines()]
    assert len(outcomes) == len(set(outcomes))  # the driver wrote each outcome once


def test_ray_mining_decides_what_local_mining_decides(ray_cluster, tmp_path):
    from sweworld.cli.demo.mine import build_history
    from sweworld.envs import EnvBuilder
    from sweworld.mine.pipeline import MineOptions
    from sweworld.mine.run import mine_repository
    from sweworld.repos import RepoStore

    history = build_history(tmp_path / "history")
    merge, refactor = (history.git("log", "--format=%H", "--grep", pattern, "-n", "1")
                       for pattern in ("Merge pull request #901", "Comment ilen"))
    options = MineOptions(commits=[merge, refactor], timeout=300)
    runs = {}
    for name in ("local", "ray"):
        repos = RepoStore()
        result, _summary = mine_repository(str(history.root), tmp_path / name / "tasks.jsonl", options,
                                          backend=RealBackend(EnvBuilder(repos)), repos=repos,
                                          name="more-itertools/more-itertools", runner=make_runner(name))
        runs[name] = [(e["commit"], e["kept"], e["drop"], (e.get("row") or {}).get("FAIL_TO_PASS")) for e in result.entries]
    assert runs["ray"] == runs["local"]
    assert [kept for _, kept, _, _ in runs["ray"]] == [True, False] and runs["ray"][1][2] == "no FAIL_TO_PASS"


def test_world_collect_on_the_running_cluster_from_the_cli(ray_cluster, tmp_path, sweworld_home):
    address = ray_cluster.get_runtime_context().gcs_address
    out = tmp_path / "traces"
    result = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "world", "collect", "--dataset", "demo",
                             "--instance-ids", FIXED, "--policy", "oracle", "-k", "2", "--workers", "2",
                             "--runner", "ray", "--ray-address", address, "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "SWEWORLD_HOME": str(sweworld_home)})
    assert result.returncode == 0, result.stdout
    assert json.loads((out / "summary.json").read_text())["resolve_rate"] == 1.0
    records = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
    evaluations = [r for r in records if r["kind"] == "eval"]
    assert len(evaluations) == 2 and all(r["task"]["instance_id"] == FIXED for r in evaluations)
    assert len({r["episode"] for r in records if r["kind"] == "step"}) == 2  # each sample's episode, once
    assert "traces:" in result.stdout


def test_runner_options_are_checked_before_any_work(tmp_path):
    from typer.testing import CliRunner

    from sweworld.cli.app import app

    stray = CliRunner().invoke(app, ["rollout", "--dataset", "demo", "--ray-address", "auto", "--out", str(tmp_path)])
    assert stray.exit_code == 2 and "--ray-address auto is set but the runner is 'local'" in stray.output
    unknown = CliRunner().invoke(app, ["eval", "--dataset", "demo", "--runner", "spark"])
    assert unknown.exit_code == 2 and "'spark' is not one of local, ray" in unknown.output


def test_an_environment_group_has_one_home_node_and_its_items_ask_for_it_softly():
    pytest.importorskip("ray")
    from sweworld.runs.ray_runner import RayPool
    from sweworld.runs.runner import ROLLOUT

    pool = RayPool(None, 2, ROLLOUT, 3)
    pool._nodes = ["a" * 56, "b" * 56, "c" * 56]  # what __enter__ reads from ray.nodes()
    homes = {g: pool.home(g) for g in (f"owner/repo{i}@1.0" for i in range(30))}
    assert homes == {g: pool.home(g) for g in homes} and len(set(homes.values())) == 3
    options = pool.options("owner/repo1@1.0")
    strategy = options["scheduling_strategy"]
    assert strategy.node_id == homes["owner/repo1@1.0"] and strategy.soft is True
    assert options["num_cpus"] == 1.0 and options["memory"] == 2**30 and options["max_retries"] == 3
    assert "scheduling_strategy" not in pool.options(None)
