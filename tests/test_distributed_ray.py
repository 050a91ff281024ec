"""The Ray runner on a cluster of three Ray nodes on this machine (``raycluster.ray_nodes``: a head
without CPUs, three one-CPU nodes, each node with its own ``SWEWORLD_HOME``): rollouts, evaluation,
validation, mining, synthesis, hybrid audits and ``world collect`` give what the local runner gives,
written by the driver alone into the same stores with the same resume logic. Each environment is
built on one node (its group's home), nothing but caches is written on any node, a worker or a
whole node killed mid-item has its item run again with nothing lost or stored twice, and a driver
killed mid-run resumes.

Real episodes of the demo's instances: the local runs use the test cache's environments, each node
builds its own (once per module).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from raycluster import EMPTY, FIXED, NodeHomes, demo_tasks, ray_nodes
from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import OraclePolicy
from sweworld.backends.real import RealBackend
from sweworld.core.config import EvalConfig, RolloutConfig, RunnerConfig, Timeouts, ValidateConfig
from sweworld.harness.predictions import Prediction
from sweworld.parallel.runner import LocalRunner, make_runner
from sweworld.runs.eval import evaluate_run
from sweworld.runs.rollout import run_rollouts
from sweworld.runs.store import TrajectoryStore
from sweworld.runs.validate import validate_tasks

pytestmark = [pytest.mark.ray, pytest.mark.bwrap, pytest.mark.network, pytest.mark.slow,
              pytest.mark.xdist_group("ray")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, sweworld_home) -> NodeHomes:
    """Three Ray nodes for the module; items pickled from this module travel by value."""
    with ray_nodes(tmp_path_factory.mktemp("nodes"), sweworld_home, 3, by_value=sys.modules[__name__]) as nodes:
        yield nodes


@pytest.fixture
def ray_cluster(cluster):
    """The cluster, checked after each test: no node holds anything but caches."""
    yield cluster.ray
    assert cluster.outside_caches() == []


def comparable(record: dict) -> dict:
    """A stored trajectory without what differs between two runs of the same episode: timings and
    the tool calls' random ids."""
    steps = [{k: v for k, v in step.items() if k != "duration"} for step in record["steps"]]
    messages = json.loads(re.sub(r"call_[0-9a-f]{24}", "call_<id>", json.dumps(record["messages"])))
    return {**{k: v for k, v in record.items() if k != "timings"}, "steps": steps, "messages": messages}


def untimed(text: str) -> str:
    """``text`` with durations (a test runner's "in 0.12s") masked, and the rule pytest pads around
    them."""
    return re.sub(r"=+", "=", re.sub(r"\b\d+(\.\d+)?s\b", "<t>s", text))


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def env_nodes(cluster: NodeHomes) -> dict[str, list[int]]:
    """Each environment key built on the cluster -> the nodes that hold it."""
    found: dict[str, list[int]] = {}
    for index, home in enumerate(cluster.homes):
        for meta in (home / "envs").glob("*/env.json"):
            found.setdefault(meta.parent.name, []).append(index)
    return found


@pytest.fixture(scope="module")
def tasks():
    return demo_tasks()


def stored(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]


def rollouts(tasks, out: Path, runner, make_policy=OraclePolicy, done=None) -> dict:
    return run_rollouts(tasks, make_policy,
                        RolloutConfig(out=out, n_samples=2, runner=RunnerConfig(workers=2)),
                        agent=load_agent_config(None), backend=RealBackend(), runner=runner, on_done=done)


def test_ray_rollouts_store_what_local_rollouts_store_and_resume(cluster, ray_cluster, tasks, tmp_path):
    local = rollouts(tasks, tmp_path / "local", LocalRunner())
    ray = rollouts(tasks, tmp_path / "ray", make_runner("ray"))
    assert ray == local
    assert ray["trajectories"] == 4 and ray["resolve_rate"] == 0.5 and ray["backend"] == "real"
    rewards = {(r["instance_id"], r["sample"]): r["reward"] for r in stored(tmp_path / "ray")}
    assert rewards == {(FIXED, 0): 1.0, (FIXED, 1): 1.0, (EMPTY, 0): 0.0, (EMPTY, 1): 0.0}
    by_key = {name: sorted((comparable(r) for r in stored(tmp_path / name)), key=lambda r: (r["instance_id"], r["sample"]))
              for name in ("local", "ray")}
    assert by_key["ray"] == by_key["local"]  # the same trajectories, step by step
    assert files_under(tmp_path / "ray" / "eval") == files_under(tmp_path / "local" / "eval") != []
    homes = env_nodes(cluster)
    assert len(homes) == 2 and all(len(nodes) == 1 for nodes in homes.values()), homes  # one node each
    again: list = []
    assert rollouts(tasks, tmp_path / "ray", make_runner("ray"), done=again.append) == ray
    assert again == [] and len(stored(tmp_path / "ray")) == 4  # every sample was done: nothing ran


class StallOnce(OraclePolicy):
    """The oracle; the first episode of FIXED to start writes its process id and Ray node id to
    ``marker`` and waits there to be killed (the item's retry finds the marker and runs normally)."""

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
        import ray
        os.write(fd, f"{os.getpid()} {ray.get_runtime_context().get_node_id()}".encode())
        os.close(fd)
        while True:  # killed here
            time.sleep(0.1)


def kill_when_written(marker: Path, killed: list, stop: threading.Event, kill: Callable[[int, str], None]) -> None:
    while not (marker.exists() and marker.read_text()):
        if stop.wait(0.05):  # the run ended without stalling
            return
    pid, node = marker.read_text().split()
    kill(int(pid), node)
    killed.append((int(pid), node))


def stalled_run(tasks, out: Path, kill: Callable[[int, str], None]) -> tuple[dict, list]:
    """Rollouts on the cluster whose first episode of FIXED stalls until ``kill(pid, node)``."""
    marker, killed, stop = out.parent / f"{out.name}.stalled", [], threading.Event()
    killer = threading.Thread(target=kill_when_written, args=(marker, killed, stop, kill), daemon=True)
    killer.start()
    try:
        summary = rollouts(tasks, out, make_runner("ray"), make_policy=partial(StallOnce, str(marker)))
    finally:
        stop.set()
        killer.join()
    return summary, killed


def each_sample_once(out: Path, summary: dict) -> None:
    records = stored(out)
    keys = [(r["instance_id"], r["sample"]) for r in records]
    assert sorted(keys) == [(FIXED, 0), (FIXED, 1), (EMPTY, 0), (EMPTY, 1)]  # each once: none lost, none twice
    assert all(r["error"] is None for r in records)
    assert {k: r["reward"] for k, r in zip(keys, records, strict=True) if k[0] == FIXED} == {(FIXED, 0): 1.0,
                                                                                             (FIXED, 1): 1.0}
    assert summary["trajectories"] == 4 and summary["resolve_rate"] == 0.5
    assert TrajectoryStore(out / "trajectories.jsonl").done() == set(keys)


def test_a_killed_worker_has_its_item_retried_and_nothing_stored_twice(ray_cluster, tasks, tmp_path):
    summary, killed = stalled_run(tasks, tmp_path / "run", lambda pid, _node: os.kill(pid, signal.SIGKILL))
    assert killed and killed[0][0] != os.getpid()
    with pytest.raises(ProcessLookupError):
        os.kill(killed[0][0], 0)  # the worker is gone
    each_sample_once(tmp_path / "run", summary)


def test_a_node_killed_mid_run_has_its_items_run_on_the_others(cluster, ray_cluster, tasks, tmp_path):
    """The node running FIXED's first episode is ended (its raylet and workers): Ray runs the item
    again on another node, which builds the environment it lacks; one record per sample."""
    try:
        summary, killed = stalled_run(tasks, tmp_path / "run", lambda _pid, node: cluster.kill(node))
        assert killed and killed[0][1] not in cluster.ids  # that node is gone
        each_sample_once(tmp_path / "run", summary)
    finally:
        while len(cluster.alive()) < 3:
            cluster.add()  # the next tests get three nodes again


def test_a_driver_killed_mid_run_resumes_where_it_stopped(ray_cluster, tmp_path, sweworld_home):
    """``sweworld rollout --runner ray`` killed (SIGKILL) once its first trajectory is stored: the same
    command again runs only what is missing; every sample stored once."""
    out = tmp_path / "run"
    command = [sys.executable, "-m", "sweworld.cli.app", "rollout", "--dataset", "demo", "-i", FIXED, "-i", EMPTY,
               "--policy", "oracle", "-k", "3", "--workers", "1", "--runner", "ray",
               "--ray-address", ray_cluster.get_runtime_context().gcs_address, "--out", str(out)]
    env = {**os.environ, "SWEWORLD_HOME": str(sweworld_home)}
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    trajectories = out / "trajectories.jsonl"
    while driver.poll() is None and not (trajectories.exists() and trajectories.read_text().strip()):
        time.sleep(0.05)
    driver.kill()
    driver.wait()
    first = len(stored(out))
    assert 1 <= first < 6  # killed mid-run
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert result.returncode == 0, result.stdout
    keys = [(r["instance_id"], r["sample"]) for r in stored(out)]
    assert sorted(keys) == sorted((i, k) for i in (FIXED, EMPTY) for k in range(3))
    assert json.loads((out / "summary.json").read_text())["trajectories"] == 6


def test_a_driver_whose_output_directory_no_node_can_see_gets_every_file(ray_cluster, tmp_path, sweworld_home):
    """The driver runs in a mount namespace of its own where ``--out`` is a private tmpfs (no node
    sees it: a file a worker wrote there would land in the host's empty directory instead): the
    run's trajectories, predictions, summary and every evaluation's log layout are all there."""
    hidden, copied = tmp_path / "driver-only", tmp_path / "copied"
    hidden.mkdir()
    rollout = [sys.executable, "-m", "sweworld.cli.app", "rollout", "--dataset", "demo", "-i", FIXED, "-i", EMPTY,
               "--policy", "oracle", "-k", "2", "--workers", "3", "--runner", "ray",
               "--ray-address", ray_cluster.get_runtime_context().gcs_address, "--out", str(hidden / "run")]
    script = f"{shlex.join(rollout)} && cp -a {shlex.quote(str(hidden / 'run'))} {shlex.quote(str(copied))}"
    result = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(hidden), "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "SWEWORLD_HOME": str(sweworld_home)})
    assert result.returncode == 0, result.stdout
    assert list(hidden.iterdir()) == []  # nothing was written where the nodes could see it
    assert len(stored(copied)) == 4 and json.loads((copied / "summary.json").read_text())["resolve_rate"] == 0.5
    for sample in (0, 1):
        logs = copied / "eval" / f"{FIXED}.{sample}"
        assert {"report.json", "patch.diff", "eval.sh", "test_output.txt", "run_instance.log"} <= set(files_under(logs))
        assert json.loads((logs / "report.json").read_text())[FIXED]["resolved"] is True


def test_hybrid_audits_under_ray_equal_those_under_local(ray_cluster, tasks, tmp_path):
    """The same hybrid run (embedded world, audit rate 0.5, seed 0) audits the same steps and
    evaluations under either runner: the counts each trajectory carries, the summary's, the records."""
    from sweworld.agents.policies import TestingOraclePolicy
    from sweworld.backends.hybrid import HybridBackend
    from sweworld.world.config import WorldConfig

    world = WorldConfig.from_options(urls=None, kind="embedded", dataset="demo")
    runs = {}
    for name, runner in (("local", LocalRunner()), ("ray", make_runner("ray"))):
        backend = HybridBackend(world=world, audit_rate=0.5, traces=tmp_path / name / "hybrid.jsonl")
        summary = run_rollouts(tasks, TestingOraclePolicy, RolloutConfig(out=tmp_path / name, n_samples=2,
                                                                         runner=RunnerConfig(workers=2)),
                               agent=load_agent_config(None), backend=backend, runner=runner)
        records = [json.loads(line) for line in (tmp_path / name / "hybrid.jsonl.audits.jsonl").read_text().splitlines()]
        runs[name] = (summary["audits"], sorted((r["instance_id"], r["sample"], r["audits"]) for r in stored(tmp_path / name)),
                      sorted((r["kind"], r["instance_id"], r.get("command", ""), r["agreed"]) for r in records))
    assert runs["ray"] == runs["local"]
    audits = runs["ray"][0]
    assert audits["steps"]["audited"] > 0 and audits["evaluations"]["audited"] > 0


def evaluation(tasks, logs: Path, runner, on_done=None) -> dict:
    preds = {t.instance_id: Prediction(instance_id=t.instance_id, model_name_or_path="gold", model_patch=t.patch)
             for t in tasks}
    summary, _ = evaluate_run(tasks, preds, EvalConfig(run_id="r", logs_dir=logs, out=logs, runner=RunnerConfig(workers=2)),
                              model="gold", backend=RealBackend(), runner=runner, on_done=on_done)
    return summary


def test_ray_evaluation_writes_the_harness_layout_on_the_driver_and_resumes(ray_cluster, tasks, tmp_path):
    seen: list = []
    summary = evaluation(tasks, tmp_path / "logs", make_runner("ray"), on_done=seen.append)
    assert summary["resolved_ids"] == [FIXED] and summary["empty_patch_ids"] == [EMPTY]
    assert sorted(r.instance_id for r in seen) == [FIXED, EMPTY]
    assert evaluation(tasks, tmp_path / "local", LocalRunner()) == summary
    run = tmp_path / "logs" / "run_evaluation" / "r" / "gold"
    assert files_under(run) == files_under(tmp_path / "local" / "run_evaluation" / "r" / "gold")
    report = run / FIXED / "report.json"
    assert json.loads(report.read_text())[FIXED]["resolved"] is True
    assert report.read_text() == (tmp_path / "local" / "run_evaluation" / "r" / "gold" / FIXED / "report.json").read_text()
    written = report.stat().st_mtime_ns
    assert evaluation(tasks, tmp_path / "logs", make_runner("ray")) == summary
    assert report.stat().st_mtime_ns == written  # finished: not evaluated again


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
    assert [kept for _, kept, _, _ in runs["ray"]] == [True, False] and runs["ray"][1][2] == "no FAIL_TO_PASS: the tests pass before the fix too"


def collect(out: Path, home: Path, *runner: str) -> list[dict]:
    """``sweworld world collect`` of FIXED (oracle, 2 samples) on ``runner``'s options; its records."""
    result = subprocess.run([sys.executable, "-m", "sweworld.cli.app", "world", "collect", "--dataset", "demo",
                             "--instance-ids", FIXED, "--policy", "oracle", "-k", "2", "--workers", "2",
                             *runner, "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "SWEWORLD_HOME": str(home)})
    assert result.returncode == 0, result.stdout
    assert "traces:" in result.stdout
    assert json.loads((out / "summary.json").read_text())["resolve_rate"] == 1.0
    return [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]


def test_world_collect_on_the_cluster_records_what_local_collect_records(ray_cluster, tmp_path, sweworld_home):
    address = ray_cluster.get_runtime_context().gcs_address
    runs = {"ray": collect(tmp_path / "ray", sweworld_home, "--runner", "ray", "--ray-address", address),
            "local": collect(tmp_path / "local", sweworld_home)}
    seen = {}
    for name, records in runs.items():
        evaluations = [r for r in records if r["kind"] == "eval"]
        assert len(evaluations) == 2 and all(r["task"]["instance_id"] == FIXED for r in evaluations)
        episodes: dict[str, list[int]] = {}
        for r in records:
            if r["kind"] == "step":
                episodes.setdefault(r["episode"], []).append(r["step"])
        assert len(episodes) == 2 and all(s == list(range(len(s))) for s in episodes.values())  # whole, once each
        seen[name] = (sorted((r["step"], r["command"], untimed(r["output"]), r["exit_code"])
                             for r in records if r["kind"] == "step"),
                      sorted((r["resolved"], r["patch"], untimed(r["test_output"])) for r in evaluations))
    assert seen["ray"] == seen["local"]


def test_runner_options_are_checked_before_any_work(tmp_path):
    from typer.testing import CliRunner

    from sweworld.cli.app import app

    stray = CliRunner().invoke(app, ["rollout", "--dataset", "demo", "--ray-address", "auto", "--out", str(tmp_path)])
    assert stray.exit_code == 2 and "--ray-address auto is set but the runner is 'local'" in stray.output
    unknown = CliRunner().invoke(app, ["eval", "--dataset", "demo", "--runner", "spark"])
    assert unknown.exit_code == 2 and "'spark' is not one of local, ray" in unknown.output


def test_an_environment_group_has_one_home_node_and_its_items_ask_for_it_softly():
    pytest.importorskip("ray")
    from sweworld.parallel.ray_runner import RayPool
    from sweworld.parallel.runner import ROLLOUT

    pool = RayPool(None, 2, ROLLOUT, 3)
    pool._nodes = ["a" * 56, "b" * 56, "c" * 56]  # what __enter__ reads from ray.nodes()
    homes = {g: pool.home(g) for g in (f"owner/repo{i}@1.0" for i in range(30))}
    assert homes == {g: pool.home(g) for g in homes} and len(set(homes.values())) == 3
    options = pool.options("owner/repo1@1.0")
    strategy = options["scheduling_strategy"]
    assert strategy.node_id == homes["owner/repo1@1.0"] and strategy.soft is True
    assert options["num_cpus"] == 1.0 and options["memory"] == 2**30 and options["max_retries"] == 3
    assert "scheduling_strategy" not in pool.options(None)
