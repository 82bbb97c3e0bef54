"""The script that tells a service's processes and ports from everyone else's, run on this machine's /proc."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from fsbench.services.processes import Identity, parse_now, parse_ports

LISTEN = "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); " \
         "print(s.getsockname()[1], flush=True); time.sleep(60)"


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, cwd="/", timeout=60)


def now() -> int:
    value = parse_now(run(Identity("r", "s", "/nowhere").argv("ports")).stdout)
    assert value is not None and value > 0
    return value


def test_the_worst_holder_of_a_port_wins_and_each_is_named_once():
    states = parse_ports("now 5\nours 80 1\ntheirs 80 2 redis-server *:80\ntheirs 80 2 redis-server *:80\n"
                         "free 81\nhidden 82\nours 83 9\n")
    assert {p: s.state for p, s in states.items()} == {80: "theirs", 81: "free", 82: "hidden", 83: "ours"}
    assert states[80].others == ["pid 2 (`redis-server *:80`)"] and "cannot see" in states[82].others[0]
    assert parse_now("now 5\n") == 5 and parse_now("garbage") is None


def test_a_port_held_by_another_process_is_theirs_and_guards_the_stop_command(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        ident = Identity("run-x", "svc", str(tmp_path), now())
        states = parse_ports(run(ident.argv("ports", str(port))).stdout)
        assert states[port].state == "theirs" and f"pid {os.getpid()} " in states[port].others[0]
        ran = tmp_path / "ran"
        guarded = run(ident.guarded([port], ["touch", str(ran)]))
        assert guarded.returncode == 3 and "held by a process fsbench did not start" in guarded.stderr
        assert not ran.exists()
    assert parse_ports(run(ident.argv("ports", str(port))).stdout)[port].state == "free"
    assert run(ident.guarded([port], ["touch", str(ran)])).returncode == 0 and ran.exists()


def test_a_tagged_process_is_the_services_and_is_stopped(tmp_path):
    ident = Identity("run-y", "svc", str(tmp_path / "elsewhere"), now())
    proc = subprocess.Popen(ident.tag([sys.executable, "-c", LISTEN]), stdout=subprocess.PIPE, text=True, cwd="/")
    try:
        port = int(proc.stdout.readline())  # type: ignore[union-attr]
        assert parse_ports(run(ident.argv("ports", str(port))).stdout)[port].state == "ours"
        other = Identity("run-y", "other-service", str(tmp_path / "elsewhere"), ident.since)
        assert parse_ports(run(other.argv("ports", str(port))).stdout)[port].state == "theirs"
        killed = run(ident.kill(0, 5))
        assert killed.returncode == 0 and f"term {proc.pid} " in killed.stdout
        assert proc.wait(timeout=10) < 0
    finally:
        proc.kill()
        proc.wait()


def test_an_untagged_process_in_the_folder_is_the_services_only_when_started_after_the_start(tmp_path):
    folder = tmp_path / "svc"
    folder.mkdir()
    before = subprocess.Popen(["sleep", "60"], cwd=folder)
    try:
        time.sleep(0.05)
        since = now() + 1
        time.sleep(0.05)
        after = subprocess.Popen(["sleep", "61"], cwd=folder)
        marked = subprocess.Popen(["sleep", "62"], cwd=folder, env={**os.environ, "FSBENCH_RUN": "run-z"})
        try:
            pids = {int(line.split()[0]) for line in run(Identity("run-z", "svc", str(folder), since)
                                                         .argv("procs")).stdout.splitlines()}
            # the one started before is someone else's; the one with the run's marker and no service tag is
            # another of fsbench's commands
            assert pids == {after.pid}
        finally:
            for p in (after, marked):
                p.kill()
                p.wait()
    finally:
        before.kill()
        before.wait()
