"""A file this process writes, watched for growth: its waiter wakes when a write lands, not on a timer.

Why: a case's start waits for every host's first sample in the file its sampler's output goes to (written
by the transport's thread as frames or packets arrive). Looked at every 2 to 10 ms, each host's wait woke
about 200 to 300 times before its sample came on a busy 32-host lab (a second or two): 6,000 to 9,000
wake-ups a case, all of them the controller's. The writer (fsbench.transport.capture.CappedOutput) now says
when it wrote, and the waiter sleeps until then (or a coarse fallback timeout, for a writer that does not
say).

A listener hears the bytes themselves as they are written (`listen`): a collector times each output line by when
its writer wrote it, where a thread a host looked at the file every 50 ms.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class FileGrowth:
    """Events by path: `grew(path)` sets the events of those watching it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watching: dict[str, list[threading.Event]] = {}
        self._listening: dict[str, list[Callable[[bytes], None]]] = {}

    @contextmanager
    def watch(self, path: Path | str) -> Iterator[threading.Event]:
        """An event set at each write to path while inside (clear it before each look at the file)."""
        event = threading.Event()
        with self._kept(self._watching, str(path), event):
            yield event

    @contextmanager
    def listen(self, path: Path | str, hear: Callable[[bytes], None]) -> Iterator[None]:
        """`hear(data)` called with each write's bytes to path while inside, from the writer's thread, once they
        are in the file."""
        with self._kept(self._listening, str(path), hear):
            yield

    @contextmanager
    def _kept(self, table: dict[str, list[Any]], key: str, item: Any) -> Iterator[None]:
        """item in table[key] while inside."""
        with self._lock:
            table.setdefault(key, []).append(item)
        try:
            yield
        finally:
            with self._lock:
                items = table.get(key, [])
                if item in items:
                    items.remove(item)
                if not items:
                    table.pop(key, None)

    def grew(self, path: str, data: bytes = b"") -> None:
        """A write of data to path landed (a writer's flush): wake whoever watches it, tell whoever listens."""
        events = self._watching.get(path)  # no lock: a dict lookup is atomic, and nearly every path is unwatched
        if events:
            for event in list(events):
                event.set()
        heard = self._listening.get(path)
        if heard and data:
            for hear in list(heard):
                hear(data)


#: the process's watched files
GROWTH = FileGrowth()
