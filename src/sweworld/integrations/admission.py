"""Fair admission for sweworld's HTTP servers: what one episode and the whole server may run and queue.

A request's work (a command, a file read) runs on a thread of the server's own pool (``threads``);
one episode holds at most ``episode_threads`` of them at once, so a client that floods one episode
(whose commands wait on that episode's shell anyway) cannot take the threads every other episode
needs. A request that cannot start waits on the event loop, never on a thread: at most
``episode_queue`` per episode and ``queue`` in all, each at most ``queue_timeout`` seconds. Past
those bounds the request is refused at once with ``Refused``: HTTP 429 (the episode's own requests
fill its queue) or 503 (the server is saturated), a ``Retry-After`` header and a JSON body saying what
was refused, why, and when to retry. Nothing here holds an episode's lock, so routes answered without
a thread (``/is_alive``) stay fast whatever the queues hold.

``Gate.run(key, fn)`` is the one entry: ``key`` names the episode (None: work of no episode, bound by
the server's limits only); it returns ``fn()``'s value or raises ``fn``'s exception. Everything but
the pool's threads runs on the event loop's thread, so the counters need no lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

T = TypeVar("T")

EPISODE_FULL, SATURATED = "episode_queue_full", "server_saturated"


class AdmissionConfig(BaseModel):
    """The bounds of one server (``sweworld runtime serve``'s ``--threads``, ``--episode-threads``,
    ``--episode-queue``, ``--queue``, ``--queue-timeout``)."""

    threads: int = Field(default=16, ge=1, description=(
        "Requests running at once on the whole server (the size of its thread pool)."))
    episode_threads: int = Field(default=2, ge=1, description=(
        "Requests of one episode running at once (the rest of the pool stays free for other episodes)."))
    episode_queue: int = Field(default=8, ge=0, description="Requests of one episode waiting to run; one more is "
                               "refused with 429.")
    queue: int = Field(default=64, ge=0, description="Requests of all episodes waiting to run; one more is refused "
                       "with 503.")
    queue_timeout: float = Field(default=30.0, gt=0, description=(
        "Seconds a request may wait to start; then it is refused (429 when its own episode's requests held it "
        "back, else 503)."))


class Refused(Exception):
    """A request not admitted: ``status`` 429 or 503, ``reason`` (``episode_queue_full`` or
    ``server_saturated``), ``retry_after`` seconds, and the figures that decided."""

    def __init__(self, status: int, reason: str, message: str, retry_after: int, **facts: Any):
        super().__init__(message)
        self.status, self.reason, self.message, self.retry_after, self.facts = (status, reason, message,
                                                                               retry_after, facts)

    def response(self, route: str) -> JSONResponse:
        body = {"detail": f"{route} refused: {self.message}; retry after {self.retry_after} s",
                "refused": {"route": route, "reason": self.reason, "retry_after": self.retry_after, **self.facts}}
        return JSONResponse(body, status_code=self.status, headers={"Retry-After": str(self.retry_after)})


class _Waiter:
    __slots__ = ("future", "key")

    def __init__(self, key: str | None, future: asyncio.Future):
        self.key, self.future = key, future


class Gate:
    """The admission of one server (see the module docstring)."""

    def __init__(self, config: AdmissionConfig | None = None, *, name: str = "sweworld-request"):
        self.config = config or AdmissionConfig()
        self._pool = ThreadPoolExecutor(max_workers=self.config.threads, thread_name_prefix=name)
        self._running: Counter[str | None] = Counter()
        self._queued: Counter[str | None] = Counter()
        self._waiting: deque[_Waiter] = deque()
        self._total = 0
        self._took: dict[str | None, float] = {}
        """Seconds a request took, a moving average per episode (None: all): what Retry-After is made of."""

    def check(self, key: str | None) -> None:
        """``Refused`` if a request of ``key`` would be refused now (a server checks it before it reads
        the request's body: a refusal costs next to nothing)."""
        cfg = self.config
        if key is not None and self._running[key] + self._queued[key] >= cfg.episode_threads + cfg.episode_queue:
            raise self._refuse(key, EPISODE_FULL)
        if not self._can_start(key) and len(self._waiting) >= cfg.queue:
            raise self._refuse(key, SATURATED)

    async def run(self, key: str | None, fn: Callable[[], T]) -> T:
        """``fn()`` on a thread of the pool once ``key``'s episode and the server have room for it;
        ``Refused`` when they have none soon."""
        self.check(key)
        if not self._can_start(key):
            await self._wait(key)
        else:
            self._start(key)
        return await self._execute(key, fn)

    def _can_start(self, key: str | None) -> bool:
        return self._total < self.config.threads and (key is None or self._running[key] < self.config.episode_threads)

    def _start(self, key: str | None) -> None:
        self._running[key] += 1
        self._total += 1

    async def _wait(self, key: str | None) -> None:
        waiter = _Waiter(key, asyncio.get_running_loop().create_future())
        self._waiting.append(waiter)
        self._queued[key] += 1
        try:
            await asyncio.wait_for(asyncio.shield(waiter.future), self.config.queue_timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
            if waiter.future.done() and not waiter.future.cancelled():
                if isinstance(exc, asyncio.TimeoutError):
                    return  # granted as the wait ended: run it
                self._finish(key, None)  # granted, but its client has gone
                raise
            waiter.future.cancel()
            self._waiting.remove(waiter)
            self._queued[key] -= 1
            if isinstance(exc, asyncio.CancelledError):
                raise
            own = key is not None and self._running[key] >= self.config.episode_threads
            raise self._refuse(key, EPISODE_FULL if own else SATURATED, waited=True) from None

    async def _execute(self, key: str | None, fn: Callable[[], T]) -> T:
        loop, started = asyncio.get_running_loop(), time.monotonic()

        def done(_: object) -> None:  # on the pool's thread: the slot is freed on the loop's
            with contextlib.suppress(RuntimeError):  # the loop has closed: nothing is left to admit
                loop.call_soon_threadsafe(self._finish, key, time.monotonic() - started)
        try:
            future = self._pool.submit(fn)
        except RuntimeError:  # the pool was shut down: the server is stopping
            self._finish(key, None)
            raise
        future.add_done_callback(done)
        # shielded: a client that goes away does not free the slot of work still running on a thread
        return await asyncio.shield(asyncio.wrap_future(future))

    def _finish(self, key: str | None, took: float | None) -> None:
        self._running[key] -= 1
        self._total -= 1
        if self._running[key] <= 0:
            del self._running[key]
        if took is not None:
            for name in (key, None):
                self._took[name] = took if name not in self._took else 0.8 * self._took[name] + 0.2 * took
        self._dispatch()

    def _dispatch(self) -> None:
        """Start the waiters that now can, first come first served (one episode's full share does
        not hold back another episode's request behind it)."""
        for waiter in list(self._waiting):
            if self._total >= self.config.threads:
                return
            if waiter.future.done() or not self._can_start(waiter.key):
                continue
            self._waiting.remove(waiter)
            self._queued[waiter.key] -= 1
            if self._queued[waiter.key] <= 0:
                del self._queued[waiter.key]
            self._start(waiter.key)
            waiter.future.set_result(None)

    def _refuse(self, key: str | None, reason: str, *, waited: bool = False) -> Refused:
        cfg = self.config
        if reason == EPISODE_FULL:
            held, share, took = self._running[key] + self._queued[key], cfg.episode_threads, self._took.get(key, 1.0)
            why = (f"episode {key!r} has {self._running[key]} request(s) running and {self._queued[key]} waiting "
                   f"(bounds: {cfg.episode_threads} running, {cfg.episode_queue} waiting per episode)")
            facts: dict[str, Any] = {"episode": key, "running": self._running[key], "waiting": self._queued[key],
                                     "episode_threads": cfg.episode_threads, "episode_queue": cfg.episode_queue}
            status = 429
        else:
            held, share, took = self._total + len(self._waiting), cfg.threads, self._took.get(None, 1.0)
            why = (f"the server has {self._total} request(s) running and {len(self._waiting)} waiting "
                   f"(bounds: {cfg.threads} running, {cfg.queue} waiting)")
            facts = {"episode": key, "running": self._total, "waiting": len(self._waiting), "threads": cfg.threads,
                     "queue": cfg.queue}
            status = 503
        if waited:
            why = f"it waited {cfg.queue_timeout:g} s without starting: {why}"
        retry = min(max(1, math.ceil(took * held / share)), max(1, math.ceil(cfg.queue_timeout)))
        return Refused(status, reason, why, retry, **facts)

    def shutdown(self) -> None:
        """Stop taking work; what runs goes on to its end (the episodes' close ends it)."""
        self._pool.shutdown(wait=False, cancel_futures=True)


__all__ = ["EPISODE_FULL", "SATURATED", "AdmissionConfig", "Gate", "Refused"]
