"""A file this process writes, watched for growth: its waiter wakes when a write lands, not on a timer.

Why: a case's start waits for every host's first sample in the file its sampler's output goes to (written
by the transport's thread as frames or packets arrive). Looked at every 2 to 10 ms, each host's wait woke
about 200 to 300 times before its sample came on a busy 32-host lab (a second or two): 6,000 to 9,000
wake-ups a case, all of them the controller's. The writer (fsbench.transport.capture.CappedOutput) now says
when it wrote, and the waiter sleeps until then (or a coarse fallback timeout, for a writer that does not
say).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class FileGrowth:
    """Events by path: `grew(path)` sets the events of those watching it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watching: dict[str, list[threading.Event]] = {}

    @contextmanager
    def watch(self, path: Path | str) -> Iterator[threading.Event]:
        """An event set at each write to path while inside (clear it before each look at the file)."""
        key, event = str(path), threading.Event()
        with self._lock:
            self._watching.setdefault(key, []).append(event)
        try:
            yield event
        finally:
            with self._lock:
                events = self._watching.get(key, [])
                if event in events:
                    events.remove(event)
                if not events:
                    self._watching.pop(key, None)

    def grew(self, path: str) -> None:
        """A write to path landed (a writer's flush): wake whoever watches it."""
        events = self._watching.get(path)  # no lock: a dict lookup is atomic, and nearly every path is unwatched
        if events:
            for event in list(events):
                event.set()


#: the process's watched files
GROWTH = FileGrowth()
