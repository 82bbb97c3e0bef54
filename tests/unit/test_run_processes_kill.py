"""A case's strays stopped on this machine: TERM, then KILL only to what a fresh scan still finds marked."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from fsbench.run import run_processes
from fsbench.run.run_processes import CASE_MARKER, MARKER, kill_marked, marked_pids, stop_case_processes
from fsbench.transport.local import LocalTransport


def _start(run_id: str, case_id: str, script: str) -> subprocess.Popen:
    env = {**os.environ, MARKER: run_id, CASE_MARKER: case_id}
    proc = subprocess.Popen(["sh", "-c", script], env=env, start_new_session=True)
    for _ in range(100):  # until its environment can be read
        if proc.pid in marked_pids(run_id, case_id):
            break
        time.sleep(0.01)
    return proc


def test_a_stray_that_ignores_term_is_killed_and_named():
    run_id = f"kill-{os.getpid()}-{time.monotonic_ns()}"
    proc = _start(run_id, "c1", "trap '' TERM; while :; do sleep 0.05; done")
    found = stop_case_processes(LocalTransport("local"), run_id, "c1")
    assert f"{proc.pid} sh" in found  # and its sleep of the moment
    assert proc.wait(timeout=5) == -signal.SIGKILL
    assert marked_pids(run_id, "c1") == []


def test_nothing_marked_is_one_look_and_no_signal(monkeypatch):
    looks = []
    monkeypatch.setattr(run_processes, "marked_pids", lambda *a: looks.append(a) or [])
    monkeypatch.setattr(os, "kill", lambda *a: (_ for _ in ()).throw(AssertionError(f"signalled {a}")))
    assert stop_case_processes(LocalTransport("local"), "r", "c") == []
    assert len(looks) == 1


def test_kill_goes_only_to_processes_still_marked(monkeypatch):
    """A stray that ended during the grace may have left its number to another process: it gets no KILL."""
    scans = iter([[], []])  # after TERM: the scan finds none of the run's processes left
    monkeypatch.setattr(run_processes, "marked_pids", lambda *a: next(scans))
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: sent.append((pid, sig)))
    assert kill_marked("r", 0.2, "c", [4242]) == [4242]
    assert sent == [(4242, signal.SIGTERM)]


def test_kill_follows_a_process_that_outlives_term(monkeypatch):
    scans = iter([[4242], [4242], []])
    monkeypatch.setattr(run_processes, "marked_pids", lambda *a: next(scans))
    monkeypatch.setattr(time, "sleep", lambda s: None)
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: sent.append((pid, sig)))
    assert kill_marked("r", 0.0, "c", [4242, 4243]) == [4242, 4243]
    assert sent == [(4242, signal.SIGTERM), (4243, signal.SIGTERM), (4242, signal.SIGKILL)]
