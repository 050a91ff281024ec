"""What the Ray-marked tests share: one local Ray (2 CPUs, no dashboard) whose workers see the test
cache, a cluster of several Ray nodes on this machine each with its own ``SWEWORLD_HOME``
(``sweworld.parallel.localcluster``), and two of the demo's instances (the oracle resolves FIXED; EMPTY
has no gold patch)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

from sweworld.datasets import path_of
from sweworld.parallel.localcluster import LocalCluster, local_cluster
from sweworld.tasks import load_tasks

FIXED = "more-itertools__first-default"
EMPTY = "tkem__cachetools-5.5.0"

NodeHomes = LocalCluster
"""A running local cluster (``LocalCluster``: ``ray``, ``homes``, ``ids``, ``add``, ``kill``,
``alive``, ``outside_caches``)."""


def demo_tasks() -> list:
    chosen = {t.instance_id: t for t in load_tasks(path_of("demo"))}
    return [chosen[FIXED], chosen[EMPTY]]


@contextmanager
def local_ray(home: Path, by_value: ModuleType | None = None) -> Iterator[ModuleType]:
    """``ray`` initialized on this machine; ``by_value``: a test module whose classes the tasks carry
    (pickled by value: workers cannot import test modules)."""
    ray = pytest.importorskip("ray")
    from ray import cloudpickle  # Ray's own copy pickles the tasks

    # address "local": a Ray of its own, never one a multi-node test started with `ray start` (found
    # through /tmp/ray/ray_current_cluster while it shuts down, where num_cpus is refused)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"SWEWORLD_HOME": str(home)}})
    if by_value is not None:
        cloudpickle.register_pickle_by_value(by_value)
    try:
        yield ray
    finally:
        if by_value is not None:
            cloudpickle.unregister_pickle_by_value(by_value)
        ray.shutdown()


@contextmanager
def ray_nodes(root: Path, cache: Path, count: int = 3, by_value: ModuleType | None = None) -> Iterator[NodeHomes]:
    """``local_cluster``: a head without CPUs and ``count`` one-CPU worker nodes, each with its own
    ``SWEWORLD_HOME`` under ``root`` sharing only the download caches of the test cache ``cache``
    (``localcluster.DOWNLOADS``: each node builds its own environments, base trees and layers
    without fetching the packages again). ``by_value``: as for ``local_ray``."""
    pytest.importorskip("ray")
    with local_cluster(root, count, share=cache, by_value=by_value) as nodes:
        yield nodes
