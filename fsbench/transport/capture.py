"""Captured output with a cap: the first and last half of `cap` bytes are kept, the middle is left out.

Why: a tool that prints without end (a loop, `yes`, a debug flag) would fill the run directory's disk
in seconds; its start says what it was doing and its end holds the results and the error, so both stay.
The middle is replaced by one line that says how much was left out, and `note()` says it for the case.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

from fsbench.api.transport import TAIL_BYTES
from fsbench.core.file_growth import GROWTH

#: per stream (stdout, stderr) of one command; the scenario's settings.output_cap changes it
DEFAULT_CAP = 64 * 2**20
MIN_CAP = 64 * 2**10
CHUNK = 1 << 20


class CappedOutput:
    """One stream's bytes into a file (or memory), at most `cap` of them kept: head, marker line, tail.

    Into a file, the tail is kept in the file itself (never in memory): past the head the file grows to
    at most head + 2 x tail, then its newest tail is moved down behind the head and the rest cut off.
    """

    def __init__(self, path: Path | None, *, keep: bool, cap: int = DEFAULT_CAP, name: str = "stdout"):
        self.name, self.cap = name, max(MIN_CAP, int(cap))
        self.head_limit = self.cap - self.cap // 2
        self.tail_limit = self.cap // 2
        self._fh = open(path, "w+b") if path else None
        self._path = str(path) if path else ""
        self._mem: list[bytes] | None = [] if keep and path is None else None
        self.total = 0  # bytes the command printed, kept or not
        self._size = 0  # bytes in the file (or memory) now
        self._tail: deque[bytes] = deque()  # memory only: the chunks past the head
        self._last = bytearray()  # the last TAIL_BYTES, for messages

    def write(self, data: bytes) -> None:
        if not data:
            return
        self.total += len(data)
        self._last += data
        if len(self._last) > 2 * TAIL_BYTES:
            del self._last[:-TAIL_BYTES]
        if self._fh is not None:
            self._fh.write(data)
            # in the file as it arrives: collectors time each output line by when it shows in the file, and a
            # case's start waits for its samplers' first samples there
            self._fh.flush()
            GROWTH.grew(self._path, data)
            self._size += len(data)
            if self._size > self.head_limit + 2 * self.tail_limit:
                self._keep_newest(self.tail_limit)
        elif self._mem is not None:
            if self._size < self.head_limit:
                part = data[:self.head_limit - self._size]
                self._mem.append(part)
                self._size += len(part)
                data = data[len(part):]
            if data:
                self._tail.append(data)
                self._size += len(data)
                while self._tail and self._size - len(self._tail[0]) >= self.head_limit + self.tail_limit:
                    self._size -= len(self._tail.popleft())

    @property
    def capped(self) -> bool:
        """Whether some of the output was left out."""
        return self.total > self.cap

    def tail(self) -> bytes:
        """The last bytes printed (for messages), whatever was left out."""
        return bytes(self._last[-TAIL_BYTES:])

    def data(self) -> bytes:
        """What was kept in memory (keep=True without a file)."""
        return b"".join(self._mem or [])

    def note(self) -> str:
        """One line for the case's warnings, or '' when nothing was left out."""
        if not self.capped:
            return ""
        return (f"{self.name}: {_mib(self.total)} printed, over the cap of {_mib(self.cap)} per stream "
                f"(settings.output_cap): kept the first {_mib(self.head_limit)} and the last "
                f"{_mib(self.tail_limit)}, {_mib(self.total - self.cap)} left out")

    def close(self) -> None:
        """Put the marker line between the head and the tail; close the file."""
        marker = (f"\n[fsbench: {self.total - self.cap} bytes of {self.name} left out here: over the cap of "
                  f"{self.cap} bytes per stream (settings.output_cap)]\n").encode()
        if self._mem is not None and self._tail:
            tail = b"".join(self._tail)
            if self.capped:
                self._mem.append(marker)
                tail = tail[-self.tail_limit:]
            self._mem.append(tail)
            self._tail.clear()
        if self._fh is None:
            return
        try:
            if self.capped:
                self._keep_newest(self.tail_limit)
                _move(self._fh, self.head_limit, self.tail_limit, self.head_limit + len(marker))
                self._fh.seek(self.head_limit)
                self._fh.write(marker)
        finally:
            self._fh.close()
            self._fh = None

    def _keep_newest(self, n: int) -> None:
        """The file's last n bytes moved down behind the head, the rest cut off."""
        fh = self._fh
        if fh is None:
            return
        _move(fh, self._size - n, n, self.head_limit)
        fh.truncate(self.head_limit + n)
        fh.seek(0, 2)
        self._size = self.head_limit + n


def _move(fh, src: int, length: int, dest: int) -> None:
    """Copy length bytes at src to dest within one file, in chunks (overlapping either way)."""
    if src == dest or length <= 0:
        return
    starts = range(0, length, CHUNK)
    for off in (starts if dest < src else reversed(starts)):  # as memmove: never overwrite what is still to copy
        n = min(CHUNK, length - off)
        fh.seek(src + off)
        data = fh.read(n)
        fh.seek(dest + off)
        fh.write(data)


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"
