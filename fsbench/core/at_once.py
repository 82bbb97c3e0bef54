"""Calls that each wait on something of their own (a sampler's last sample, a process's end), made at once:
the caller waits for the slowest of them instead of for their sum."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")


def at_once(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Each call in a thread of its own, all joined; their results in the calls' order. The first call's
    error (in that order) is raised once every call has ended, so none is left running."""
    if len(calls) <= 1:
        return [call() for call in calls]
    results: list[T | None] = [None] * len(calls)
    errors: list[BaseException | None] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,), name=f"fsbench-at-once-{i}", daemon=True)
               for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for exc in errors:
        if exc is not None:
            raise exc
    return results  # type: ignore[return-value]  # every slot was set: no call raised


class Pending(Generic[T]):
    """A call started in a thread of its own while the caller goes on; `result()` waits for it."""

    def __init__(self, call: Callable[[], T], name: str = "fsbench-pending"):
        self._result: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call,), name=name, daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], T]) -> None:
        try:
            self._result = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            self._error = exc

    def wait(self) -> None:
        """Until the call ended (its error, if any, is kept for result())."""
        self._thread.join()

    def result(self) -> T:
        """The call's result once it ended, or its error raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]  # set: the call returned
