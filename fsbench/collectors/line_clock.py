"""When each line of a collector's output arrived on the controller: the times that place its samples around the
tool's run (fsbench.api.collectors.ToolWindow).

Why this way: a thread a host looked at the output file every 50 ms (20 looks a second a host, 2,000 threads for
a collector on 1,000 hosts). The transports' writer (fsbench.transport.capture.CappedOutput) now tells what it
wrote as it writes it (fsbench.core.file_growth), so a line is timed when it lands, with no look at all. A writer
that does not tell (a transport kind of somebody else's) is looked at instead, by one thread for all of a case's
collectors (fsbench.collectors.session.CollectorSessions), until it tells.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import BinaryIO

from fsbench.core.file_growth import GROWTH


class LineClock:
    """The arrival times of an output file's lines, from start() to close()."""

    def __init__(self, path: Path):
        self.path = path
        self.times: list[float] = []
        self._lock = threading.Lock()
        self._counted = 0  # bytes of the output whose lines are timed
        self._heard = 0  # bytes its writer said it wrote
        self._told = False  # the writer says what it writes: no look is needed
        self._fh: BinaryIO | None = None
        self._listening = contextlib.ExitStack()

    def start(self) -> None:
        """Listen to the file's writer (before the command that writes it starts)."""
        self._listening.enter_context(GROWTH.listen(self.path, self.heard))

    def heard(self, data: bytes) -> None:
        """The writer wrote data (now in the file): its lines arrived now."""
        with self._lock:
            self._told = True
            self._heard += len(data)
            new = self._heard - self._counted  # a look may have timed the start of data already
            if new > 0:
                self._count(data[-new:] if new < len(data) else data)
                self._counted = self._heard

    def look(self) -> bool:
        """For a writer that does not tell: time the lines that showed in the file since the last look. True once
        the writer tells (no look is needed any more)."""
        with self._lock:
            if self._told:
                return True
            if self._fh is None:
                try:
                    self._fh = open(self.path, "rb")  # noqa: SIM115 - kept open across looks, closed by close()
                except OSError:
                    return False  # the command has not made it yet
            if os.fstat(self._fh.fileno()).st_size > self._counted:
                self._fh.seek(self._counted)
                data = self._fh.read()
                self._count(data)
                self._counted += len(data)
            return False

    def close(self) -> None:
        """A last look (lines since the previous one), then stop listening."""
        self.look()
        self._listening.close()
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def _count(self, data: bytes) -> None:
        n = data.count(b"\n")
        if n:
            self.times += [time.monotonic()] * n
