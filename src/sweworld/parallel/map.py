"""The one parallel map of the runs: items out to a runner's pool, results back to the driver.

``map_items(items, fn, ...)`` runs ``fn(item)`` (``fn(item, shared)`` with ``share=obj``: ``obj``
is sent to the workers once, ``Pool.share``) for every item on ``runner`` (default: threads here,
``workers`` of them), each item submitted with its environment group (``group(item)``: Ray's home
node affinity) and the pool reserving ``hints`` per item. As each item finishes, on the thread that
called the map (the driver, the only writer of the stores):

- ``on_done(item, result)``;
- an exception of one of the ``catch`` types is that item's outcome: ``on_error(item, exc)``, the
  exception stands in the results, the other items go on. Any other exception is raised from the
  map once the items in flight are over (queued ones are cancelled, nothing more is reported), as
  an unguarded ``future.result()`` does.

Resume: ``done(item)`` true leaves the item out (a store already holds it).

What an item writes through ``sweworld.parallel.shipping`` (evaluation logs, traces, audit records) comes
back with its result and is written here, before ``on_done``: nothing of an item is written on the
node that ran it, and an item that failed or whose worker was lost leaves nothing.

``map_ordered`` is the same map deciding in item order: at most ``window`` items in flight, each
result handed to ``on_result(item, value)`` in item order, stopping once ``enough(values)`` holds
for the in-order prefix (what finished beyond it goes to ``on_extra(item, value)``); ``known(item)``
is the value of an item decided before (resume), which then does not run. ``needless(index)`` true
says that the item at ``index`` cannot be in that prefix any more (the caller knows, from what
finished out of order, that ``enough`` will hold before it): it is not submitted, or cancelled while
queued, so that a run stops as soon as what it needs is in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, as_completed, wait
from typing import Any, TypeVar

from sweworld.parallel.runner import ROLLOUT, Hints, LocalRunner, Pool, Runner
from sweworld.parallel.shipping import Shipped, run_item

T = TypeVar("T")

_NOTHING: Any = object()
Catch = type[BaseException] | tuple[type[BaseException], ...]


def _submitter(pool: Pool, fn: Callable[..., Any], share: Any,
               group: Callable[[Any], str | None] | None) -> Callable[[Any], Future]:
    shared = () if share is _NOTHING else (pool.share(share),)

    def submit(item: Any) -> Future:
        return pool.submit(run_item, fn, item, *shared, group=group(item) if group else None)
    return submit


def _finished(submit: Callable[[Any], Future], items: Sequence[Any], window: int | None,
              stopped: Callable[[int], bool] = lambda _index: False) -> Iterator[tuple[int, Any, Future]]:
    """``(index, item, future)`` of each item as it finishes; at most ``window`` in flight (None: all
    submitted at once); an item whose index is ``stopped`` is not submitted (the queued ones cancelled);
    nothing is submitted past the first such."""
    if window is None:
        futures = {submit(item): (index, item) for index, item in enumerate(items)}
        for future in as_completed(futures):
            yield (*futures[future], future)
        return
    pending: dict[Future, tuple[int, Any]] = {}
    upcoming = iter(enumerate(items))
    while True:
        while len(pending) < window:
            nxt = next(upcoming, None)
            if nxt is None or stopped(nxt[0]):
                upcoming = iter(())
                break
            pending[submit(nxt[1])] = nxt
        for future in [f for f, (index, _item) in pending.items() if stopped(index) and f.cancel()]:
            del pending[future]
        if not pending:
            return
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in sorted(finished, key=lambda f: pending[f][0]):
            yield (*pending.pop(future), future)


def _outcome(future: Future, item: Any, catch: Catch,
             on_error: Callable[[Any, BaseException], None] | None) -> tuple[Any, bool]:
    """(result or caught exception, whether it failed), the item's outputs landed; other exceptions
    propagate."""
    try:
        result = future.result()
    except catch as exc:
        if on_error:
            on_error(item, exc)
        return exc, True
    if isinstance(result, Shipped):
        result.outputs.land()
        result = result.result
    return result, False


def map_items(items: Iterable[T], fn: Callable[..., Any], *, runner: Runner | None = None, workers: int = 1,
              hints: Hints = ROLLOUT, group: Callable[[T], str | None] | None = None, share: Any = _NOTHING,
              done: Callable[[T], bool] | None = None, on_done: Callable[[T, Any], None] | None = None,
              catch: Catch = (), on_error: Callable[[T, BaseException], None] | None = None) -> list[Any]:
    """``fn`` over the items not ``done`` on ``runner`` (see the module docstring); their results
    (a caught exception in a failed item's place) in item order."""
    todo = [item for item in items if not (done and done(item))]
    results: list[Any] = [None] * len(todo)
    with (runner or LocalRunner()).pool(workers, hints) as pool:
        for index, item, future in _finished(_submitter(pool, fn, share, group), todo, None):
            results[index], failed = _outcome(future, item, catch, on_error)
            if on_done and not failed:
                on_done(item, results[index])
    return results


def map_ordered(items: Sequence[T], fn: Callable[..., Any], *, runner: Runner | None = None, workers: int = 1,
                hints: Hints = ROLLOUT, group: Callable[[T], str | None] | None = None, share: Any = _NOTHING,
                window: int | None = None, known: Callable[[T], Any] | None = None,
                on_done: Callable[[T, Any], None] | None = None, catch: Catch = (),
                on_error: Callable[[T, BaseException], None] | None = None,
                enough: Callable[[list[Any]], bool] = lambda _: False,
                on_result: Callable[[T, Any], None] | None = None,
                on_extra: Callable[[T, Any], None] | None = None,
                needless: Callable[[int], bool] | None = None) -> list[Any]:
    """The values of the in-order prefix of ``items`` up to the first point where ``enough`` holds
    (all of them if never): ``known(item)`` when not None, else ``fn``'s result (or the caught
    exception); ``window`` defaults to ``max(2, 2 * workers)``. ``on_done``/``on_error`` come as each
    run item finishes, ``on_result`` in item order (see the module docstring)."""
    values: list[Any] = []
    if enough(values):
        return values
    window = window or max(2, 2 * workers)
    ahead: dict[int, tuple[T, Any]] = {}
    state = {"stopped": False}
    with (runner or LocalRunner()).pool(workers, hints) as pool:
        run = _submitter(pool, fn, share, group)
        decided: set[Future] = set()

        def submit(item: T) -> Future:
            value = known(item) if known else None
            if value is None:
                return run(item)
            future: Future = Future()
            future.set_result(value)
            decided.add(future)
            return future

        def stopped(index: int) -> bool:
            return state["stopped"] or (needless is not None and needless(index))

        for index, item, future in _finished(submit, items, window, stopped):
            value, failed = _outcome(future, item, catch, on_error)
            if on_done and not failed and future not in decided:
                on_done(item, value)
            decided.discard(future)
            if state["stopped"]:
                if on_extra:
                    on_extra(item, value)
                continue
            ahead[index] = (item, value)
            while not state["stopped"] and len(values) in ahead:
                item, value = ahead.pop(len(values))
                values.append(value)
                if on_result:
                    on_result(item, value)
                if enough(values):
                    state["stopped"] = True
            if state["stopped"]:
                for item, value in ahead.values():
                    if on_extra:
                        on_extra(item, value)
                ahead.clear()
    return values
