"""P7 through the multi-node path: oracle rollouts on a Ray cluster of 1 and then 3 nodes, in one run,
and what shipping each item's outputs back to the driver costs.

    python benchmarks/ray_nodes.py [--per-group 2] [--samples 2] [--nodes 1,3] [--repeat 2]

The cluster is Ray's own (``ray.cluster_utils.Cluster``) on this machine
(``sweworld.parallel.localcluster``): a head without CPUs (the driver's node) and N nodes of one CPU
each, each node's raylet and workers with their own ``SWEWORLD_HOME``. So that the figures are the
runner's and not environment builds, each node's caches (environments, repositories, download
caches) link to this process's, built beforehand, as P7 on one node does; everything else a node
could write (run outputs) lands in its own home, which the script checks stays empty. Instances: the
first ``--per-group`` of each environment group of the embedded default dataset; each configuration
rolls out every (instance, sample) from scratch, with evaluation; the best of ``--repeat`` rounds
counts. Prints items/s per node count, the scaling efficiency (throughput with N / (N x with 1)),
and per item the bytes shipped back (logs, compressed) and the milliseconds spent packing them on
the worker and writing them on the driver. On a machine with fewer cores than nodes the efficiency
is bounded by the cores: the script says how many there are.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ray_scaling import pick, timed
from sweworld.backends.real import RealBackend
from sweworld.core import paths
from sweworld.core.protocols import Hints, Pool, Runner
from sweworld.parallel import shipping
from sweworld.parallel.localcluster import local_cluster
from sweworld.parallel.runner import ROLLOUT, make_runner

LINKED = ("envs", "repos", "cache", "sandbox-etc")
"""A node's cache directories, linked to this process's (built beforehand)."""


class Landing:
    """A runner that keeps what each item shipped back (its ``shipping.Outputs``), for their
    measures: per item the bytes landed and the seconds of packing (on the worker,
    ``pack_seconds``) and landing (here, ``land_seconds``: read once the run has landed them)."""

    def __init__(self, runner: Runner):
        self.runner, self.name = runner, runner.name
        self.outputs: list[shipping.Outputs] = []

    def pool(self, workers: int, hints: Hints = ROLLOUT) -> Pool:
        return Keeping(self.runner.pool(workers, hints), self.outputs)

    @property
    def items(self) -> list[tuple[int, float, float]]:
        return [(o.nbytes, o.pack_seconds, o.land_seconds) for o in self.outputs]


class Keeping:
    """``pool``, keeping the ``Outputs`` of every item that comes back ``Shipped`` in ``outputs``."""

    def __init__(self, pool: Pool, outputs: list[shipping.Outputs]):
        self.inner, self.outputs = pool, outputs

    def share(self, obj: Any) -> Any:
        return self.inner.share(obj)

    def submit(self, fn: Callable[..., Any], /, *args: Any, group: str | None = None, **kwargs: Any) -> Future:
        future = self.inner.submit(fn, *args, group=group, **kwargs)
        future.add_done_callback(self._keep)
        return future

    def _keep(self, future: Future) -> None:
        if not future.cancelled() and future.exception() is None and isinstance(future.result(), shipping.Shipped):
            self.outputs.append(future.result().outputs)

    def __enter__(self) -> Keeping:
        self.inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.__exit__(*exc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-group", type=int, default=2, help="instances per environment group")
    parser.add_argument("--samples", type=int, default=2, help="samples per instance")
    parser.add_argument("--nodes", default="1,3", help="node counts, each a fresh cluster")
    parser.add_argument("--repeat", type=int, default=2, help="rounds per node count")
    args = parser.parse_args()
    tasks = pick(args.per_group)
    backend = RealBackend()
    for task in tasks:
        backend.builder.instance(task)  # built beforehand: the figures are the runner's
    items = len(tasks) * args.samples
    print(f"P7 multi-node: oracle rollouts with evaluation, {len(tasks)} instances x {args.samples} samples = "
          f"{items} items; {os.cpu_count()} cores on this machine (nodes of one CPU each share them)")
    rates: dict[int, float] = {}
    shipped: list[tuple[int, float, float]] = []
    for count in (int(n) for n in args.nodes.split(",")):
        with tempfile.TemporaryDirectory() as root, \
                local_cluster(Path(root), count, share=paths.home(), shared=LINKED) as cluster:
            timed(tasks[:count * 2], make_runner("ray"), count, 1)  # warm-up: workers start, import sweworld
            for round_ in range(args.repeat):
                landing = Landing(make_runner("ray"))
                wall, _ = timed(tasks, landing, count, args.samples)
                shipped += landing.items
                rates[count] = max(rates.get(count, 0.0), items / wall)
                print(f"   {count} node(s)  round {round_}  {items} items in {wall:6.1f} s  {items / wall:5.2f} items/s")
            stray = cluster.outside_caches(LINKED)
            print(f"   files written under the nodes' homes outside their caches: {len(stray)}")
    base = min(rates)
    for count, rate in sorted(rates.items()):
        efficiency = rate / (count / base * rates[base])
        print(f"   {count} node(s): {rate:5.2f} items/s (best round), scaling efficiency from {base}: {efficiency:.2f}")
    sizes, packs, lands = zip(*shipped, strict=True)
    print(f"shipping per item ({len(shipped)} items): {statistics.mean(sizes) / 1024:.1f} KiB mean "
          f"(max {max(sizes) / 1024:.1f} KiB) compressed; packing on the worker {statistics.median(packs) * 1000:.2f} ms, "
          f"landing on the driver {statistics.median(lands) * 1000:.2f} ms (medians; p95 landing "
          f"{sorted(lands)[int(0.95 * (len(lands) - 1))] * 1000:.2f} ms)")


if __name__ == "__main__":
    main()
