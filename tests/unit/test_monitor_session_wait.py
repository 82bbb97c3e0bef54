"""The case's start waits for the sampler's baseline sample without reopening the raw file at each look."""

from __future__ import annotations

import builtins
import threading
import time
from pathlib import Path

from fsbench.core.errors import CommandResult
from fsbench.monitor.session import MonitorSession

SAMPLE = b"#fsbench-monitor 1 pid=1 interval=1 ncpu=1 scan=1 marker=0\n@ 1.00 1\ncpu  1 2 3 4\n. 1\n"


class SlowSampler:
    """A transport whose sampler writes its first sample in two pieces, `late_s` after its start."""

    host = "h1"
    remote_base = None

    def __init__(self, late_s: float):
        self.late_s = late_s

    def run(self, argv, *, stdout_path: Path, cancel: threading.Event, **_) -> CommandResult:
        time.sleep(self.late_s)
        with open(stdout_path, "ab") as fh:
            fh.write(SAMPLE[:40])
            fh.flush()
            time.sleep(0.05)
            fh.write(SAMPLE[40:])
        cancel.wait(10)
        return CommandResult("h1", argv, 0, "", "", 0.0)


def test_a_late_baseline_is_seen_with_one_open_of_the_raw_file(tmp_path, monkeypatch):
    raw = tmp_path / "monitor.txt"
    opens: list[str] = []
    real_open = builtins.open

    def counting_open(file, *a, **k):
        if str(file) == str(raw):
            opens.append(threading.current_thread().name)
        return real_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", counting_open)
    session = MonitorSession(SlowSampler(0.7), "h1", 1.0, [], raw)  # type: ignore[arg-type]
    began = time.monotonic()
    assert session.start()
    waited = time.monotonic() - began
    assert 0.7 <= waited < 3  # seen once it was whole, long before the 10 s limit (loose: a loaded machine)
    assert opens.count(threading.current_thread().name) == 1  # the waiting thread opened it once
    session.stop()


def test_a_sampler_that_ends_without_a_sample_ends_the_wait(tmp_path):
    class Silent:
        host = "h1"
        remote_base = None

        def run(self, argv, **_):
            return CommandResult("h1", argv, 1, "", "no sh", 0.0)

    session = MonitorSession(Silent(), "h1", 1.0, [], tmp_path / "monitor.txt")  # type: ignore[arg-type]
    began = time.monotonic()
    assert session.start() is False and time.monotonic() - began < 5  # not the 10 s limit
