"""Run items in parallel but decide in order: results are deterministic whatever the scheduling.

``run_ordered`` keeps at most ``window`` items in flight, hands results to ``on_result`` in item
order, and stops submitting once ``enough(results_so_far)`` holds for the in-order prefix. Items
finished beyond that point are handed to ``on_extra`` (cached for a later run) but not returned.
Items run in a thread pool of ``workers``, or through ``submit(index, item) -> Future`` (a runner's
pool: ``sweworld.runs.runner``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def run_ordered(items: Sequence[T], fn: Callable[[int, T], R] | None, *, workers: int,
                enough: Callable[[list[R]], bool] = lambda _: False,
                on_result: Callable[[R], None] | None = None,
                on_extra: Callable[[R], None] | None = None,
                submit: Callable[[int, T], Future] | None = None) -> list[R]:
    """``[fn(i, item) ...]`` for the in-order prefix of ``items`` up to the first point where
    ``enough`` holds (all of them if never)."""
    results: list[R] = []
    if enough(results):
        return results
    done: dict[int, R] = {}
    pending: dict[Future, int] = {}
    next_item = 0
    stopped = False
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        start = submit or (lambda i, item: pool.submit(fn, i, item))
        while True:
            while not stopped and next_item < len(items) and len(pending) < max(2, 2 * workers):
                pending[start(next_item, items[next_item])] = next_item
                next_item += 1
            if not pending:
                break
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                index = pending.pop(future)
                result = future.result()
                if stopped:
                    if on_extra:
                        on_extra(result)
                    continue
                done[index] = result
            while not stopped and len(results) in done:
                result = done.pop(len(results))
                results.append(result)
                if on_result:
                    on_result(result)
                if enough(results):
                    stopped = True
                    for future in list(pending):
                        if future.cancel():
                            pending.pop(future)
            if stopped and on_extra:
                for result in done.values():
                    on_extra(result)
                done.clear()
    return results
