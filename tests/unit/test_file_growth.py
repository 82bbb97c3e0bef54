"""A wait for a file that this process writes sleeps until the write (fsbench.core.file_growth): a case's start
waits for each host's first sample without looking at its file every few milliseconds."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from fsbench.core.errors import CommandResult
from fsbench.core.file_growth import GROWTH, FileGrowth
from fsbench.monitor import MonitorSession
from fsbench.monitor import session as session_module
from fsbench.transport.capture import CappedOutput


def test_a_write_through_captured_output_wakes_its_watcher_at_once(tmp_path):
    path = tmp_path / "out"
    out = CappedOutput(path, keep=False)
    with GROWTH.watch(path) as grew:
        threading.Timer(0.3, out.write, args=(b"@ 1.0\n",)).start()
        started = time.monotonic()
        assert grew.wait(5) and time.monotonic() - started < 2
    out.close()
    assert path.read_bytes() == b"@ 1.0\n"


def test_watches_end_with_their_block_and_an_unwatched_write_wakes_nobody(tmp_path):
    growth = FileGrowth()
    growth.grew(str(tmp_path / "nobody"))
    with growth.watch(tmp_path / "a") as first, growth.watch(tmp_path / "a") as second:
        growth.grew(str(tmp_path / "a"))
        assert first.is_set() and second.is_set()
    assert growth._watching == {}


class _Late:
    """A host whose sampler's first sample comes 0.6 s after it started, through CappedOutput as a transport
    writes it."""

    remote_base = "/tmp/fsbench-test"

    def __init__(self, host: str):
        self.host = host

    def run(self, argv, *, cwd=None, timeout=60.0, env=None, stdout_path: Path | None = None, stderr_path=None,
            cancel: threading.Event | None = None) -> CommandResult:
        assert stdout_path is not None and cancel is not None
        out = CappedOutput(stdout_path, keep=False)
        time.sleep(0.6)
        out.write(b"@ 1.0\nstat 1\n. 1.0\n")
        cancel.wait(10)
        out.close()
        return CommandResult(self.host, list(argv), 0, "", "", 0.0, interrupted=True)


def test_the_wait_for_a_first_sample_looks_at_the_file_when_it_grew_not_every_few_milliseconds(tmp_path,
                                                                                            monkeypatch):
    looks = []
    fstat = session_module.os.fstat
    monkeypatch.setattr(session_module.os, "fstat", lambda fd: looks.append(fd) or fstat(fd))
    s = MonitorSession(_Late("h1"), "h1", 0.1, [], tmp_path / "h1" / "monitor.txt")
    try:
        assert s.start()
    finally:
        s.stop()
    # 0.6 s of waiting: about 12 looks at the fallback's 50 ms (the write itself wakes it at once); the former
    # loop looked every 2 to 10 ms, over 100 times
    assert 2 <= len(looks) <= 20, len(looks)


def test_a_writer_that_does_not_say_is_still_seen_by_the_fallback(tmp_path):
    path = tmp_path / "quiet"
    path.write_bytes(b"")

    class Quiet(_Late):
        def run(self, argv, *, stdout_path=None, cancel=None, **_):
            time.sleep(0.2)
            stdout_path.write_bytes(b"@ 1.0\n. 1.0\n")  # straight to the file: no word to GROWTH
            cancel.wait(10)
            return CommandResult(self.host, list(argv), 0, "", "", 0.0, interrupted=True)

    s = MonitorSession(Quiet("h2"), "h2", 0.1, [], path)
    try:
        started = time.monotonic()
        assert s.start() and time.monotonic() - started < 2
    finally:
        s.stop()
