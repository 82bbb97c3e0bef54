"""A case's samplers all start at once, then their first samples are waited for: on more hosts than `each`
runs at once (64), they do not start in waves that each wait for their first samples."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from fsbench.core.errors import CommandResult
from fsbench.monitor import MonitorSession
from fsbench.run.side_jobs import Monitors

HOSTS = 100  # more than EACH_WORKERS


class _Sampler:
    """A host whose sampler writes its first sample only once every host's sampler has started (a barrier)."""

    remote_base = "/tmp/fsbench-test"  # a host reached over SSH

    def __init__(self, host: str, barrier: threading.Barrier):
        self.host, self.barrier = host, barrier

    def run(self, argv, *, cwd=None, timeout=60.0, env=None, stdout_path: Path | None = None, stderr_path=None,
            cancel: threading.Event | None = None) -> CommandResult:
        self.barrier.wait()
        assert stdout_path is not None and cancel is not None
        stdout_path.write_bytes(b"@ 1.0\nstat 1\n. 1.0\n")
        cancel.wait(10)
        return CommandResult(self.host, list(argv), 0, "", "", 0.0, interrupted=True)


def test_every_sampler_starts_before_any_first_sample_is_waited_for(tmp_path):
    barrier = threading.Barrier(HOSTS, timeout=5)
    sessions = [MonitorSession(_Sampler(f"h{i}", barrier), f"h{i}", 1.0, [], tmp_path / f"h{i}" / "monitor.txt")
                for i in range(HOSTS)]
    start = time.monotonic()
    Monitors(sessions, 1.0, threading.Event()).start()
    took = time.monotonic() - start
    try:
        assert not barrier.broken
        assert all(s.raw_path.read_bytes().startswith(b"@ 1.0") for s in sessions)
        assert took < 5
    finally:
        for s in sessions:  # the first stop ends every sampler started with it
            s.stop()
