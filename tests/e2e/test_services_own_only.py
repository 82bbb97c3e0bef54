"""A service's server is fsbench's own: never one that held its port first, and nothing of it outlives the run.

The user's server here is a real redis-server the test starts itself; fsbench's are real redis-servers
started by the scenario (daemonized: they leave the process group and overwrite their environment).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from fsbench.run.targets.services import free_port
from tests.conftest import require, run_cli, write_scenario
from tests.paths import REPO


@pytest.fixture
def users_redis(tmp_path):
    """A redis-server of 'the user' on a port of its own, holding one key; stopped by the test afterwards."""
    require("redis-server")
    port = free_port()
    folder = tmp_path / "users-redis"
    folder.mkdir()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(folder)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while cli(port, "ping") != "PONG" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cli(port, "set", "users-key", "precious") == "OK"
        yield port, proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def cli(port: int, *args: str) -> str:
    r = subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True, timeout=10)
    return r.stdout.strip()


def redis_service(tmp_path: Path, port: str, start_first: str = "", hosts: str = "[]") -> str:
    """A scenario's redis service as meta-engines.yaml writes it, its stop leaving a mark when it runs."""
    first = f'"{start_first}", ' if start_first else ""
    return textwrap.dedent(f"""\
        services:
          redis:
            hosts: {hosts}
            port: {port}
            files:
              redis.conf: |
                bind ${{service.host}}
                port ${{service.port}}
                daemonize yes
                pidfile ${{service.dir}}/redis.pid
                logfile ${{service.dir}}/redis.log
                dir ${{service.dir}}
                save ""
            start: [{first}"redis-server ${{service.dir}}/redis.conf"]
            ready: redis-cli -h ${{service.host}} -p ${{service.port}} ping | grep -q PONG
            stop: ["touch {tmp_path}/stop-ran; redis-cli -h ${{service.host}} -p ${{service.port}} shutdown nosave"]
        """)


def juicefs_target(tmp_path: Path) -> str:
    """A target that formats a real JuiceFS volume into the service's Redis (as a juicefs target does)."""
    juicefs = require("juicefs")
    return textwrap.dedent(f"""\
        targets:
          t:
            path: {tmp_path}/t
            services: [redis]
            setup: ["mkdir -p ${{target.path}}",
                    "{juicefs} format --storage file --bucket {tmp_path}/bucket/ redis://127.0.0.1:${{services.redis.port}}/1 fsb"]
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)


def assert_untouched(port: int, proc: subprocess.Popen, tmp_path: Path) -> None:
    assert proc.poll() is None and cli(port, "ping") == "PONG"  # the user's redis still runs
    assert cli(port, "dbsize") == "1" and cli(port, "keys", "*") == "users-key"
    assert cli(port, "-n", "1", "dbsize") == "0"  # no JuiceFS volume formatted into it
    assert not (tmp_path / "stop-ran").exists()  # no stop command reached it


def test_a_fixed_port_held_by_the_users_redis_is_refused_and_the_redis_left_alone(tmp_path, users_redis, fio):
    port, proc = users_redis
    scenario = write_scenario(tmp_path, "name: taken\nmonitor: {enabled: false}\n"
                                        + redis_service(tmp_path, str(port)) + juicefs_target(tmp_path))
    run = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert run.returncode == 1, run.stderr[-3000:]
    cases = pd.read_csv(Path(run.stdout.splitlines()[0]) / "cases.csv", keep_default_na=False)
    reason = cases.reason[0]
    assert cases.status[0] == "failed" and f"service redis on local: port {port} is already in use" in reason
    assert f"pid {proc.pid}" in reason and "redis-server" in reason and "`port: auto`" in reason
    assert_untouched(port, proc, tmp_path)


def test_a_port_taken_after_the_check_is_found_after_start_and_its_holder_never_stopped(tmp_path, users_redis, fio):
    """The race: free when checked, taken before fsbench's server binds: the ready probe is answered by the
    user's server, so the run checks who holds the port after the probe and refuses."""
    port, proc = users_redis
    proc.kill()  # the port is free for fsbench's check...
    proc.wait(timeout=10)
    checked, taken = tmp_path / "checked", tmp_path / "taken"
    wait = f"touch {checked}; while [ ! -e {taken} ]; do sleep 0.05; done"
    scenario = write_scenario(tmp_path, "name: race\nmonitor: {enabled: false}\n"
                                        + redis_service(tmp_path, str(port), wait) + juicefs_target(tmp_path))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                            "--no-report", "--progress", "plain"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not checked.exists() and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.05)
    # ...and the user's server takes it before fsbench's starts
    again = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                              "--dir", str(tmp_path / "users-redis")], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        while cli(port, "ping") != "PONG" and time.monotonic() < deadline:
            time.sleep(0.05)
        cli(port, "set", "users-key", "precious")
        taken.touch()
        out, err = run.communicate(timeout=120)
        assert run.returncode == 1, err[-3000:]
        reason = pd.read_csv(Path(out.splitlines()[0]) / "cases.csv", keep_default_na=False).reason[0]
        assert f"service redis on local: port {port} is held by pid {again.pid}" in reason, reason
        assert "not by a process fsbench started for this service" in reason
        assert "not running the stop commands of service redis" in err
        assert_untouched(port, again, tmp_path)
    finally:
        again.kill()
        again.wait(timeout=10)


def leftovers_of(run_id: str, scratch: Path) -> list[str]:
    """Processes of a run: its marker in their environment, or their working folder in its scratch folder."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            env = Path(f"/proc/{d}/environ").read_bytes().split(b"\0")
            cwd = os.readlink(f"/proc/{d}/cwd")
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"FSBENCH_RUN={run_id}".encode() in env or cwd.startswith(str(scratch)):
            out.append(f"{d} {cmd}")
    return out


def never_ready(tmp_path: Path, timeout: str) -> Path:
    """A service that starts a daemonized redis-server and a background sleep, never ready, failing to stop."""
    require("redis-server")
    return write_scenario(tmp_path, f"""\
        name: never-ready
        monitor: {{enabled: false}}
        settings: {{scratch: {tmp_path}/scratch}}
        services:
          stuck:
            port: auto
            files:
              redis.conf: |
                bind 127.0.0.1
                port ${{service.port}}
                daemonize yes
                dir ${{service.dir}}
                save ""
            start: ["redis-server ${{service.dir}}/redis.conf", "sleep 4711 > /dev/null 2>&1 &"]
            ready: "false"
            ready_timeout: {timeout}
            stop: ["false"]
        targets:
          t: {{path: {tmp_path}/t, services: [stuck], setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)


def port_of(run_dir: Path) -> int:
    """The port fsbench gave the service (its redis.conf, kept in the run directory)."""
    conf = next(run_dir.glob("services/stuck/*/redis.conf")).read_text().splitlines()
    return int(next(line.split()[1] for line in conf if line.startswith("port ")))


def kill_all(run_dir: Path, scratch: Path) -> None:
    """Never leave the test's servers behind, even when fsbench failed to stop them."""
    for line in leftovers_of(run_dir.name, scratch):
        os.kill(int(line.split()[0]), signal.SIGKILL)


def test_a_service_never_ready_whose_stop_fails_leaves_nothing_running(tmp_path, fio):
    scenario = never_ready(tmp_path, "1s")
    run = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", "--progress", "plain")
    run_dir = Path(run.stdout.splitlines()[0])
    try:
        assert run.returncode == 1, run.stderr[-3000:]
        assert "never became ready" in pd.read_csv(run_dir / "cases.csv").reason[0]
        assert "2 of its processes still ran" in run.stderr and "fsbench stopped them" in run.stderr
        assert cli(port_of(run_dir), "ping") != "PONG"
        assert leftovers_of(run_dir.name, tmp_path / "scratch") == []
    finally:
        kill_all(run_dir, tmp_path / "scratch")


def test_after_sigkill_during_a_never_ready_service_the_next_run_stops_what_it_started(tmp_path, fio):
    scenario = never_ready(tmp_path, "2m")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                             "--no-report"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    conf = tmp_path / "out"
    while time.monotonic() < deadline and proc.poll() is None and not list(conf.glob("*/services/*/*/start-1.out")):
        time.sleep(0.05)
    time.sleep(1.0)  # the ready probe is failing now
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    run_dir = next(conf.iterdir())
    port = port_of(run_dir)
    try:
        assert cli(port, "ping") == "PONG"  # what a SIGKILL leaves: the daemonized server and the sleeper
        assert any("sleep 4711" in p for p in leftovers_of(run_dir.name, tmp_path / "scratch"))
        follow = write_scenario(tmp_path, f"""\
            name: next
            monitor: {{enabled: false}}
            targets: {{t: {{path: {tmp_path}/t2, setup: ["mkdir -p ${{target.path}}"]}}}}
            workloads:
              w: {{tool: fio, options: {{rw: write, size: 1m}}}}
            """, "next.yaml")
        nxt = run_cli("run", str(follow), "-o", str(tmp_path / "out2"), "--no-report", "--progress", "plain")
        assert nxt.returncode == 0, nxt.stderr[-3000:]
        assert f"cleaned up after the dead run {run_dir.name}: service stuck on local" in nxt.stderr
        assert cli(port, "ping") != "PONG"
        assert leftovers_of(run_dir.name, tmp_path / "scratch") == []
    finally:
        kill_all(run_dir, tmp_path / "scratch")


def test_over_ssh_a_taken_port_is_refused_and_a_stuck_service_stopped_on_the_remote_host(lab, tmp_path, users_redis,
                                                                                          fio):
    """The same checks through the SSH transport: a redis of the user's on h2's kernel, fsbench's on h2."""
    from tests.e2e.test_multihost import inventory

    port, proc = users_redis
    inventory(lab, tmp_path / "inventory.yaml")
    header = textwrap.dedent(f"""\
        name: ssh-services
        inventory: inventory.yaml
        hosts: {{h2: {{}}}}
        monitor: {{enabled: false}}
        settings: {{scratch: {tmp_path}/scratch}}
        """)
    stuck = textwrap.indent(textwrap.dedent("""\
          stuck:
            hosts: [h2]
            port: auto
            files:
              redis.conf: |
                bind ${service.host}
                port ${service.port}
                daemonize yes
                dir ${service.dir}
                save ""
            start: ["redis-server ${service.dir}/redis.conf"]
            ready: "false"
            ready_timeout: 1s
            stop: ["false"]
        """), "  ")
    targets = textwrap.dedent(f"""\
        targets:
          t: {{path: {tmp_path}/t, hosts: [h2], services: [redis], setup: ["mkdir -p ${{target.path}}"]}}
          u: {{path: {tmp_path}/u, hosts: [h2], services: [stuck], setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    scenario = write_scenario(tmp_path, header + redis_service(tmp_path, str(port), hosts="[h2]") + stuck + targets)
    run = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", "--progress", "plain")
    assert run.returncode == 1, run.stderr[-3000:]
    run_dir = Path(run.stdout.splitlines()[0])
    try:
        cases = pd.read_csv(run_dir / "cases.csv", keep_default_na=False).set_index("target")
        assert f"service redis on h2: port {port} is already in use, by pid {proc.pid}" in cases.loc["t", "reason"]
        assert "never became ready" in cases.loc["u", "reason"]
        assert "service stuck on h2: 1 of its processes still ran" in run.stderr, run.stderr[-3000:]
        assert cli(port_of(run_dir), "-h", lab.addresses[1], "ping") != "PONG"
        assert leftovers_of(run_dir.name, tmp_path / "scratch") == []
        assert_untouched(port, proc, tmp_path)
    finally:
        kill_all(run_dir, tmp_path / "scratch")
