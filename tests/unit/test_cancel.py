"""fsbench.core.cancel.Cancel: a cancel flag select() waits on; the SSH output loop sleeps until it is set."""

from __future__ import annotations

import gc
import os
import select
import threading
import time

from fsbench.core.cancel import Cancel
from fsbench.transport import remote


def readable(c: Cancel) -> bool:
    return bool(select.select([c], [], [], 0)[0])


def test_its_descriptor_is_readable_exactly_while_the_flag_is_set():
    c = Cancel()
    assert not readable(c)
    c.set()
    assert c.is_set() and readable(c)
    c.set()  # twice: still one flag
    c.clear()
    assert not c.is_set() and not readable(c)
    c.set()
    assert readable(c)


def test_a_flag_set_before_anyone_asked_for_the_descriptor_is_readable_at_once():
    c = Cancel()
    c.set()
    assert readable(c)


def test_a_flag_never_waited_on_makes_no_pipe_and_a_dropped_one_closes_its_pipe():
    c = Cancel()
    c.set()
    assert c._pipe is None  # most events are never selected on: no descriptors for them
    fd = c.fileno()
    os.fstat(fd)
    del c
    gc.collect()
    try:
        os.fstat(fd)
    except OSError:
        pass
    else:  # the number may have been reused meanwhile by another open: then it is no pipe of ours
        assert not select.select([fd], [], [], 0)[0]


class _QuietChannel:
    """A channel whose command runs and says nothing: only the cancel can end the streaming loop."""

    def __init__(self) -> None:
        self._r, self._w = os.pipe()
        self.status_event = threading.Event()
        self.closed = self.eof_received = False
        self.looked = 0

    def fileno(self) -> int:
        return self._r

    def recv_ready(self) -> bool:
        self.looked += 1
        return False

    def recv_stderr_ready(self) -> bool:
        return False


def _stream_until_cancelled(cancel: threading.Event, after_s: float) -> tuple[str, int]:
    chan = _QuietChannel()
    out = remote.Sink(None, keep=True, cap=1 << 20, name="stdout")
    err = remote.PgidFilter(remote.Sink(None, keep=False, cap=1 << 20, name="stderr"))
    timer = threading.Timer(after_s, cancel.set)
    timer.start()
    try:
        outcome = remote.pump(chan, out, err, timeout=30, cancel=cancel, alive=lambda: True)
    finally:
        timer.cancel()
        os.close(chan._r)
        os.close(chan._w)
    return outcome, chan.looked


def test_the_streaming_loop_sleeps_until_a_cancel_instead_of_looking_every_50_ms():
    began = time.monotonic()
    outcome, looked = _stream_until_cancelled(Cancel(), 1.0)
    assert outcome == "cancel" and time.monotonic() - began >= 1.0
    # woken by the cancel (and at most every POLL_S meanwhile), not every CANCEL_POLL_S
    assert looked <= 1.0 / remote.POLL_S + 3, looked


def test_a_plain_event_still_cancels_by_looking_between_short_waits():
    outcome, looked = _stream_until_cancelled(threading.Event(), 1.0)
    assert outcome == "cancel"
    assert looked >= 0.5 / remote.CANCEL_POLL_S, looked


def test_close_frees_the_pipe_at_once_and_keeps_the_flag():
    c = Cancel()
    before = len(os.listdir("/proc/self/fd"))
    c.fileno()
    assert len(os.listdir("/proc/self/fd")) == before + 2
    c.set()
    c.close()
    c.close()  # twice: nothing more to close
    assert len(os.listdir("/proc/self/fd")) == before and c.is_set()
    assert readable(c)  # asked again: a new pipe, readable since the flag is set
    c.close()
    assert len(os.listdir("/proc/self/fd")) == before
