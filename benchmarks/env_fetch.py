"""Environments fetched from another Ray node vs built there: time and bytes shipped, in one run.

    python benchmarks/env_fetch.py [--nodes 2] [--dataset demo] [--downloads DIR] [--work DIR]

A Ray cluster on this machine (``sweworld.parallel.localcluster``: a head without CPUs and ``--nodes``
nodes of one CPU each), each node's raylet and workers with their own empty ``SWEWORLD_HOME`` under
``--work``; the nodes share only the download caches of ``--downloads`` (default: this process's
``SWEWORLD_HOME``): uv's and pip's package caches and the source distributions, so a build downloads
nothing when those are warm. For one instance per environment group of ``--dataset``
(``environment_group``), each step a Ray task run as the Ray runner runs an item
(``LocalCluster.on_node``: ``ray_runner.call``, which installs the environment source), pinned to
its node:

- node A: the base tree (not timed in the comparison: every node makes its own), then
  ``EnvBuilder().instance(task)`` from empty environment directories: environment + install layer
  built (``build``);
- node B: the base tree, then the same call, which fetches both from A (``fetch``: the registry's
  answer, packing on A, the transfer, the checks, the unpack and the rename);
- node A again: ``archive.pack`` of the environment and of the layer alone (``pack``: the part of
  the fetch spent on A); ``unpack B`` is the part spent checking and unpacking on B (from the
  metadata), the rest of ``fetch`` is Ray: the registry, a worker for the packing task, the transfer.

Prints one row per instance (seconds, MB shipped, MB on disk, build/fetch) and the totals.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from sweworld.core import paths
from sweworld.datasets import path_of
from sweworld.parallel.localcluster import local_cluster
from sweworld.parallel.runner import environment_group
from sweworld.tasks import load_tasks


def instance_step(task) -> dict:
    """On this node: the base tree (timed apart), then the environment and layer of ``task``."""
    from sweworld.envs import EnvBuilder
    from sweworld.envs.store import disk_usage

    builder = EnvBuilder()
    started = time.perf_counter()
    builder.repos.base_tree(task)
    builder.recipe(task)
    tree = time.perf_counter() - started
    started = time.perf_counter()
    layer = builder.instance(task)
    seconds = time.perf_counter() - started
    metas = [json.loads((layer.env.path / "env.json").read_text()), json.loads((layer.path / "meta.json").read_text())]
    return {"tree": tree, "seconds": seconds, "keys": (layer.env.key, layer.key),
            "fetched": [m.get("fetched") for m in metas],
            "disk": disk_usage(layer.env.venv) + disk_usage(layer.path)}


def pack_step(keys: tuple[str, str]) -> dict:
    """On this node: ``archive.pack`` of the environment and of the layer, timed."""
    from sweworld.envs import archive

    started = time.perf_counter()
    sizes = [len(archive.pack("env", keys[0]).data), len(archive.pack("instance", f"{keys[0]}/{keys[1]}").data)]
    return {"seconds": time.perf_counter() - started, "bytes": sum(sizes)}


def pick(dataset: str) -> list:
    firsts: dict[str, object] = {}
    for task in load_tasks(path_of(dataset)):
        firsts.setdefault(environment_group(task), task)
    return list(firsts.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--dataset", default="demo")
    parser.add_argument("--downloads", type=Path, default=None, help="a SWEWORLD_HOME with warm download caches")
    parser.add_argument("--work", type=Path, default=None, help="where the node homes go (a temporary directory)")
    args = parser.parse_args()
    if args.nodes < 2:
        parser.error("--nodes: at least 2 (one builds, another fetches)")
    downloads = (args.downloads or paths.home()).resolve()
    work = Path(tempfile.mkdtemp(prefix="env-fetch-", dir=args.work))
    rows = []
    try:
        with local_cluster(work, args.nodes, share=downloads) as cluster:
            a, b = cluster.ids[0], cluster.ids[1]
            for task in pick(args.dataset):
                built = cluster.on_node(a, instance_step, task)
                got = cluster.on_node(b, instance_step, task)
                if got["keys"] != built["keys"] or None in got["fetched"]:
                    raise SystemExit(f"{task.instance_id}: node B did not fetch {built['keys']} (it built it: "
                                     "read the workers' logs under /tmp/ray/session_latest/logs)")
                packed = cluster.on_node(a, pack_step, built["keys"])
                shipped = sum(f["bytes"] for f in got["fetched"])
                rows.append((task.instance_id, built, got, packed, shipped))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(rows, args.nodes)


def unpacked(got: dict) -> float:
    return sum(f["unpack_seconds"] for f in got["fetched"])


def report(rows: list, nodes: int) -> None:
    mb = 1e6
    print(f"{nodes}-node local Ray cluster, one instance per environment group; seconds of "
          "EnvBuilder().instance(task) (environment + install layer; base tree apart)")
    print(f"{'instance':40} {'tree A':>7} {'build A':>8} {'tree B':>7} {'fetch B':>8} {'pack A':>7} "
          f"{'unpack B':>8} {'MB sent':>8} {'MB disk':>8} {'build/fetch':>11}")
    for name, built, got, packed, shipped in rows:
        print(f"{name:40} {built['tree']:7.2f} {built['seconds']:8.2f} {got['tree']:7.2f} {got['seconds']:8.2f} "
              f"{packed['seconds']:7.2f} {unpacked(got):8.2f} {shipped / mb:8.2f} {got['disk'] / mb:8.2f} "
              f"{built['seconds'] / got['seconds']:10.1f}x")
    build = sum(r[1]["seconds"] for r in rows)
    fetch = sum(r[2]["seconds"] for r in rows)
    shipped = sum(r[4] for r in rows)
    disk = sum(r[2]["disk"] for r in rows)
    print(f"{'total':40} {'':7} {build:8.2f} {'':7} {fetch:8.2f} {sum(r[3]['seconds'] for r in rows):7.2f} "
          f"{sum(unpacked(r[2]) for r in rows):8.2f} "
          f"{shipped / mb:8.2f} {disk / mb:8.2f} {build / fetch:10.1f}x")
    print(f"shipped/disk: {shipped / disk:.2f} (gzip level 1); fetch throughput: {disk / mb / fetch:.1f} MB/s of "
          "environment on disk")


if __name__ == "__main__":
    main()
