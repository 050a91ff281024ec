"""A local multi-node Ray cluster on one machine, for tests and benchmarks.

Ray's own ``ray.cluster_utils.Cluster``: a head without CPUs (no item runs there) and worker nodes of
one CPU each (node ``i`` also holds the custom resource ``node<i>``), each node's raylet and workers
with their own ``SWEWORLD_HOME`` under a root directory; this process is the driver. The directories
named in ``shared`` of each node's home link to those of the home ``share`` (download caches, so
that each node builds its own environments without fetching the packages again, or every cache,
built beforehand, so that what is measured is the runner); everything else a node writes stays in
its own home (``LocalCluster.outside_caches``). Needs the ``ray`` extra.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

DOWNLOADS = ("cache", "repos/sdists")
"""The download caches of a ``SWEWORLD_HOME`` (uv's and pip's package caches, PyPI source
distributions): what nodes that build their own environments share."""

CACHES = ("cache", "envs", "repos", "episodes", "sandbox-etc", "shims", "cas")
"""The cache directories of a ``SWEWORLD_HOME``: everything an item may leave on its node."""


@dataclass
class LocalCluster:
    """A running local cluster: ``ray`` connected to it, ``cluster`` (``ray.cluster_utils.Cluster``),
    and per worker node ``i``: ``homes[i]`` its ``SWEWORLD_HOME``, ``ids[i]`` its Ray node id (""
    once killed), ``nodes[i]`` its handle."""

    ray: ModuleType
    cluster: Any
    root: Path
    share: Path
    shared: tuple[str, ...]
    homes: list[Path]
    ids: list[str]
    nodes: list[Any]

    def add(self) -> int:
        """Start one more worker node (one CPU) with a home of its own; its index."""
        index = len(self.homes)
        self.homes.append(node_home(self.root, index, self.share, self.shared))
        with home_set(self.homes[-1]):
            self.nodes.append(self.cluster.add_node(num_cpus=1, resources={f"node{index}": 1}))
        self.ids.append(self.nodes[-1].node_id)
        self.cluster.wait_for_nodes()
        return index

    def kill(self, node_id: str) -> None:
        """End the node ``node_id`` (its raylet and every worker on it)."""
        index = self.ids.index(node_id)
        self.cluster.remove_node(self.nodes[index], allow_graceful=False)
        self.ids[index] = ""

    def alive(self) -> list[int]:
        return [i for i, node_id in enumerate(self.ids) if node_id]

    def outside_caches(self, kept: Sequence[str] = CACHES) -> list[Path]:
        """Files under any node's home outside its top-level directories ``kept`` (what a run must
        not write)."""
        return [path for home in self.homes for path in sorted(home.rglob("*"))
                if path.relative_to(home).parts[0] not in kept and not path.is_dir()]

    def on_node(self, node_id: str, fn: Callable[..., Any], *args: Any, timeout: float | None = None) -> Any:
        """``fn(*args)`` as the Ray runner runs an item (``ray_runner.call``, which installs the
        environment source), pinned to the node ``node_id``."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from sweworld.parallel.ray_runner import call
        strategy = NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)
        task = self.ray.remote(call).options(num_cpus=1, max_retries=0, scheduling_strategy=strategy)
        return self.ray.get(task.remote(fn, args, {}), timeout=timeout)


def node_home(root: Path, index: int, share: Path, shared: Sequence[str]) -> Path:
    """The home of node ``index`` under ``root``, its directories ``shared`` linked to ``share``'s."""
    home = root / f"node{index}"
    home.mkdir(parents=True, exist_ok=True)
    for name in shared:
        (share / name).mkdir(parents=True, exist_ok=True)
        link = home / name
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(share / name, target_is_directory=True)
    return home


@contextmanager
def home_set(home: Path) -> Iterator[None]:
    """``SWEWORLD_HOME`` set to ``home`` while a node starts (its raylet and workers inherit it)."""
    saved = os.environ.get("SWEWORLD_HOME")
    os.environ["SWEWORLD_HOME"] = str(home)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("SWEWORLD_HOME", None)
        else:
            os.environ["SWEWORLD_HOME"] = saved


@contextmanager
def local_cluster(root: Path, count: int, *, share: Path, shared: Sequence[str] = DOWNLOADS,
                  by_value: ModuleType | None = None) -> Iterator[LocalCluster]:
    """A head without CPUs (its home ``root/head``) and ``count`` one-CPU worker nodes, each with its
    own home under ``root`` whose ``shared`` directories link to ``share``'s; ``ray`` connected to it
    as the driver, shut down on exit. ``by_value``: a module whose functions and classes the tasks
    carry (pickled by value: the workers cannot import it, e.g. a test module)."""
    import ray
    from ray import cloudpickle
    from ray.cluster_utils import Cluster

    cluster = Cluster()
    try:
        with home_set(root / "head"):
            cluster.add_node(num_cpus=0, include_dashboard=False)
        nodes = LocalCluster(ray, cluster, root, share, tuple(shared), [], [], [])
        for _ in range(count):
            nodes.add()
        ray.init(address=cluster.address, log_to_driver=False)
        if by_value is not None:
            cloudpickle.register_pickle_by_value(by_value)
        yield nodes
    finally:
        if by_value is not None:
            cloudpickle.unregister_pickle_by_value(by_value)
        ray.shutdown()
        cluster.shutdown()
