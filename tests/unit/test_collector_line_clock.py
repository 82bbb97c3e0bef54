"""A case's collectors: started together, each output line timed when it lands, stopped together.

The transports' writer tells what it writes (fsbench.core.file_growth), so a line is timed as it is written and
its file is never looked at; a writer that does not tell is looked at by one thread for all the case's hosts,
each file opened once."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from fsbench.collectors import COLLECTORS, line_clock
from fsbench.collectors.line_clock import LineClock
from fsbench.collectors.session import CollectorSession, CollectorSessions
from fsbench.core.errors import CommandResult
from fsbench.transport.local import LocalTransport


class _Collector:
    name, interval_s, options = "c", 1.0, {}


def _counting_opens(monkeypatch) -> list[str]:
    opened: list[str] = []
    real = open

    def counting_open(path, *args, **kwargs):
        fh = real(path, *args, **kwargs)  # a look before the command made the file fails: not counted
        opened.append(str(path))
        return fh

    monkeypatch.setattr(line_clock, "open", counting_open, raising=False)
    return opened


def _session(host: str, transport, tmp_path: Path) -> CollectorSession:
    return CollectorSession(_Collector(), COLLECTORS.get("juicefs-stats"), host, transport, ["stats"],
                            tmp_path / host, 30.0)


def _wait(cond, limit_s: float = 10.0) -> None:
    deadline = time.monotonic() + limit_s
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_a_line_is_timed_as_the_transport_writes_it_and_its_file_is_never_looked_at(tmp_path, monkeypatch):
    opened = _counting_opens(monkeypatch)
    local = LocalTransport()
    sessions = []
    for host in ("h1", "h2"):
        s = _session(host, local, tmp_path)
        s.argv = ["sh", "-c", "echo first; sleep 0.3; printf 'second\\nthird\\n'; exec sleep 30"]
        sessions.append(s)
    running = CollectorSessions(sessions)
    running.start()
    _wait(lambda: all(len(s.line_times) == 3 for s in sessions))
    began = time.monotonic()
    running.stop()  # the kind's tail (juicefs stats: its interval) is waited for, then the commands end
    assert time.monotonic() - began < 10
    for s in sessions:
        first, second, third = s.line_times
        # 0.3 s apart on the host; the first may be read a moment late (a pipe), never all three at once
        assert second - first >= 0.2 and third == second, s.line_times
        assert s.output.read_text() == "first\nsecond\nthird\n"
        assert s.result is not None and s.result.interrupted  # ended by the stop
    assert opened == []


class _Quiet:
    """A transport whose writer does not tell: a line, two more 0.3 s after the first was timed, straight into
    the file; then it waits to be stopped."""

    def __init__(self, host: str):
        self.host = host
        self.session: CollectorSession | None = None

    def run(self, argv, *, cwd=None, timeout=60.0, env=None, stdout_path: Path | None = None, stderr_path=None,
            cancel: threading.Event | None = None) -> CommandResult:
        assert stdout_path is not None and cancel is not None and self.session is not None
        with open(stdout_path, "w+b") as fh:
            fh.write(b"first\n")
            fh.flush()
            _wait(lambda: bool(self.session.line_times), 5)  # type: ignore[union-attr]
            time.sleep(0.3)
            fh.write(b"second\nthird\n")
            fh.flush()
            cancel.wait(10)
        return CommandResult(self.host, list(argv), 0, "", "", 0.3, interrupted=True)


def test_a_writer_that_does_not_tell_is_looked_at_by_one_thread_with_its_file_opened_once(tmp_path, monkeypatch):
    opened = _counting_opens(monkeypatch)
    hosts = [_Quiet(f"h{i}") for i in range(3)]
    sessions = [_session(h.host, h, tmp_path) for h in hosts]
    for h, s in zip(hosts, sessions):
        h.session = s
    running = CollectorSessions(sessions)
    running.start()
    _wait(lambda: all(len(s.line_times) == 3 for s in sessions))
    lookers = [t.name for t in threading.enumerate() if t.name.startswith("collector-lines")]
    running.stop()
    assert lookers == ["collector-lines"]  # one for the case, not one a host
    for s in sessions:
        first, second, third = s.line_times
        assert second - first >= 0.3 and third == second
        assert opened.count(str(s.output)) == 1


def test_bytes_a_look_timed_before_their_writer_told_are_timed_once(tmp_path):
    path = tmp_path / "out"
    clock = LineClock(path)
    clock.start()
    path.write_bytes(b"a\nb\n")
    assert clock.look() is False and len(clock.times) == 2
    clock.heard(b"a\nb\n")  # the writer tells of the same bytes after the look saw them
    assert len(clock.times) == 2
    clock.heard(b"c\n")
    assert len(clock.times) == 3 and clock.look() is True  # told: no look any more
    clock.close()


class _Grouped:
    """A transport kind that starts its hosts' commands together (as ssh-relay does)."""

    calls: list[tuple[str, list[str]]] = []

    def __init__(self, host: str):
        self.host = host

    @staticmethod
    def start_streams(items):
        _Grouped.calls.append((threading.current_thread().name, [tr.host for tr, *_ in items]))
        return _Ended(len(items))


class _Ended:
    def __init__(self, n: int):
        self.n = n

    def alive(self, i: int) -> bool:
        return False

    def ended(self) -> list[int]:
        return list(range(self.n))

    def result(self, i: int):
        return CommandResult("h", ["stats"], 0)

    def stop(self) -> None:
        return None


def test_a_kinds_collectors_start_in_one_call_and_a_stop_does_not_wait_for_ended_commands(tmp_path):
    _Grouped.calls = []
    sessions = [_session(f"g{i}", _Grouped(f"g{i}"), tmp_path) for i in range(4)]
    running = CollectorSessions(sessions)
    running.start()
    assert _Grouped.calls == [(threading.current_thread().name, ["g0", "g1", "g2", "g3"])]
    began = time.monotonic()
    running.stop()  # every command ended: the kind's tail (1 s) is not waited for
    assert time.monotonic() - began < 0.5
    assert all(s.result is not None and s.result.ok for s in sessions)
