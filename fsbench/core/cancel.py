"""A cancel flag that select() can wait on, so a loop streaming a command's output need not poll for it.

Why: every command that can be stopped (a case's samplers, fio's servers, the tool itself) streams its SSH
channel in a loop that also watches its cancel flag. With a plain threading.Event that loop must wake every
50 ms to look at the flag: 20 wake-ups a second per command, 2,560 a second for the samplers and servers of
a case on 64 hosts, which the controller's one core pays for. A `Cancel` is also a file descriptor that
becomes readable when the flag is set, so the loop sleeps until output, the command's end or the cancel.

Its pipe is closed by close(), which the owner calls once no thread waits on it any more (or, failing that,
when the object is collected). Garbage collection alone is not enough: a session and its thread hold each
other, so only a full collection frees them, and a case on 64 hosts makes some 250 descriptors of them.
"""

from __future__ import annotations

import os
import threading
import weakref


class Cancel(threading.Event):
    """A threading.Event whose fileno() turns readable on set() and stays readable until clear()."""

    def __init__(self) -> None:
        super().__init__()
        self._pipe_lock = threading.Lock()
        self._pipe: tuple[int, int] | None = None
        self._finalizer: weakref.finalize | None = None

    def fileno(self) -> int:
        """The read end of a pipe (made on first use, closed with the object): readable while the flag is set."""
        with self._pipe_lock:
            if self._pipe is None:
                self._pipe = os.pipe()
                for fd in self._pipe:
                    os.set_blocking(fd, False)
                self._finalizer = weakref.finalize(self, _close, *self._pipe)
                if self.is_set():  # set before anyone asked for the descriptor
                    _poke(self._pipe[1])
            return self._pipe[0]

    def set(self) -> None:
        super().set()
        with self._pipe_lock:
            if self._pipe is not None:
                _poke(self._pipe[1])

    def close(self) -> None:
        """Close the pipe (the flag stays as it is); only once nothing selects on it. A later fileno() makes
        another."""
        with self._pipe_lock:
            if self._finalizer is not None:
                self._finalizer()  # closes both ends, once
            self._pipe = self._finalizer = None

    def clear(self) -> None:
        with self._pipe_lock:
            super().clear()
            if self._pipe is not None:
                try:
                    while os.read(self._pipe[0], 4096):
                        pass
                except BlockingIOError:
                    pass


def _poke(fd: int) -> None:
    try:
        os.write(fd, b"!")
    except BlockingIOError:  # the pipe is full of earlier pokes: it is readable already
        pass


def _close(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
