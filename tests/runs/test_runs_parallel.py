"""The one parallel map of the runs (``sweworld.parallel.map``): results and ``on_done`` on the
driver, per-item errors, resume, hints and groups handed to the pool; the ordered variant decides
in item order and stops there; the same map on a local Ray."""

from __future__ import annotations

import random
import sys
import threading
import time
from concurrent.futures import Future
from typing import Any

import pytest

from raycluster import local_ray
from sweworld.parallel.map import map_items, map_ordered
from sweworld.parallel.runner import EVALUATION, LocalRunner


def slow_square(x: int) -> int:
    time.sleep((5 - x) / 50)  # the later items finish first
    return x * x


def test_on_done_comes_on_the_driver_as_items_finish_and_results_in_item_order():
    """Item x finishes only once the driver has seen item x + 1 done (events, not sleeps: the order
    holds on a loaded machine)."""
    seen: list[tuple[int, int, str]] = []
    done = {x: threading.Event() for x in range(6)}
    done[5].set()

    def in_reverse(x: int) -> int:
        done[x + 1].wait(60)
        return x * x

    def on_done(item: int, result: int) -> None:
        seen.append((item, result, threading.current_thread().name))
        done[item].set()

    results = map_items(range(5), in_reverse, workers=5, on_done=on_done)
    assert results == [0, 1, 4, 9, 16]
    assert [item for item, _, _ in seen] == [4, 3, 2, 1, 0]
    assert {thread for _, _, thread in seen} == {threading.current_thread().name}
    assert map_items([], slow_square) == []


def boom_on_odd(x: int) -> int:
    if x % 2:
        raise ValueError(f"odd {x}")
    return x


def test_a_caught_error_is_its_item_outcome_and_the_others_go_on():
    done, failed = [], []
    results = map_items(range(6), boom_on_odd, workers=3, catch=ValueError,
                        on_done=lambda item, _: done.append(item), on_error=lambda item, exc: failed.append(item))
    assert sorted(done) == [0, 2, 4] and sorted(failed) == [1, 3, 5]
    assert [r if isinstance(r, int) else str(r) for r in results] == [0, "odd 1", 2, "odd 3", 4, "odd 5"]


def test_an_uncaught_error_is_raised_and_the_queued_items_do_not_run():
    ran: list[int] = []

    def first_fails(x: int) -> int:
        ran.append(x)
        if x == 0:
            raise KeyError(x)
        time.sleep(0.01)
        return x

    with pytest.raises(KeyError):
        map_items(range(50), first_fails, workers=1, catch=ValueError)  # another type: not caught
    assert len(ran) < 50


def test_items_done_before_are_skipped():
    ran: list[int] = []
    results = map_items(range(6), lambda x: ran.append(x) or x, workers=2, done=lambda x: x < 4)
    assert sorted(ran) == [4, 5] and results == [4, 5]


class RecordingRunner:
    """A local runner that records what the map asks of its pool."""

    name = "recording"

    def __init__(self):
        self.pools: list[tuple[int, Any]] = []
        self.submits: list[tuple[tuple, str | None]] = []
        self.shared: list[Any] = []

    def pool(self, workers, hints):
        self.pools.append((workers, hints))
        inner = LocalRunner().pool(workers, hints)
        outer = self

        class Pool:
            def share(self, obj):
                outer.shared.append(obj)
                return ("handle", obj)

            def submit(self, fn, /, *args, group=None, **kwargs) -> Future:
                outer.submits.append((args[1:], group))  # args[0]: the item's function (run_item's)
                return inner.submit(fn, *args, **kwargs)

            def __enter__(self):
                inner.__enter__()
                return self

            def __exit__(self, *exc):
                inner.__exit__(*exc)
        return Pool()


def test_hints_groups_and_the_shared_object_go_to_the_pool():
    runner, backend = RecordingRunner(), object()
    results = map_items(["a/x@1", "b/y@2"], lambda item, shared: (item, shared[1] is backend), runner=runner,
                        workers=3, hints=EVALUATION, group=lambda item: item.upper(), share=backend)
    assert results == [("a/x@1", True), ("b/y@2", True)]
    assert runner.pools == [(3, EVALUATION)] and runner.shared == [backend]
    assert sorted(runner.submits) == [(("a/x@1", ("handle", backend)), "A/X@1"),
                                      (("b/y@2", ("handle", backend)), "B/Y@2")]


def jittered_square(x: int) -> int:
    time.sleep(random.random() / 200)
    return x * x


def test_ordered_is_deterministic_and_stops_in_order():
    items = list(range(40))
    for workers in (1, 3, 8):
        order: list[int] = []
        values = map_ordered(items, jittered_square, workers=workers, on_result=lambda item, _, order=order: order.append(item))
        assert values == [x * x for x in items] and order == items
    extras: list[int] = []
    even = map_ordered(items, jittered_square, workers=4, enough=lambda done: sum(v % 2 == 0 for v in done) >= 5,
                       on_extra=lambda _, value: extras.append(value))
    assert even == [x * x for x in range(9)]  # stops right after the fifth even square, in item order
    assert all(e not in even for e in extras)
    assert map_ordered([], jittered_square, workers=2) == []


def test_ordered_keeps_a_window_takes_known_values_and_reports_errors():
    running, most = [0], [0]
    lock = threading.Lock()

    def tracked(x: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.005)
        with lock:
            running[0] -= 1
        return boom_on_odd(x)

    done: list[int] = []
    values = map_ordered(range(12), tracked, workers=8, window=3, known=lambda x: -x if x % 3 == 0 else None,
                         catch=ValueError, on_done=lambda item, _: done.append(item))
    assert most[0] <= 3
    assert [v if isinstance(v, int) else "error" for v in values] == \
        [0, "error", 2, -3, 4, "error", -6, "error", 8, -9, 10, "error"]
    assert sorted(done) == [2, 4, 8, 10]  # the known ones did not run, the failed ones are errors
    with pytest.raises(ValueError):
        map_ordered([1, 2], boom_on_odd, workers=2)


def plus_shared(item: int, shared: dict) -> int:
    return item + shared["offset"]


@pytest.mark.ray
@pytest.mark.xdist_group("ray")
def test_the_map_on_a_local_ray(sweworld_home):
    from sweworld.parallel.ray_runner import RayRunner

    with local_ray(sweworld_home, by_value=sys.modules[__name__]):
        seen: list[int] = []
        results = map_items(range(4), plus_shared, runner=RayRunner(), workers=2, share={"offset": 10},
                            group=lambda item: f"repo{item % 2}", done=lambda item: item == 3,
                            on_done=lambda item, _: seen.append(item))
        assert results == [10, 11, 12] and sorted(seen) == [0, 1, 2]
        failed = map_items([1, 2], boom_on_odd, runner=RayRunner(), workers=2, catch=ValueError)
        assert isinstance(failed[0], ValueError) and failed[1] == 2
        assert map_ordered(range(5), slow_square, runner=RayRunner(), workers=2) == [0, 1, 4, 9, 16]
