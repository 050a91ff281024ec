"""What the Ray-marked tests share: one local Ray (2 CPUs, no dashboard) whose workers see the test
cache, a cluster of several Ray nodes on this machine each with its own ``SWEWORLD_HOME``, and two
of the demo's instances (the oracle resolves FIXED; EMPTY has no gold patch)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sweworld.datasets import path_of
from sweworld.tasks import load_tasks

FIXED = "more-itertools__first-default"
EMPTY = "tkem__cachetools-5.5.0"


def demo_tasks() -> list:
    chosen = {t.instance_id: t for t in load_tasks(path_of("demo"))}
    return [chosen[FIXED], chosen[EMPTY]]


@contextmanager
def local_ray(home: Path, by_value: ModuleType | None = None) -> Iterator[ModuleType]:
    """``ray`` initialized on this machine; ``by_value``: a test module whose classes the tasks carry
    (pickled by value: workers cannot import test modules)."""
    ray = pytest.importorskip("ray")
    from ray import cloudpickle  # Ray's own copy pickles the tasks

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"SWEWORLD_HOME": str(home)}})
    if by_value is not None:
        cloudpickle.register_pickle_by_value(by_value)
    try:
        yield ray
    finally:
        if by_value is not None:
            cloudpickle.unregister_pickle_by_value(by_value)
        ray.shutdown()


SHARED_DOWNLOADS = ("cache", "repos/sdists")
"""What the nodes of a test cluster share with the test cache on purpose: download caches only (uv's
and pip's package caches, PyPI source distributions), so that each node builds its own environments,
base trees and layers without fetching the packages again."""

CACHES = ("cache", "envs", "repos", "episodes", "sandbox-etc")
"""The cache directories of a ``SWEWORLD_HOME``: everything an item may leave on its node."""


@dataclass
class NodeHomes:
    """A running local cluster: ``ray`` connected to it, ``cluster`` (``ray.cluster_utils.Cluster``),
    and per worker node ``i``: ``homes[i]`` its ``SWEWORLD_HOME``, ``ids[i]`` its Ray node id,
    ``nodes[i]`` its handle (``cluster.remove_node``). The head holds no CPU: no item runs there."""

    ray: ModuleType
    cluster: Any
    root: Path
    cache: Path
    homes: list[Path]
    ids: list[str]
    nodes: list[Any]

    def add(self) -> int:
        """Start one more worker node with a home of its own; its index."""
        index = len(self.homes)
        self.homes.append(node_home(self.root, index, self.cache))
        with _home(self.homes[-1]):
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

    def outside_caches(self) -> list[str]:
        """Files under any node's home outside its cache directories (what a run must not write)."""
        found = []
        for home in self.homes:
            for path in sorted(home.rglob("*")):
                relative = path.relative_to(home)
                if relative.parts[0] not in CACHES and not path.is_dir():
                    found.append(str(path))
        return found


def node_home(root: Path, index: int, cache: Path) -> Path:
    home = root / f"node{index}"
    for shared in SHARED_DOWNLOADS:
        (cache / shared).mkdir(parents=True, exist_ok=True)
        link = home / shared
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(cache / shared, target_is_directory=True)
    return home


@contextmanager
def _home(home: Path) -> Iterator[None]:
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
def ray_nodes(root: Path, cache: Path, count: int = 3, by_value: ModuleType | None = None) -> Iterator[NodeHomes]:
    """A Ray cluster on this machine (``ray.cluster_utils.Cluster``): a head without CPUs and
    ``count`` worker nodes of one CPU each, each node's raylet and workers with their own
    ``SWEWORLD_HOME`` under ``root`` (see ``SHARED_DOWNLOADS``); this process is its driver.
    ``by_value``: as for ``local_ray``."""
    ray = pytest.importorskip("ray")
    from ray import cloudpickle
    from ray.cluster_utils import Cluster

    cluster = Cluster()
    try:
        with _home(root / "head"):
            cluster.add_node(num_cpus=0, include_dashboard=False)
        nodes = NodeHomes(ray, cluster, root, cache, [], [], [])
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
