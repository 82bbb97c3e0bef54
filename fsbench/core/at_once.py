"""Calls that each wait on something of their own (a sampler's last sample, a process's end), made at once:
the caller waits for the slowest of them instead of for their sum."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar, cast

from fsbench.core.workers import WORKERS

T = TypeVar("T")


class Pending(Generic[T]):
    """A call started on a kept thread (fsbench.core.workers) while the caller goes on; `result()` waits for it."""

    def __init__(self, call: Callable[[], T], name: str = "fsbench-pending"):
        self._result: T | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        WORKERS.start(lambda: self._run(call, name))

    def _run(self, call: Callable[[], T], name: str) -> None:
        threading.current_thread().name = name  # for logs and profiles, as a thread of its own was named
        try:
            self._result = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            self._error = exc
        finally:
            self._done.set()

    def wait(self) -> None:
        """Until the call ended (its error, if any, is kept for result())."""
        self._done.wait()

    def result(self) -> T:
        """The call's result once it ended, or its error raised here."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]  # set: the call returned


def at_once(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Each call in a thread of its own, all waited for; their results in the calls' order. The first call's
    error (in that order) is raised once every call has ended, so none is left running."""
    if len(calls) <= 1:
        return [call() for call in calls]
    pending = [Pending(call, f"fsbench-at-once-{i}") for i, call in enumerate(calls)]
    for p in pending:
        p.wait()
    return [p.result() for p in pending]


#: at most this many calls of `each` run at once: a campaign's hosts are reached in parallel, yet 1,000 hosts
#: never cost 1,000 threads (each call mostly waits on its host)
EACH_WORKERS = 64

K = TypeVar("K")


def each(items: Sequence[K], call: Callable[[K], T], workers: int = EACH_WORKERS) -> list[T]:
    """call(item) for every item, up to `workers` at once (a host's step on every host of a case): the caller
    waits for the slowest batch instead of for the sum of them. Results in the items' order; the first error
    (in that order) is raised once every call has ended, so nothing is left running on any host. Interrupted
    (Ctrl-C) while it waits, every item still runs (a stop on every host is not cut short), as a thread pool's
    shutdown did, and the interrupt is raised once they have."""
    if len(items) <= 1:
        return [call(item) for item in items]
    results: list[T | None] = [None] * len(items)
    errors: dict[int, BaseException] = {}
    order = iter(range(len(items)))
    lock = threading.Lock()

    def runner() -> None:
        while True:
            with lock:
                i = next(order, None)
            if i is None:
                return
            try:
                results[i] = call(items[i])
            except BaseException as exc:  # noqa: BLE001 - raised to the caller below, in the items' order
                errors[i] = exc

    runners = [Pending(runner, "fsbench-each") for _ in range(max(1, min(workers, len(items))))]
    try:
        for r in runners:
            r.wait()
    except BaseException:
        for r in runners:
            r.wait()
        raise
    if errors:
        raise errors[min(errors)]
    return cast("list[T]", results)  # every slot set: no error
