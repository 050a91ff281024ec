"""Environments shared between the nodes of a Ray cluster: a node that lacks an environment, install
layer or stand-in service another node has fetches it from that node instead of building it.

- One registry per Ray job, a named actor (``sweworld-envs-<job id>`` in namespace ``sweworld``,
  created get-if-exists by the first worker that needs it, no CPU), maps ``(kind, key)`` to the ids
  of the nodes that announced it (``EnvBuilder`` announces what it builds, fetches or finds).
- ``fetch`` asks it for a holder other than this node (alive), runs the builder's ``pack`` there
  as a Ray task pinned to that node (hard node affinity, no CPU: it never waits for the node's
  items), and returns the archive; the builder unpacks, checks and publishes it under its lock
  (``sweworld.envs.fetched``) or, on any failure, logs it and builds.
- ``join_cluster`` installs this source in a worker process, once (``ray_runner.call`` runs it
  first on every item). The driver gets none: it builds as on one machine; on a one-node cluster
  the registry never has another holder to offer, and the node builds.

The registry lives as long as the worker that created it; a lost registry is created again, empty
(the nodes then build what they lack until it has been announced again).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import random
from typing import Any

from sweworld.envsource import Pack, Packed, install_source

log = logging.getLogger(__name__)

NAMESPACE = "sweworld"
ASK_TIMEOUT = 60.0
"""Seconds a question to the registry may take."""
FETCH_TIMEOUT = 1800.0
"""Seconds packing on the holder and the transfer may take (a large venv, a busy node)."""


class Holders:
    """The registry actor's state: which nodes hold each ``(kind, key)``."""

    def __init__(self) -> None:
        self.held: dict[tuple[str, str], set[str]] = {}

    def add(self, kind: str, key: str, node: str) -> None:
        self.held.setdefault((kind, key), set()).add(node)

    def forget(self, kind: str, key: str, node: str) -> None:
        self.held.get((kind, key), set()).discard(node)

    def holders(self, kind: str, key: str) -> list[str]:
        return sorted(self.held.get((kind, key), ()))


def pack_here(pack: Pack, kind: str, key: str) -> Packed | None:
    """The body of the pinned task: ``pack`` on the holder, the archive marked with its node id."""
    import ray
    packed = pack(kind, key)
    return dataclasses.replace(packed, node=ray.get_runtime_context().get_node_id()) if packed else None


class RayEnvSource:
    """An ``EnvSource`` (``sweworld.envsource``) over the job's registry, for the node ``node``."""

    def __init__(self, node: str, registry_name: str):
        self.node, self.registry_name = node, registry_name
        self._registry: Any = None
        self._announced: set[tuple[str, str]] = set()

    def _ask(self, method: str, *args: Any) -> Any:
        """``method`` of the registry, awaited; a lost registry is looked up (or created) again once."""
        import ray
        from ray.exceptions import RayActorError
        for attempt in (1, 2):
            if self._registry is None:
                self._registry = ray.remote(Holders).options(
                    name=self.registry_name, namespace=NAMESPACE, get_if_exists=True, num_cpus=0).remote()
            try:
                return ray.get(getattr(self._registry, method).remote(*args), timeout=ASK_TIMEOUT)
            except RayActorError:
                self._registry = None
                if attempt == 2:
                    raise
        return None

    def fetch(self, kind: str, key: str, pack: Pack) -> Packed | None:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        alive = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
        holders = [n for n in self._ask("holders", kind, key) if n != self.node and n in alive]
        if not holders:
            return None
        node = random.choice(holders)
        task = ray.remote(pack_here).options(
            num_cpus=0, max_retries=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False))
        ref = task.remote(pack, kind, key)
        try:
            packed = ray.get(ref, timeout=FETCH_TIMEOUT)
        except Exception:
            with contextlib.suppress(Exception):  # the error to report is the fetch's
                ray.cancel(ref, force=True)
                self._ask("forget", kind, key, node)
            raise
        if packed is None:  # the holder no longer has it complete (removed by `sweworld env gc`?)
            self._ask("forget", kind, key, node)
        return packed

    def announce(self, kind: str, key: str) -> None:
        if (kind, key) not in self._announced:
            self._ask("add", kind, key, self.node)
            self._announced.add((kind, key))


_JOINED: list[bool] = []


def join_cluster() -> None:
    """Install the Ray source in this process, once, when it is a Ray worker (nothing otherwise: the
    driver, no Ray). Whatever the cluster's size now: nodes may join it later."""
    if _JOINED:
        return
    _JOINED.append(True)
    try:
        import ray
        if not ray.is_initialized():
            return
        context = ray.get_runtime_context()
        if context.get_task_id() is None:
            return
        install_source(RayEnvSource(context.get_node_id(), f"sweworld-envs-{context.get_job_id()}"))
    except Exception as exc:  # environments are then built on every node, as before
        log.warning("environments will not be fetched between Ray nodes (each node builds its own): %s: %s",
                    type(exc).__name__, exc)
