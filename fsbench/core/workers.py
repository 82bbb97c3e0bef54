"""Threads kept between fan-outs: a case's steps on every host start their calls on threads that exist already.

Why: every step of a case ran its per-host calls on new threads (a pool per step, a thread per pending call),
and starting and ending a thread cost about 0.2 ms of the controller's CPU on a busy machine (measured in
session 26 on 16 hosts): as much as the command it carried through a relay. A worker that finished a call
waits IDLE_S for the next one, then ends. There is no bound: a call that starts a fan-out of its own gets new
threads when every kept one is busy, so no call waits for a thread that its own waiter holds.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

#: how long a worker with nothing to do is kept
IDLE_S = 30.0


class _Worker(threading.Thread):
    def __init__(self, pool: Workers):
        super().__init__(name="fsbench-worker", daemon=True)
        self.pool = pool
        self.calls: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            try:
                call = self.calls.get(timeout=self.pool.idle_s)
            except queue.Empty:
                if self.pool._retire(self):
                    return
                continue  # handed a call just as it timed out: it is in the queue
            try:
                call()
            except BaseException:  # noqa: BLE001 - callers catch their own; a kept thread must outlive any
                pass
            del call  # its result and arguments are not kept while idle
            self.name = "fsbench-worker"
            self.pool._idle_again(self)


class Workers:
    """Start calls on kept threads (a new one when none is idle)."""

    def __init__(self, idle_s: float = IDLE_S):
        self.idle_s = idle_s
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self.started = 0  # threads made so far (the tests read it)

    def start(self, call: Callable[[], None]) -> None:
        """Run call on an idle worker, or on a new one."""
        with self._lock:
            worker = self._idle.pop() if self._idle else None
            if worker is None:
                self.started += 1
        if worker is None:
            worker = _Worker(self)
            worker.calls.put(call)
            worker.start()
        else:
            worker.calls.put(call)

    def _idle_again(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def _retire(self, worker: _Worker) -> bool:
        """True when the worker may end (it is idle and nobody handed it a call meanwhile)."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


#: the process's kept workers
WORKERS = Workers()
