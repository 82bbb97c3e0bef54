"""Waiting for a local command: its end through a pidfd, a Cancel the moment it is set, a timeout."""

from __future__ import annotations

import subprocess
import threading
import time

from fsbench.core.cancel import Cancel
from fsbench.transport import exit_wait
from fsbench.transport.exit_wait import Ended, wait_exit


def _sleep() -> subprocess.Popen:
    return subprocess.Popen(["sleep", "30"])


def test_a_cancel_ends_the_wait_when_set_not_at_the_next_look(monkeypatch):
    # looks far apart: only the Cancel's descriptor, selected beside the pidfd, can end the wait early
    monkeypatch.setattr(exit_wait, "CANCEL_POLL_S", 60.0)
    monkeypatch.setattr(exit_wait, "TIMEOUT_POLL_S", 60.0)
    proc, cancel = _sleep(), Cancel()
    try:
        threading.Timer(0.1, cancel.set).start()
        start = time.monotonic()
        assert wait_exit(proc, cancel, 120.0, start) is Ended.CANCELLED
        assert time.monotonic() - start < 30  # not the minute of the next look
        assert proc.poll() is None  # left running for the caller to stop
    finally:
        proc.kill()
        proc.wait()
        cancel.close()


def test_an_end_is_seen_and_reaped_and_a_plain_event_still_cancels():
    proc = subprocess.Popen(["sh", "-c", "exit 3"])
    assert wait_exit(proc, Cancel(), None, time.monotonic()) is Ended.EXITED and proc.returncode == 3
    proc, event = _sleep(), threading.Event()
    try:
        event.set()
        assert wait_exit(proc, event, None, time.monotonic()) is Ended.CANCELLED
    finally:
        proc.kill()
        proc.wait()


def test_a_timeout_ends_the_wait():
    proc = _sleep()
    try:
        assert wait_exit(proc, Cancel(), 0.2, time.monotonic()) is Ended.TIMED_OUT
    finally:
        proc.kill()
        proc.wait()
