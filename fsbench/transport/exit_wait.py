"""Waiting for a local command's end, a cancel or a timeout, whichever comes first.

The process's end is seen the moment it happens, through a pidfd (Linux 5.3+) that select() reports
readable when the process exits; a cancel (Ctrl-C, a monitor's stop) the moment it is set where it is a
`Cancel` (fsbench.core.cancel: its pipe is selected beside the pidfd), else within CANCEL_POLL_S. A
monitor's sampler, stopped after every case, waited 10 ms on average for that look. Polling
Popen.wait(timeout=0.05) saw each end up to 50 ms late, about 25 ms a command on average, several times a
case (the tool, its samplers); without a pidfd it is still the way.
"""

from __future__ import annotations

import os
import select
import subprocess
import threading
import time
from enum import Enum

from fsbench.core.cancel import Cancel

#: how often a cancel event is looked at while the command runs
CANCEL_POLL_S = 0.02
#: how often a timeout is looked at when nothing can cancel the command
TIMEOUT_POLL_S = 0.25


class Ended(Enum):
    """How the wait ended."""

    EXITED = "exited"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed out"


def wait_exit(proc: subprocess.Popen, cancel: threading.Event | None, timeout: float | None,
              start: float) -> Ended:
    """Wait until proc exits (it is reaped), cancel is set, or `timeout` seconds after `start` (monotonic)
    have passed; a cancelled or timed-out process is left running for the caller to stop."""
    fd = _pidfd(proc.pid)
    wake = cancel.fileno() if fd is not None and isinstance(cancel, Cancel) else None
    try:
        while True:
            step = CANCEL_POLL_S if cancel is not None and wake is None else TIMEOUT_POLL_S
            if timeout is not None:
                step = max(0.0, min(step, start + timeout - time.monotonic()))
            if _exited(proc, fd, step, wake):
                return Ended.EXITED
            if cancel is not None and cancel.is_set():
                return Ended.CANCELLED
            if timeout is not None and time.monotonic() - start > timeout:
                return Ended.TIMED_OUT
    finally:
        if fd is not None:
            os.close(fd)


def _exited(proc: subprocess.Popen, fd: int | None, step: float, wake: int | None = None) -> bool:
    """Whether proc ended within `step` seconds (reaped if so); `wake` readable ends the wait early."""
    if fd is None:
        try:
            proc.wait(timeout=min(step, 0.05) or 0.001)
            return True
        except subprocess.TimeoutExpired:
            return False
    ready, _, _ = select.select([fd] if wake is None else [fd, wake], [], [], step)
    if fd not in ready:
        return False
    proc.wait()  # it has exited: reap it and set its returncode
    return True


def _pidfd(pid: int) -> int | None:
    """A pidfd of the child (not reaped yet, so its pid cannot be another process's), or None without one."""
    opener = getattr(os, "pidfd_open", None)  # Linux 5.3 and Python 3.9 or newer only: asked by name
    if opener is None:
        return None
    try:
        return opener(pid)
    except OSError:  # an old kernel (ENOSYS), or a seccomp filter refusing it
        return None
