"""Work items as Ray tasks (extra ``[ray]``): ``--runner ray [--ray-address auto|HOST:PORT]``.

- Each ``submit`` is one Ray task reserving the pool's ``Hints`` (CPUs, memory); at most
  ``workers`` are in flight (0: as many as the cluster fits).
- Items of one environment group (``environment_group``) prefer one node, the group's home (soft
  node affinity: a busy or lost home lets Ray place them elsewhere), so a node builds each
  environment and base tree once (the environment store's file locks make a second build wait
  and reuse the first) and keeps reusing them.
- ``share(obj)`` puts ``obj`` in the object store once; each worker process fetches it on its first
  item and keeps it (one backend per worker process, reused).
- A worker or node lost mid-item: Ray runs the item again (``max_retries``); the driver receives
  one result per item, so the stores the driver writes hold nothing twice.
"""

from __future__ import annotations

import threading
import uuid
import zlib
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from sweworld.core.errors import ConfigError, InfraError
from sweworld.parallel.envshare import join_cluster
from sweworld.parallel.runner import ROLLOUT, Hints

_SHARED: dict[str, Any] = {}
"""What this worker process received through ``share``: token -> object."""


@dataclass
class Shared:
    """A handle on an object put once in Ray's object store (the reference sits in a list so that Ray
    does not resolve it for every task)."""

    token: str
    box: list = field(default_factory=list)

    def get(self) -> Any:
        if self.token not in _SHARED:
            import ray
            _SHARED[self.token] = ray.get(self.box[0])
        return _SHARED[self.token]


def _resolve(value: Any) -> Any:
    return value.get() if isinstance(value, Shared) else value


def call(fn: Callable[..., Any] | Shared, args: tuple, kwargs: dict) -> Any:
    """The body of every Ray task: ``fn`` on the resolved arguments (``fn`` may be shared too)."""
    join_cluster()  # on several nodes, environments another node built are fetched (parallel/envshare.py)
    return _resolve(fn)(*(_resolve(a) for a in args), **{k: _resolve(v) for k, v in kwargs.items()})


_LOCKS = (type(threading.Lock()), type(threading.RLock()))


def _fresh_lock(reentrant: bool) -> Any:
    return threading.RLock() if reentrant else threading.Lock()


def _fresh_local(_state: None) -> threading.local:
    return threading.local()


def _register_serializers(ray: Any) -> None:
    """Locks and thread-locals (backends and world models hold some) travel as new, empty ones: each
    worker process gets its own."""
    for cls in _LOCKS:
        reentrant = cls is _LOCKS[1]
        ray.util.register_serializer(cls, serializer=lambda _lock, r=reentrant: r, deserializer=_fresh_lock)
    ray.util.register_serializer(threading.local, serializer=lambda _local: None, deserializer=_fresh_local)


def ensure_ray(address: str | None) -> Any:
    """The ``ray`` module, connected: to ``address`` (``auto``: the cluster this node belongs to), or
    a Ray started on this machine when none is running."""
    try:
        import ray
    except ImportError:
        raise ConfigError("--runner ray needs Ray, which is not installed",
                          hint="pip install 'sweworld[ray]'") from None
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ConfigError(f"cannot connect to Ray at {address}: {exc}",
                              hint="start the cluster (ray start --head), or pass --ray-address HOST:PORT "
                                   "(omit it to start Ray on this machine)") from None
    _register_serializers(ray)
    return ray


def _unwrap(exc: BaseException) -> BaseException:
    """The item's own exception out of Ray's wrapper; a worker lost more often than retried is an
    ``InfraError`` (a rerun runs the item again)."""
    import ray.exceptions as rex
    if isinstance(exc, rex.RayTaskError):
        cause = getattr(exc, "cause", None)
        return cause if isinstance(cause, BaseException) else exc
    if isinstance(exc, (rex.WorkerCrashedError, rex.NodeDiedError, rex.OwnerDiedError, rex.ObjectLostError)):
        return InfraError(f"ray: {type(exc).__name__}: the worker running an item was lost more times than "
                          "it is retried", hint="rerun: finished items are kept, the lost one runs again")
    return exc


class RayPool:
    """Submits items as Ray tasks (see the module docstring)."""

    def __init__(self, address: str | None, workers: int, hints: Hints, max_retries: int):
        self.address, self.workers, self.hints, self.max_retries = address, workers, hints, max_retries
        self._lock = threading.Lock()
        self._queue: deque = deque()
        self._running = 0
        self._nodes: list[str] = []
        self._remote: Any = None

    def __enter__(self) -> RayPool:
        ray = ensure_ray(self.address)
        self._nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive") and n["Resources"].get("CPU"))
        self._remote = ray.remote(call)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            queued, self._queue = list(self._queue), deque()
        for item in queued:
            item[0].cancel()

    def share(self, obj: Any) -> Shared:
        import ray
        try:
            return Shared(uuid.uuid4().hex, [ray.put(obj)])
        except (TypeError, ValueError, AttributeError) as exc:  # what pickling raises
            name = getattr(obj, "name", type(obj).__name__)
            raise ConfigError(f"{name}: cannot be sent to Ray workers ({type(exc).__name__}: {exc})",
                              hint="use --runner local, or a backend whose parts can be pickled") from None

    def home(self, group: str | None) -> str | None:
        """The node that runs ``group``'s items when it can (stable for one cluster)."""
        if group is None or not self._nodes:
            return None
        return self._nodes[zlib.crc32(group.encode()) % len(self._nodes)]

    def options(self, group: str | None) -> dict[str, Any]:
        opts: dict[str, Any] = {"num_cpus": self.hints.cpus, "max_retries": self.max_retries,
                                "retry_exceptions": False}
        if self.hints.memory_mb:
            opts["memory"] = self.hints.memory_mb * 2**20
        node = self.home(group)
        if node is not None and len(self._nodes) > 1:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
            opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id=node, soft=True)
        return opts

    def submit(self, fn: Callable[..., Any], /, *args: Any, group: str | None = None, **kwargs: Any) -> Future:
        future: Future = Future()
        item = (future, fn, args, kwargs, group)
        with self._lock:
            if self.workers and self._running >= self.workers:
                self._queue.append(item)
                return future
            self._running += 1
        if not self._launch(item):
            self._next()
        return future

    def _launch(self, item: tuple) -> bool:
        """Start ``item``; False when it was cancelled while queued (or could not be sent)."""
        future, fn, args, kwargs, group = item
        if not future.set_running_or_notify_cancel():
            return False
        try:
            ref = self._remote.options(**self.options(group)).remote(fn, args, kwargs)
        except Exception as exc:  # not serializable, ...: the item fails, the others go on
            future.set_exception(exc)
            return False
        ref.future().add_done_callback(lambda done: self._settle(future, done))
        return True

    def _settle(self, future: Future, done: Future) -> None:
        exc = done.exception()
        if exc is not None:
            future.set_exception(_unwrap(exc))
        else:
            future.set_result(done.result())
        self._next()

    def _next(self) -> None:
        """A slot is free: start the next queued item that still wants to run."""
        while True:
            with self._lock:
                item = self._queue.popleft() if self._queue else None
                if item is None:
                    self._running -= 1
                    return
            if self._launch(item):
                return


class RayRunner:
    """Work items as Ray tasks; ``address`` None starts Ray on this machine (or uses the one this
    process already initialized), ``auto`` joins the local node's cluster, ``HOST:PORT`` a head."""

    name = "ray"

    def __init__(self, address: str | None = None, *, max_retries: int = 3):
        self.address = address
        self.max_retries = max_retries

    def pool(self, workers: int, hints: Hints = ROLLOUT) -> RayPool:
        return RayPool(self.address, workers, hints, self.max_retries)
