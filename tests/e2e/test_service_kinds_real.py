"""The metadata-engine service kinds with real servers: redis-server, mariadbd, postgres and etcd started,
probed and stopped by fsbench, a real JuiceFS volume formatted and mounted on each; an existing server
the test started itself, used and left as it was; a killed run's servers stopped by the next run; a
taken port refused; and the per-run credentials nowhere in the run directory or in any command line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import require, run_cli, write_scenario
from tests.paths import REPO

KINDS = {"redis": "redis", "maria": "mysql", "pg": "postgres", "etcd": "etcd", "etcd_open": "etcd"}
#: JuiceFS's meta URL on each: a database number, a database, a database without TLS, a key prefix with certificates
METAS = {"redis": "${services.redis.url}/1", "maria": "${services.maria.url}/juicefs",
         "pg": "${services.pg.url}/juicefs?sslmode=disable", "etcd": "${services.etcd.url}/jfs${services.etcd.tls}",
         "etcd_open": "${services.etcd_open.meta}"}
#: more settings of a service: an etcd without authentication (clients on other hosts)
OPTIONS = {"etcd_open": ", etcd: {auth: none}"}
SCRATCH = Path("/var/tmp/fsbench")  # the default: PostgreSQL's own user must reach its folder (not under /tmp/pytest-of-root)


def _tools() -> None:
    for tool in ("redis-server", "redis-cli", "mariadbd", "mariadb-install-db", "psql", "runuser", "etcd", "etcdctl",
                 "openssl", "juicefs", "fusermount3", "fio"):
        require(tool)


def _services(names=KINDS) -> str:
    return "".join(f"  {n}: {{kind: {KINDS[n]}{OPTIONS.get(n, '')}}}\n" for n in names)


def _targets(root: Path, names=KINDS) -> str:
    return "".join(f"  {n}: {{kind: juicefs, path: {root}/mnt-{n}, services: [{n}], "
                   f"juicefs: {{meta: \"{METAS[n]}\"}}}}\n" for n in names)


def _own_processes(run_id: str) -> list[str]:
    """Processes of a run: its marker in their environment, or their working folder in its scratch folder."""
    found = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{d}/environ").read_bytes()
            cwd = os.readlink(f"/proc/{d}/cwd")
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"FSBENCH_RUN={run_id}".encode() in env or cwd.startswith(str(SCRATCH / run_id)):
            found.append(f"{d} {cmd}")
    return found


def _kill(lines: list[str]) -> None:
    for line in lines:
        try:
            os.kill(int(line.split()[0]), signal.SIGKILL)
        except ProcessLookupError:
            pass


class Watcher:
    """Samples every command line, the per-run passwords in the services' environments and etcd's client key."""

    def __init__(self, name: str):
        self.name, self.argv, self.secrets = name, [], set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def __enter__(self) -> "Watcher":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            for d in filter(str.isdigit, os.listdir("/proc")):
                try:
                    self.argv.append(Path(f"/proc/{d}/cmdline").read_bytes().decode(errors="replace"))
                    env = Path(f"/proc/{d}/environ").read_bytes().split(b"\0")
                except OSError:
                    continue
                for item in env:
                    if item.startswith(b"FSBENCH_SECRET_SERVICE_PASSWORD="):
                        self.secrets.add(item.split(b"=", 1)[1].decode())
            # redis-server rewrites its environment (its process title), so its password is read from the
            # 0600 file its start script writes; etcd's secret is the body of the client's private key
            for conf in SCRATCH.glob(f"{self.name}-*/services/*/auth.conf"):
                try:
                    self.secrets.add(conf.read_text().split()[1])
                except (OSError, IndexError):
                    pass
            for key in SCRATCH.glob(f"{self.name}-*/services/etcd/tls/client.key"):
                try:
                    self.secrets.add(key.read_text().split("-----")[2].split()[0])
                except (OSError, IndexError):
                    pass
            time.sleep(0.05)


@pytest.fixture(scope="module")
def kinds_run(tmp_path_factory):
    """One run of all four kinds, each with a JuiceFS volume and a small fio write on it (servers once per module)."""
    _tools()
    tmp = tmp_path_factory.mktemp("kinds")
    scenario = tmp / "scenario.yaml"
    scenario.write_text("name: kinds-h2\nmonitor: {enabled: false}\nservices:\n" + _services() + "targets:\n"
                        + _targets(tmp) + "workloads:\n  w: {tool: fio, options: {rw: write, size: 1m}}\n")
    with Watcher("kinds-h2") as seen:
        proc = run_cli("run", str(scenario), "-o", str(tmp / "out"), "--progress", "plain", timeout=600)
    run = Path(proc.stdout.splitlines()[0]) if proc.stdout else tmp
    yield proc, run, seen
    _kill(_own_processes(run.name))


def test_each_kind_starts_its_server_juicefs_formats_and_mounts_on_it_and_it_stops(kinds_run):
    proc, run, _ = kinds_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert list(cases.status) == ["ok"] * len(KINDS), cases[["case_id", "reason"]].to_string()
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    assert set(results[results.metric == "bandwidth"].target) == set(KINDS)
    for name in KINDS:
        # a JuiceFS volume was formatted on the engine and mounted (the client's log names the engine)
        assert (run / "services" / name / "local" / "start-0.out").exists()  # started by fsbench
        log = (run / "targets" / name / "juicefs-local.log").read_text()
        assert "Meta address" in log, log[-2000:]
        procs = (run / "services" / name / "local" / "processes.txt").read_text()
        assert procs.strip(), f"{name}: no process of its own was found listening"
        # its own stop command stopped it: nothing was left for fsbench's TERM/KILL
        stopped = (run / "services" / name / "local" / "stopped.txt").read_text()
        assert "term" not in stopped.split(), (name, stopped)
    assert _own_processes(run.name) == []
    assert "fuse.juicefs" not in subprocess.run(["findmnt", "-n", "-R", str(run.parent.parent)],
                                                capture_output=True, text=True).stdout
    assert not list(SCRATCH.glob(f"{run.name}*"))


def test_the_per_run_credentials_are_in_no_command_line_and_nowhere_in_the_run_directory(kinds_run):
    proc, run, seen = kinds_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    # redis, mariadb and postgres passwords, and etcd's client key
    assert len(seen.secrets) >= 4, seen.secrets
    written = b"".join(p.read_bytes() for p in run.rglob("*") if p.is_file())
    for secret in seen.secrets:
        assert secret.encode() not in written and secret not in proc.stdout + proc.stderr
        assert not [a for a in seen.argv if secret in a]
    assert b"mysql://fsbench:****@" in written or b"redis://:****@" in written  # the URLs are shown, masked


def test_an_existing_server_is_used_as_it_is_and_left_running_with_its_data(tmp_path):
    """The user's redis-server with a password (started here): fsbench probes it, formats a volume in the
    database it was given, and never stops it nor touches its other data."""
    _tools()
    port, secret = _free_port(), "Users-redis-pw-5511"
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--requirepass", secret], stdout=subprocess.DEVNULL)
    cli = ["redis-cli", "--no-auth-warning", "-p", str(port)]
    env = {**os.environ, "REDISCLI_AUTH": secret}
    try:
        _wait(lambda: subprocess.run([*cli, "set", "precious", "keep-me"], env=env, capture_output=True,
                                     text=True).stdout.strip() == "OK")
        scenario = write_scenario(tmp_path, f"""\
            name: existing-h2
            monitor: {{enabled: false}}
            secrets: {{users_redis: {{env: FSB_H2_REDIS_PW}}}}
            services:
              redis: {{kind: redis, redis: {{existing: {{url: "redis://127.0.0.1:{port}", secret: users_redis}}}}}}
            targets:
              jfs: {{kind: juicefs, path: {tmp_path}/mnt, services: [redis], juicefs: {{meta: "${{services.redis.url}}/3"}}}}
            workloads:
              w: {{tool: fio, options: {{rw: write, size: 1m}}}}
            """)
        proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain",
                       env={"FSB_H2_REDIS_PW": secret}, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        run = Path(proc.stdout.splitlines()[0])
        assert server.poll() is None  # still running
        assert subprocess.run([*cli, "get", "precious"], env=env, capture_output=True, text=True).stdout.strip() \
            == "keep-me"
        assert subprocess.run([*cli, "-n", "3", "exists", "setting"], env=env, capture_output=True,
                              text=True).stdout.strip() == "1"  # the volume went where it was told
        assert not [p for p in (run / "services" / "redis" / "local").glob("*") if p.name.startswith(("start", "stop"))]
        written = b"".join(p.read_bytes() for p in run.rglob("*") if p.is_file())
        assert secret.encode() not in written and secret not in proc.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_after_a_killed_run_the_next_run_stops_every_engine_it_started(tmp_path):
    _tools()
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(f"name: killed-h2\nmonitor: {{enabled: false}}\nservices:\n{_services()}targets:\n"
                        f"  t: {{path: {tmp_path}/t, services: [{', '.join(KINDS)}], "
                        f"setup: [\"mkdir -p {tmp_path}/t\", \"sleep 300\"]}}\n"
                        "workloads:\n  w: {tool: fio, options: {rw: write, size: 1m}}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                             "--no-report"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = tmp_path / "out"
    try:
        _wait(lambda: len(list(out.glob("*/services/*/local/processes.txt"))) == len(KINDS) or proc.poll() is not None, 180)
        assert proc.poll() is None, "the run ended before its services were ready"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        run = next(out.iterdir())
        left = _own_processes(run.name)
        for server in ("redis-server", "mariadbd", "postgres", "etcd"):
            assert any(server in line for line in left), (server, left)  # what a SIGKILL leaves running
        follow = write_scenario(tmp_path, f"""\
            name: next-h2
            monitor: {{enabled: false}}
            targets: {{t: {{path: {tmp_path}/t2, setup: ["mkdir -p {tmp_path}/t2"]}}}}
            workloads:
              w: {{tool: fio, options: {{rw: write, size: 1m}}}}
            """, "next.yaml")
        nxt = run_cli("run", str(follow), "-o", str(tmp_path / "out2"), "--no-report", "--progress", "plain",
                      timeout=300)
        assert nxt.returncode == 0, nxt.stderr[-3000:]
        assert f"cleaned up after the dead run {run.name}" in nxt.stderr
        _wait(lambda: _own_processes(run.name) == [], 30)
    finally:
        if proc.poll() is None:
            proc.kill()
        for r in out.glob("*"):
            _kill(_own_processes(r.name))


def test_a_fixed_port_someone_listens_on_is_refused_and_the_listener_left_alone(tmp_path):
    _tools()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        scenario = write_scenario(tmp_path, f"""\
            name: taken-h2
            monitor: {{enabled: false}}
            services:
              pg: {{kind: postgres, port: {port}}}
            targets:
              t: {{path: {tmp_path}/t, services: [pg], setup: ["mkdir -p {tmp_path}/t"]}}
            workloads:
              w: {{tool: fio, options: {{rw: write, size: 1m}}}}
            """)
        proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", "--progress", "plain")
        assert proc.returncode != 0
        run = Path(proc.stdout.splitlines()[0])
        reason = pd.read_csv(run / "cases.csv", keep_default_na=False).reason[0]
        assert f"port {port} is already in use" in reason and "`port: auto`" in reason, reason
        assert not (run / "services" / "pg" / "local" / "start-0.out").exists()  # nothing was started
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # the listener still answers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(cond, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)
