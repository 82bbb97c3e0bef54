"""A collector's line clock: each output line timed when it shows in the file, the file opened once."""

from __future__ import annotations

import builtins
import threading
import time
from pathlib import Path

from fsbench.collectors import COLLECTORS
from fsbench.collectors import session as collector_session
from fsbench.collectors.session import CollectorSession
from fsbench.core.errors import CommandResult


class _Collector:
    name, interval_s, options = "c", 1.0, {}


class _Lines:
    """A host whose collector prints a line, two more 0.3 s after the clock has timed the first, then waits to
    be stopped (as the transports write: into the file as it arrives)."""

    session: CollectorSession

    def run(self, argv, *, cwd=None, timeout=60.0, env=None, stdout_path: Path | None = None, stderr_path=None,
            cancel: threading.Event | None = None) -> CommandResult:
        assert stdout_path is not None and cancel is not None
        with open(stdout_path, "w+b") as fh:
            fh.write(b"first\n")
            fh.flush()
            deadline = time.monotonic() + 5
            while not self.session.line_times and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.3)
            fh.write(b"second\nthird\n")
            fh.flush()
            cancel.wait(10)
        return CommandResult("h1", list(argv), 0, "", "", 0.3, interrupted=True)


def test_each_line_is_timed_when_it_shows_and_the_output_is_opened_once(tmp_path, monkeypatch):
    opened: list[str] = []

    def counting_open(path, *args, **kwargs):
        fh = builtins.open(path, *args, **kwargs)  # a look before the command made the file fails: not counted
        opened.append(str(path))
        return fh

    monkeypatch.setattr(collector_session, "open", counting_open, raising=False)
    host = _Lines()
    session = CollectorSession(_Collector(), COLLECTORS.get("juicefs-stats"), "h1", host, ["stats"], tmp_path, 10.0)
    host.session = session
    session.start()
    deadline = time.monotonic() + 5
    while len(session.line_times) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    session._cancel.set()
    session._thread.join(5)
    session._clock.join(5)
    assert len(session.line_times) == 3
    first, second, third = session.line_times
    assert second - first >= 0.3 and third == second
    assert opened.count(str(session.output)) == 1
