"""Kept worker threads (fsbench.core.workers) under `each` and `Pending`: reused between fan-outs, never a bound
that a nested fan-out could wait on, retired when idle, errors handed over in the items' order."""

from __future__ import annotations

import threading
import time

import pytest

from fsbench.core import at_once
from fsbench.core.at_once import Pending, each
from fsbench.core.workers import WORKERS, Workers


def test_a_fan_out_runs_on_the_threads_the_one_before_used():
    each(list(range(8)), lambda _: time.sleep(0.01))  # the workers exist now
    before = WORKERS.started
    seen: set[int] = set()
    for _ in range(20):
        each(list(range(8)), lambda _: seen.add(threading.get_ident()) or time.sleep(0.001))
    assert WORKERS.started - before <= 8  # 20 fan-outs of 8 made (almost) no thread: they were kept
    assert len(seen) <= 16


def test_nested_fan_outs_get_threads_of_their_own_so_none_waits_for_its_waiter():
    """4 outer calls each fan out over 4 inner ones that only return once all 16 inner calls run at once:
    a bounded pool smaller than 20 threads would wait for ever."""
    barrier = threading.Barrier(16)
    results = each(list(range(4)), lambda i: each(list(range(4)), lambda j: barrier.wait(timeout=10) >= 0 and
                                                     (i, j)), workers=4)
    assert results == [[(i, j) for j in range(4)] for i in range(4)]


def test_an_idle_worker_ends_and_a_later_call_gets_a_new_one():
    pool = Workers(idle_s=0.1)
    ran = threading.Event()
    workers: list[threading.Thread] = []
    pool.start(lambda: workers.append(threading.current_thread()) or ran.set())
    assert ran.wait(5)
    workers[0].join(timeout=5)
    assert not workers[0].is_alive() and pool.started == 1
    again = threading.Event()
    pool.start(again.set)
    assert again.wait(5) and pool.started == 2


def test_the_first_error_in_the_items_order_is_raised_once_every_call_ended():
    ended: list[int] = []

    def call(i: int) -> int:
        time.sleep(0.05 if i == 3 else 0.0)
        ended.append(i)
        if i in (1, 3):
            raise ValueError(f"item {i}")
        return i

    with pytest.raises(ValueError, match="item 1"):
        each(list(range(6)), call, workers=3)
    assert sorted(ended) == list(range(6))
    assert each([], call) == [] and each([0], call) == [0]


def test_a_pending_call_hands_over_its_error_and_the_worker_goes_on():
    failing = Pending(lambda: 1 / 0, "fsbench-test")
    with pytest.raises(ZeroDivisionError):
        failing.result()
    assert Pending(lambda: threading.current_thread().name, "fsbench-named").result() == "fsbench-named"


def test_each_runs_at_most_workers_calls_at_once():
    running, peak, lock = [0], [0], threading.Lock()

    def call(_: int) -> None:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1

    each(list(range(20)), call, workers=3)
    assert peak[0] <= 3 and at_once.EACH_WORKERS == 64
