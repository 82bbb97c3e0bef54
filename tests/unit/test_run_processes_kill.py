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
    """A marked shell running `script`, returned once it has said `ready` (its traps are set by then: a TERM
    that came before a `trap '' TERM` ran would end it, and the test would flake under load)."""
    env = {**os.environ, MARKER: run_id, CASE_MARKER: case_id}
    proc = subprocess.Popen(["sh", "-c", script], env=env, start_new_session=True, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"
    proc.stdout.close()
    for _ in range(100):  # until its environment can be read
        if proc.pid in marked_pids(run_id, case_id):
            break
        time.sleep(0.01)
    return proc


def test_a_stray_that_ignores_term_is_killed_and_named():
    run_id = f"kill-{os.getpid()}-{time.monotonic_ns()}"
    proc = _start(run_id, "c1", "trap '' TERM; echo ready; while :; do sleep 0.05; done")
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


def test_the_remote_clean_up_stops_the_case_s_strays_then_removes_its_folder(tmp_path):
    """The one SSH command of a case's end, run here by a real /bin/sh: only the case's marked process is
    stopped (and named), then the folder goes; another case's process and an unmarked one are left alone."""
    run_id = f"clean-{os.getpid()}-{time.monotonic_ns()}"
    folder = tmp_path / "case"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "data").write_text("x")
    stray = _start(run_id, "c1", "trap '' TERM; echo ready; while :; do sleep 0.05; done")
    other = _start(run_id, "c2", "echo ready; while :; do sleep 0.05; done")
    try:
        r = subprocess.run(run_processes.remote_case_cleanup_argv(run_id, "c1", str(folder)), capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert f"{stray.pid} sh" in r.stdout.splitlines()
        assert stray.wait(timeout=5) == -signal.SIGKILL and not folder.exists()
        assert other.poll() is None
    finally:
        for p in (stray, other):
            p.kill()
            p.wait()


def test_a_removal_that_fails_is_said_and_the_stop_s_status_kept():
    # procfs refuses an unlink even to root: nothing is removed, and the command says so on stderr
    r = subprocess.run(run_processes.remote_case_cleanup_argv("no-such-run", "c", "/proc/sys/kernel/hostname"),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and f"{run_processes.NOT_REMOVED} /proc/sys/kernel/hostname" in r.stderr


def test_a_case_s_end_is_one_command_a_remote_host_and_the_controller_stops_first():
    from fsbench.core.events import ignore
    from fsbench.run.case_hosts import clean_up
    from fsbench.transport.fake import fake_hosts, journal

    hosts = fake_hosts("client1", "client2", "controller")
    used = dict(hosts)  # the controller ran fio --client; the clients ran its servers
    case_hosts = {h: hosts[h] for h in ("client1", "client2")}
    clean_up(used, case_hosts, "/data/run/case", "r1", "c1", ignore)
    calls = journal(hosts)
    assert calls[0].host == "controller" and calls[0].argv[3] == "fsbench-case-stop"
    for h in ("client1", "client2"):
        (argv,) = hosts[h].commands()
        assert argv[3] == "fsbench-case-clean-up" and argv[-1] == "/data/run/case"
        assert not hosts[h].ops("remove_tree")
    # a dataset's folder stays: only the stops
    clean_up(used, case_hosts, None, "r1", "c2", ignore)
    assert all(c.argv[3] == "fsbench-case-stop" for c in journal(hosts)[len(calls):])


def test_a_root_folder_is_refused_with_a_warning_naming_the_host():
    from fsbench.core.events import Event
    from fsbench.run.case_hosts import clean_up
    from fsbench.transport.fake import fake_hosts

    hosts = fake_hosts("client1")
    said: list[Event] = []
    clean_up(dict(hosts), dict(hosts), "/", "r1", "c1", said.append)
    (argv,) = hosts["client1"].commands()  # its strays are still stopped; nothing is removed
    assert argv[3] == "fsbench-case-stop" and not hosts["client1"].ops("remove_tree")
    assert [e.message for e in said] == ["refusing to remove '/' on client1"]


def test_a_dead_run_s_processes_are_killed_on_a_host_and_no_other_run_s():
    """remote_kill_argv (a dead run's processes, before its clean-ups), run by a shell here as on a host: the
    run's marked process is killed, another run's and a process whose marker only starts the same are not."""
    run_id = f"dead-{os.getpid()}-{time.monotonic_ns()}"
    script = "echo ready; trap '' TERM; sleep 60"
    ours = _start(run_id, "c1", script)
    other = _start(f"{run_id}-other", "c1", script)  # the marker's value starts like ours: not ours
    try:
        done = subprocess.run(run_processes.remote_kill_argv(run_id), capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert ours.wait(timeout=10) == -signal.SIGKILL
        assert other.poll() is None
    finally:
        for p in (ours, other):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
