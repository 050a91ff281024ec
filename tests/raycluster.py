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
    ``homes[i]`` node ``i``'s ``SWEWORLD_HOME`` and ``ids[i]`` its Ray node id (node 0 is the head)."""

    ray: ModuleType
    cluster: Any
    homes: list[Path]
    ids: list[str]
    nodes: list[Any]

    def node_of(self, node_id: str) -> int:
        return self.ids.index(node_id)

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
def ray_nodes(root: Path, cache: Path, count: int = 3, by_value: ModuleType | None = None) -> Iterator[NodeHomes]:
    """A Ray cluster of ``count`` nodes on this machine (``ray.cluster_utils.Cluster``), one CPU each,
    each node's raylet and workers with their own ``SWEWORLD_HOME`` under ``root`` (see
    ``SHARED_DOWNLOADS``); this process is its driver. ``by_value``: as for ``local_ray``."""
    ray = pytest.importorskip("ray")
    from ray import cloudpickle
    from ray.cluster_utils import Cluster

    saved = os.environ.get("SWEWORLD_HOME")
    cluster, nodes, homes = Cluster(), [], []
    try:
        for index in range(count):
            homes.append(node_home(root, index, cache))
            os.environ["SWEWORLD_HOME"] = str(homes[-1])  # what the node's raylet and workers inherit
            nodes.append(cluster.add_node(num_cpus=1, resources={f"node{index}": 1},
                                          **({"include_dashboard": False} if index == 0 else {})))
    finally:
        if saved is None:
            os.environ.pop("SWEWORLD_HOME", None)
        else:
            os.environ["SWEWORLD_HOME"] = saved
    ray.init(address=cluster.address, log_to_driver=False)
    if by_value is not None:
        cloudpickle.register_pickle_by_value(by_value)
    try:
        yield NodeHomes(ray, cluster, homes, [n.node_id for n in nodes], nodes)
    finally:
        if by_value is not None:
            cloudpickle.unregister_pickle_by_value(by_value)
        ray.shutdown()
        cluster.shutdown()
