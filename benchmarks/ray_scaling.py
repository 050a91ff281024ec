"""P7: oracle-policy rollout throughput, the local runner and Ray with 1 and 2 workers, in one run.

    python benchmarks/ray_scaling.py [--per-group 2] [--samples 2] [--repeat 2] [--nodes 1,4,16,64]

Instances: the first ``--per-group`` of each environment group of the embedded default dataset.
Each configuration rolls out every (instance, sample) from scratch (a fresh output directory):
episode, oracle edits, submit, the harness's evaluation; environments are built beforehand, and Ray's
worker processes are warmed up before timing (a cluster keeps them). The four configurations run
``--repeat`` rounds, the runners' order alternating from round to round, and the best round of each
counts (the machine is shared: the best is the least disturbed). Prints items/s per configuration, the scaling efficiency (throughput with 2 workers / (2 x with 1)) of each runner,
Ray's throughput against the local runner's, the measured per-item costs (episode, evaluation, what
the driver spends storing one result), the disk an environment group and an instance take, and
the 10k-task projection over ``--nodes`` nodes (``simulate``) that docs/scaling.md reports.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import zlib
from pathlib import Path

from sweworld.agents.config import load_agent_config
from sweworld.agents.policies import OraclePolicy
from sweworld.backends.real import RealBackend
from sweworld.core.config import RolloutConfig, RunnerConfig
from sweworld.datasets import path_of
from sweworld.envs.store import disk_usage
from sweworld.parallel.runner import LocalRunner, environment_group, make_runner
from sweworld.runs.rollout import run_rollouts
from sweworld.runs.store import TrajectoryStore
from sweworld.tasks import load_tasks


def build_seconds(keys) -> float:
    """The median environment build time of ``keys`` from their build logs (``### environment build (Xs``)."""
    import re

    from sweworld.envs.store import envs_root

    found = []
    for key in keys:
        log = envs_root() / "logs" / f"{key}.log"
        head = log.read_text(errors="replace").splitlines()[:1] if log.exists() else []
        match = re.match(r"### environment build \(([\d.]+)s", head[0]) if head else None
        if match:
            found.append(float(match.group(1)))
    return statistics.median(found) if found else 0.0


def pick(per_group: int) -> list:
    groups: dict[str, list] = {}
    for task in load_tasks(path_of("default")):
        groups.setdefault(environment_group(task), []).append(task)
    return [t for members in groups.values() for t in members[:per_group]]


def timed(tasks, runner, workers: int, samples: int) -> tuple[float, list]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        summary = run_rollouts(tasks, OraclePolicy,
                               RolloutConfig(out=Path(tmp), n_samples=samples, runner=RunnerConfig(workers=workers)),
                               agent=load_agent_config(None), backend=RealBackend(), runner=runner)
        wall = time.perf_counter() - started
        trajectories = TrajectoryStore(Path(tmp) / "trajectories.jsonl").load()
    assert summary["errors"] == 0 and summary["trajectories"] == len(tasks) * samples, summary
    return wall, trajectories


def store_cost(n: int = 200) -> float:
    """Seconds the driver spends appending one result to the store (fsync'd)."""
    from sweworld.trajectory import Trajectory

    traj = Trajectory(instance_id="x", patch="diff --git a/x b/x\n" * 40)
    with tempfile.TemporaryDirectory() as tmp:
        store = TrajectoryStore(Path(tmp) / "t.jsonl")
        started = time.perf_counter()
        for k in range(n):
            traj.sample = k
            store.append(traj)
        return (time.perf_counter() - started) / n


def simulate(tasks: int, groups: int, nodes: int, cores: int, item_s: float, build_s: float,
             driver_s: float) -> dict:
    """Makespan of ``tasks`` items over ``nodes`` x ``cores`` slots: items of a group go to its home
    node (the Ray runner's soft affinity, ignoring spills), the first item of a group on a node pays
    ``build_s``; the driver handles one result per ``driver_s`` (a serial floor)."""
    per_group = [tasks // groups + (1 if g < tasks % groups else 0) for g in range(groups)]
    load = [0.0] * nodes
    for g, count in enumerate(per_group):
        load[zlib.crc32(f"group-{g}".encode()) % nodes] += count * item_s + build_s
    compute = max(load) / cores
    driver = tasks * driver_s
    wall = max(compute, driver)
    return {"wall_h": wall / 3600, "items_per_s": tasks / wall, "bound": "driver" if driver > compute else "nodes",
            "imbalance": max(load) / (sum(load) / nodes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-group", type=int, default=2, help="instances per environment group")
    parser.add_argument("--samples", type=int, default=2, help="samples per instance")
    parser.add_argument("--repeat", type=int, default=2, help="rounds of the four configurations")
    parser.add_argument("--nodes", default="1,4,16,64", help="node counts of the 10k-task projection")
    parser.add_argument("--cores", type=int, default=32, help="cores per node in the projection")
    args = parser.parse_args()
    import ray

    tasks = pick(args.per_group)
    backend = RealBackend()
    layers = [backend.builder.instance(t) for t in tasks]  # built beforehand: P7 measures rollouts
    items = len(tasks) * args.samples
    print(f"P7: oracle rollouts with evaluation, {len(tasks)} instances of {len({layer.env.key for layer in layers})} "
          f"environment groups x {args.samples} samples = {items} items, {os.cpu_count()} cores")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    timed(tasks[:2], make_runner("ray"), 2, 1)  # warm-up: Ray's worker processes start and import sweworld
    rates: dict[tuple[str, int], float] = {}
    per_item: list = []
    for round_ in range(args.repeat):
        for name in ("local", "ray") if round_ % 2 == 0 else ("ray", "local"):
            for workers in (1, 2):
                runner = LocalRunner() if name == "local" else make_runner("ray")
                wall, trajectories = timed(tasks, runner, workers, args.samples)
                rates[(name, workers)] = max(rates.get((name, workers), 0.0), items / wall)
                per_item += trajectories
                print(f"   round {round_}  {name:5s} workers={workers}  {items} items in {wall:6.1f} s  "
                      f"{items / wall:5.2f} items/s")
    print("best round of each:")
    for (name, workers), rate in sorted(rates.items()):
        print(f"   {name:5s} workers={workers}  {rate:5.2f} items/s  ({1 / rate * workers:.2f} s per item per worker)")
    ray.shutdown()
    for name in ("local", "ray"):
        print(f"   {name:5s} scaling efficiency 1 -> 2 workers: {rates[(name, 2)] / (2 * rates[(name, 1)]):.2f}")
    for workers in (1, 2):
        print(f"   ray / local, {workers} worker(s): {rates[('ray', workers)] / rates[('local', workers)]:.2f}")
    episode = statistics.median(t.timings.get("total", 0.0) for t in per_item)
    driver = store_cost()
    envs = {layer.env.key: layer.env.path for layer in layers}
    env_mb = statistics.median(disk_usage(p / "venv") for p in envs.values()) / 2**20
    layer_mb = statistics.median(disk_usage(layer.path) for layer in layers) / 2**20
    tree_mb = statistics.median(disk_usage(Path(layer.tree)) for layer in layers) / 2**20
    print(f"per item: {1 / rates[('ray', 1)]:.2f} s with one Ray worker, of which the agent episode {episode:.2f} s "
          f"(median) and the rest the evaluation (a fresh episode running the tests); the driver storing one result "
          f"{driver * 1000:.2f} ms")
    print(f"disk: environment {env_mb:.1f} MB per group (shared), install layer {layer_mb:.2f} MB and base tree "
          f"{tree_mb:.1f} MB per instance")
    item_s = 1 / rates[("ray", 1)]  # one core's wall per item, as measured
    build_s = build_seconds(envs)
    print(f"10k tasks, {args.cores} cores per node, {item_s:.2f} s per item per core, {build_s:.1f} s per environment "
          f"build (median of the groups' build logs), driver {driver * 1000:.2f} ms per result:")
    for groups in (100, 2400):
        for nodes in (int(n) for n in args.nodes.split(",")):
            sim = simulate(10_000, groups, nodes, args.cores, item_s, build_s, driver)
            disk_gb = (-(-groups // nodes) * env_mb + 10_000 / nodes * (layer_mb + tree_mb)) / 1024
            print(f"   {groups:5d} groups  {nodes:3d} nodes  {sim['wall_h']:7.2f} h  {sim['items_per_s']:7.1f} items/s  "
                  f"bound by {sim['bound']:6s} imbalance {sim['imbalance']:.2f}  disk/node {disk_gb:6.1f} GB "
                  f"(SWE-Gym images: {10_000 / nodes * 2.6:7.0f} GB)")


if __name__ == "__main__":
    main()
