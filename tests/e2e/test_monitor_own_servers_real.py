"""The monitor knows fsbench's own servers: redis-server, mariadbd, postgres, etcd and fsbench-s3 started by
their service kinds count as the run's (redis-server and postgres rewrite their process title over their
environment, so the run's marker is gone from /proc/PID/environ: their working folder in the service's
folder and their start after the service's says so), a postgres backend forked later too, while a
redis-server of the same name the test started itself is still nobody's of the run."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from fsbench.monitor.processes import owners
from fsbench.monitor.samples import read_raw
from tests.conftest import require, run_cli

MiB = 1024 * 1024
#: service -> its kind, the server's /proc/PID/comm name, and JuiceFS's meta URL on it
ENGINES = {"redis": ("redis", "redis-server", "${services.redis.url}/1"),
           "maria": ("mysql", "mariadbd", "${services.maria.url}/juicefs"),
           "pg": ("postgres", "postgres", "${services.pg.url}/juicefs?sslmode=disable"),
           "etcd": ("etcd", "etcd", "${services.etcd.meta}")}
SERVERS = [comm for _, comm, _ in ENGINES.values()] + ["fsbench-s3"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stranger(tmp: Path) -> subprocess.Popen:
    """A redis-server outside fsbench (no run's marker, its folder the test's), holding over 100 MiB."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FSBENCH_")}
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--enable-debug-command", "local"],
                            cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).returncode != 0:
        assert proc.poll() is None and time.monotonic() < deadline, "the stranger redis-server did not start"
        time.sleep(0.1)
    subprocess.run(["redis-cli", "-p", str(port), "debug", "populate", "400000", "k", "256"], check=True,
                   capture_output=True, timeout=60)
    return proc


@pytest.fixture(scope="module")
def own_servers(tmp_path_factory):
    """One run of the four engines (each a JuiceFS volume on fsbench-s3, a small fio write), a stranger beside."""
    for tool in ("redis-server", "redis-cli", "mariadbd", "psql", "etcd", "fsbench-s3", "juicefs", "fio"):
        require(tool)
    tmp = tmp_path_factory.mktemp("own-servers")
    volume = ('storage: s3, bucket: "${services.s3.endpoint}/${services.s3.bucket}", '
              'access_key: "${services.s3.access_key}", secret_key: "${services.s3.secret_key}"')
    services = "".join(f"  {n}: {{kind: {kind}}}\n" for n, (kind, _, _) in ENGINES.items())
    targets = "".join(f"  {n}: {{kind: juicefs, path: {tmp}/mnt-{n}, services: [{n}, s3], "
                      f"juicefs: {{meta: \"{meta}\", {volume}}}}}\n" for n, (_, _, meta) in ENGINES.items())
    scenario = tmp / "scenario.yaml"
    scenario.write_text(f"name: own-servers\nmonitor: {{interval: 0.5s, processes: [{', '.join(SERVERS)}]}}\n"
                        "services:\n  s3: {kind: s3, s3: {server: fsbench-s3, buckets: [juicefs], backend: mem}}\n"
                        + services + "targets:\n" + targets
                        + "workloads:\n  w: {tool: fio, options: {rw: write, size: 1m}}\n")
    stranger = _stranger(tmp)
    try:
        rss = int(Path(f"/proc/{stranger.pid}/status").read_text().split("VmRSS:")[1].split()[0]) * 1024
        proc = run_cli("run", str(scenario), "-o", str(tmp / "out"), "--progress", "plain", timeout=600)
        alive = stranger.poll() is None
    finally:
        stranger.terminate()
        stranger.wait(30)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    yield {"run": run, "stranger": stranger.pid, "stranger_rss": rss, "alive": alive,
           "procs": results[(results.tool == "monitor") & (results.operation == "process")]}


def _counted(run: Path, case: str, name: str) -> tuple[set[int], set[int]]:
    """The pids of a watched name in a case's samples: those counted as the run's, and all of them."""
    raw = read_raw((run / "raw" / case / "local" / "monitor.txt").read_text())
    own = owners(raw, "local")
    seen = [p for s in raw.samples for p in s.procs.values() if p.name == name]
    return {p.pid for p in seen if own.counts(p)}, {p.pid for p in seen}


def test_no_warning_names_the_runs_own_servers_as_strangers(own_servers):
    procs = own_servers["procs"]
    for target, (_, comm, _) in ENGINES.items():
        mine = procs[procs.target == target]
        # the case's engine and its object store are both watched and measured
        assert {comm, "fsbench-s3"} <= set(mine.job), (target, sorted(set(mine.job)))
    flagged = procs[procs.warnings.str.contains("none started by this run")]
    assert flagged.empty, flagged[["case_id", "job", "warnings"]].drop_duplicates("job").to_string()
    cases = pd.read_csv(own_servers["run"] / "cases.csv", keep_default_na=False)
    assert list(cases.status) == ["ok"] * len(ENGINES), cases[["case_id", "reason"]].to_string()
    assert "none started by this run" not in " ".join(cases.warnings)


def test_a_stranger_of_the_same_name_is_still_not_counted(own_servers):
    run, procs = own_servers["run"], own_servers["procs"]
    assert own_servers["alive"], "fsbench ended a redis-server it did not start"
    assert own_servers["stranger_rss"] > 100 * MiB
    counted, seen = _counted(run, "redis__w__r1", "redis-server")
    assert own_servers["stranger"] in seen and own_servers["stranger"] not in counted
    ours = (run / "services" / "redis" / "local" / "processes.txt").read_text().split()[0]
    assert int(ours) in counted
    # the run's redis-server holds a few MiB; counted with the stranger the row read over 100 MiB
    peak = procs[(procs.target == "redis") & (procs.job == "redis-server") & (procs.metric == "memory_peak")]
    assert len(peak) and (peak.value < 60 * MiB).all(), peak.value.tolist()


def test_a_server_process_forked_after_the_start_counts(own_servers):
    run = own_servers["run"]
    for target, (_, comm, _) in ENGINES.items():
        listed = {int(line.split()[0]) for line in
                  (run / "services" / target / "local" / "processes.txt").read_text().splitlines() if line.strip()}
        counted, _ = _counted(run, f"{target}__w__r1", comm)
        assert listed & counted, (target, listed, counted)
    # PostgreSQL forks a backend per connection: the JuiceFS mount's came after the start was checked
    counted, _ = _counted(run, "pg__w__r1", "postgres")
    assert counted - {int(line.split()[0]) for line in
                      (run / "services" / "pg" / "local" / "processes.txt").read_text().splitlines() if line.strip()}
