"""Deadlines for every connection of a process, kept by one thread.

paramiko gives no timeout to a channel's exec request nor to starting SFTP, so each such step is bounded by
a call that closes the channel when it is late. A `threading.Timer` per step started a thread for every
command: 0.15 ms of the controller's CPU each, a tenth or more of what one command over SSH costs it
(bench/host_scale.py counts 39 commands a host in a 32-client run of four cases). Here one daemon thread
waits for the earliest deadline of all of them.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

#: with more entries than this, cancelled ones are dropped at once instead of when their time comes (a
#: command's deadline is cancelled within milliseconds, but stays in the heap for its whole timeout)
COMPACT_AT = 1024


class Deadline:
    """A call due at a time; cancel() before it is due and it never happens."""

    __slots__ = ("when", "fn", "cancelled")

    def __init__(self, when: float, fn: Callable[[], object]):
        self.when, self.fn, self.cancelled = when, fn, False

    def cancel(self) -> None:
        self.cancelled = True


class Deadlines:
    """Calls due at given times: one thread (started with the first) waits for the earliest, and makes each
    call that comes due in a short thread of its own."""

    def __init__(self, name: str = "fsbench-deadlines"):
        self._name = name
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._compact_at = COMPACT_AT

    def call_later(self, seconds: float, fn: Callable[[], object]) -> Deadline:
        """Call fn `seconds` from now (in a thread of its own), unless cancelled first."""
        d = Deadline(time.monotonic() + seconds, fn)
        with self._cond:
            if len(self._heap) >= self._compact_at:
                self._heap = [e for e in self._heap if not e[2].cancelled]
                heapq.heapify(self._heap)
                # many live ones (1,000 hosts' commands in flight): the next look only once the heap doubled, so
                # the looks cost O(1) a call on average
                self._compact_at = max(COMPACT_AT, 2 * len(self._heap))
            heapq.heappush(self._heap, (d.when, next(self._order), d))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()
            elif self._heap[0][2] is d:  # due before what the thread waits for
                self._cond.notify()
        return d

    def pending(self) -> int:
        """How many calls are still to come (not cancelled, not made yet)."""
        with self._cond:
            return sum(1 for e in self._heap if not e[2].cancelled)

    def _loop(self) -> None:
        while True:
            with self._cond:
                due = self._next_due()
            if not due.cancelled:  # (cancelled since it was taken off the heap: nothing to do)
                # in a thread of its own: a late host's close may block on its dead socket, and must not hold
                # back the others' deadlines (a call is rare: only a step that did not finish in time makes one)
                threading.Thread(target=_call, args=(due,), name=f"{self._name}-call", daemon=True).start()

    def _next_due(self) -> Deadline:
        """Wait (holding the condition) until the earliest live deadline is due, and take it off the heap."""
        while True:
            while self._heap and self._heap[0][2].cancelled:
                heapq.heappop(self._heap)
            if not self._heap:
                self._cond.wait()
                continue
            wait = self._heap[0][0] - time.monotonic()
            if wait <= 0:
                return heapq.heappop(self._heap)[2]
            self._cond.wait(wait)


def _call(due: Deadline) -> None:
    if due.cancelled:
        return
    try:
        due.fn()
    except Exception:  # noqa: BLE001 - a failed close is logged; the deadline's step fails on its own
        log.exception("a deadline's call failed")


#: the process's deadlines (every SSH connection's exec and SFTP starts)
DEADLINES = Deadlines()
