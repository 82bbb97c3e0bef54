"""The deadlines of every connection kept by one thread (fsbench.transport.deadlines)."""

from __future__ import annotations

import heapq
import threading
import time

from fsbench.transport import deadlines
from fsbench.transport.deadlines import Deadline, Deadlines


def _threads(name: str) -> int:
    return sum(1 for t in threading.enumerate() if t.name == name)


def test_a_call_comes_when_due_and_not_before():
    d = Deadlines(name="test-deadlines-due")
    fired = threading.Event()
    start = time.monotonic()
    d.call_later(0.2, fired.set)
    assert not fired.wait(0.1)
    assert fired.wait(5)
    assert time.monotonic() - start >= 0.2


def test_a_cancelled_call_never_comes():
    d = Deadlines(name="test-deadlines-cancel")
    calls: list[str] = []
    d.call_later(0.05, lambda: calls.append("cancelled")).cancel()
    done = threading.Event()
    d.call_later(0.15, done.set)
    assert done.wait(5)
    assert calls == []
    assert d.pending() == 0


def test_one_thread_keeps_every_deadline():
    """A thread per deadline (threading.Timer) cost 0.15 ms of CPU per SSH command."""
    d = Deadlines(name="test-deadlines-one")
    handles = [d.call_later(30, lambda: None) for _ in range(200)]
    assert _threads("test-deadlines-one") == 1
    assert d.pending() == 200
    for h in handles:
        h.cancel()
    assert d.pending() == 0


def test_a_sooner_deadline_wakes_the_thread_that_waits_for_a_later_one():
    d = Deadlines(name="test-deadlines-sooner")
    d.call_later(60, lambda: None)  # the thread now waits a minute
    time.sleep(0.05)
    fired = threading.Event()
    start = time.monotonic()
    d.call_later(0.05, fired.set)
    assert fired.wait(5)
    assert time.monotonic() - start < 2


def test_calls_are_taken_in_the_order_they_are_due():
    """(Taken off the heap in order; each call then runs in a thread of its own, so the order they run in is
    the scheduler's.)"""
    d = Deadlines(name="test-deadlines-order")
    for i, ago in enumerate((0.2, 0.5, 0.3)):
        d._heap.append((time.monotonic() - ago, i, Deadline(time.monotonic() - ago, lambda: None)))
    heapq.heapify(d._heap)
    with d._cond:
        taken = [d._next_due() for _ in range(3)]
    assert [t.when for t in taken] == sorted(t.when for t in taken)
    assert len({id(t) for t in taken}) == 3


def test_a_failing_call_leaves_the_thread_for_the_next():
    d = Deadlines(name="test-deadlines-failing")

    def boom() -> None:
        raise RuntimeError("a channel that would not close")

    d.call_later(0.01, boom)
    fired = threading.Event()
    d.call_later(0.1, fired.set)
    assert fired.wait(5)


def test_cancelled_entries_are_dropped_when_many_wait(monkeypatch):
    """Each command's deadline is cancelled within milliseconds but due only after its timeout: they must not
    pile up for that long on a run with thousands of commands."""
    monkeypatch.setattr(deadlines, "COMPACT_AT", 50)
    d = Deadlines(name="test-deadlines-compact")
    assert d._compact_at == 50
    for _ in range(120):
        d.call_later(300, lambda: None).cancel()
    assert len(d._heap) <= 51
    assert d.pending() == 0


def test_a_call_that_blocks_holds_no_other_deadline_back():
    """A late host's channel close may block on its dead socket: the next deadline still comes on time."""
    d = Deadlines(name="test-deadlines-blocking")
    release = threading.Event()
    d.call_later(0.01, lambda: release.wait(10))
    fired = threading.Event()
    start = time.monotonic()
    d.call_later(0.1, fired.set)
    try:
        assert fired.wait(5)
        assert time.monotonic() - start < 2
    finally:
        release.set()


def test_many_live_deadlines_are_not_looked_through_at_every_call(monkeypatch):
    """With more live deadlines than COMPACT_AT (1,000 hosts' commands in flight), the heap is looked through
    again only once it doubled: not at every new deadline."""
    monkeypatch.setattr(deadlines, "COMPACT_AT", 50)
    d = Deadlines(name="test-deadlines-live")
    for _ in range(60):
        d.call_later(300, lambda: None)  # all live: looked through at 50, next at 100
    assert d._compact_at == 100
    for _ in range(40):
        d.call_later(300, lambda: None)
    assert (d._compact_at, len(d._heap)) == (100, 100)
    d.call_later(300, lambda: None)  # the heap holds 100: looked through once, the next look at 200
    assert (d._compact_at, d.pending()) == (200, 101)
