"""fsbench.api.streams: a case's long commands on many hosts, started together and stopped together.

A transport kind with `start_streams` gets all of its hosts' commands in one call from the caller's thread;
every other host's command runs in a thread of its own until the shared cancel stops it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import fsbench.api.streams as streams_module
from fsbench.api.streams import Stream, Streams
from fsbench.core.errors import CommandResult


class Grouped:
    """A transport kind that starts its hosts' commands together: each stays alive until the group's stop."""

    calls: list[tuple[str, list[tuple[str, list[str]]]]] = []

    def __init__(self, host: str):
        self.host = host

    @staticmethod
    def start_streams(items):
        return _Group([(tr.host, argv) for tr, argv, _out, _err, _lag in items])


class _Group:
    def __init__(self, items: list[tuple[str, list[str]]]):
        self.items, self.stopped = items, 0
        Grouped.calls.append((threading.current_thread().name, items))

    def alive(self, i: int) -> bool:
        return self.stopped == 0

    def ended(self) -> list[int]:
        return list(range(len(self.items))) if self.stopped else []

    def result(self, i: int):
        if self.stopped == 0:
            return None
        host, argv = self.items[i]
        return CommandResult(host, argv, -15, interrupted=True)

    def stop(self) -> None:
        time.sleep(0.05)  # a stop takes a moment: a second caller must wait for it, not stop again
        self.stopped += 1


class Alone:
    """A transport without start_streams: its command runs until the cancel, in a thread of its own."""

    def __init__(self, host: str, fail: bool = False):
        self.host, self.fail = host, fail

    def run(self, argv, *, timeout=None, stdout_path: Path | None = None, stderr_path=None, cancel=None, **_):
        if self.fail:
            raise ConnectionError(f"cannot reach {self.host}")
        assert stdout_path is not None and cancel is not None
        stdout_path.write_text(f"{self.host} started\n")
        cancel.wait(10)
        return CommandResult(self.host, list(argv), 0, interrupted=cancel.is_set())


@pytest.fixture(autouse=True)
def _fresh():
    Grouped.calls = []


def _stream(tr, tmp_path: Path) -> Stream:
    return Stream(tr.host, tr, ["sampler"], tmp_path / f"{tr.host}.out", tmp_path / f"{tr.host}.err")


def test_a_kinds_hosts_start_in_one_call_from_the_callers_thread_and_the_others_in_threads(tmp_path) -> None:
    hosts = [Grouped("g1"), Alone("a1"), Grouped("g2"), Alone("a2")]
    s = Streams([_stream(h, tmp_path) for h in hosts], timeout=None, name="monitor")
    assert Grouped.calls == [(threading.current_thread().name, [("g1", ["sampler"]), ("g2", ["sampler"])])]
    deadline = time.monotonic() + 5
    while not all((tmp_path / f"{h}.out").exists() for h in ("a1", "a2")) and time.monotonic() < deadline:
        time.sleep(0.01)
    names = {t.name for t in threading.enumerate()}
    assert {"monitor-a1", "monitor-a2"} <= names and not {"monitor-g1", "monitor-g2"} & names
    assert [s.alive(i) for i in range(4)] == [True] * 4 and [s.result(i) for i in range(4)] == [None] * 4
    assert s.ended() == []
    assert s.stop() == []
    assert [s.alive(i) for i in range(4)] == [False] * 4 and sorted(s.ended()) == [0, 1, 2, 3]
    got = [s.result(i) for i in range(4)]
    assert [(r.host, r.exit_status, r.interrupted) for r in got if r is not None] == [
        ("g1", -15, True), ("a1", 0, True), ("g2", -15, True), ("a2", 0, True)]


def test_a_stop_from_many_threads_stops_once_and_each_waits_for_it(tmp_path) -> None:
    s = Streams([_stream(Grouped(f"g{i}"), tmp_path) for i in range(3)], timeout=None)
    group = s._groups[0][0]
    seen: list[list[str]] = []
    callers = [threading.Thread(target=lambda: seen.append(s.stop())) for _ in range(4)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(5)
    assert group.stopped == 1 and seen == [[]] * 4  # type: ignore[attr-defined]
    assert all(s.result(i) is not None for i in range(3))  # each waited for the stop before it returned


def test_a_command_that_cannot_start_is_its_hosts_failed_result_saying_why(tmp_path) -> None:
    s = Streams([_stream(Alone("a1", fail=True), tmp_path), _stream(Alone("a2"), tmp_path)], timeout=None)
    deadline = time.monotonic() + 5
    while s.alive(0) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert s.ended() == [0]  # a wait for ports asks this at each retry: the ended ones, not every command
    failed = s.result(0)
    assert failed is not None and not failed.ok and failed.extra["error_type"] == "ConnectionError"
    assert "cannot reach a1" in failed.stderr_tail
    assert s.alive(1)
    s.stop()
    r = s.result(1)
    assert r is not None and r.interrupted


def test_a_command_that_outlives_its_stop_is_named(tmp_path, monkeypatch) -> None:
    class Deaf(Alone):
        def run(self, argv, *, cancel=None, **_):
            time.sleep(1.0)  # does not listen to the cancel
            return CommandResult(self.host, list(argv), 0)

    monkeypatch.setattr(streams_module, "STOP_S", 0.2)
    s = Streams([_stream(Deaf("d1"), tmp_path), _stream(Alone("a1"), tmp_path)], timeout=None)
    assert s.stop() == ["d1"]
    assert s.result(0) is None and s.result(1) is not None


class GroupedRunning(Grouped):
    """A kind that starts its hosts' commands together, and runs one alone too."""

    envs: list[dict | None] = []

    def run(self, argv, *, timeout=None, stdout_path=None, stderr_path=None, cancel=None, env=None, **_):
        GroupedRunning.envs.append(env)
        assert cancel is not None
        cancel.wait(10)
        return CommandResult(self.host, list(argv), 0, interrupted=cancel.is_set())


def test_a_command_with_values_runs_in_its_own_thread_through_its_transports_run(tmp_path) -> None:
    # its values (secrets among them) go the transport's own way (an env file on an SSH host), never on a line
    GroupedRunning.envs = []
    with_env = Stream("g2", GroupedRunning("g2"), ["collector"], tmp_path / "g2.out", None, env={"META_PASSWORD": "x"})
    s = Streams([_stream(GroupedRunning("g1"), tmp_path), with_env], timeout=None, name="collector")
    assert [host for _, items in Grouped.calls for host, _ in items] == ["g1"]
    deadline = time.monotonic() + 5
    while not GroupedRunning.envs and time.monotonic() < deadline:
        time.sleep(0.01)
    assert GroupedRunning.envs == [{"META_PASSWORD": "x"}]
    assert "collector-g2" in {t.name for t in threading.enumerate()}
    s.stop()
    r = s.result(1)
    assert r is not None and r.interrupted
