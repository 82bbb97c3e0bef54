"""NNBench across two client hosts for real: two loopback SSH hosts of the lab run fsbench's NNBench runner
at once against a real HDFS (NameNode and DataNode JVMs: the session's, tests/e2e/labs.py, joined as an
existing service), every operation started together at metabench's barrier on the first host, each host in
its own base folder."""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fsbench import hadoop
from fsbench.api.tools import BuildContext, HostInfo
from fsbench.run.targets.services import free_port
from fsbench.tools.nnbench import PLUGIN
from fsbench.tools.nnbench.parse import OPERATIONS, blocks, runner_lines
from tests.conftest import require, run_cli, write_scenario
from tests.e2e.test_multihost import inventory

HOSTS = ("h2", "h3")


def _when(text: str) -> dt.datetime:
    """NNBench's `Start time` (SimpleDateFormat `yyyy-MM-dd HH:mm:ss,S`): the milliseconds are not padded,
    so `40,90` is 40.090 s, which strptime's %f would read as 40.900."""
    stamp, _, millis = text.rpartition(",")
    return dt.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S") + dt.timedelta(milliseconds=int(millis))


def test_nnbench_start_times_read_their_unpadded_milliseconds():
    assert _when("2026-11-27 04:29:40,90") - _when("2026-11-27 04:29:40,118") == dt.timedelta(milliseconds=-28)
    assert _when("2026-11-27 04:29:43,0") == dt.datetime(2026, 11, 27, 4, 29, 43)


def test_nnbench_on_two_ssh_hosts_starts_each_operation_together(lab, hadoop_lab, tmp_path):
    for tool in ("java", "metabench"):
        require(tool)
    assert Path(hadoop.home(), "fsbench-hadoop.jar").is_file(), hadoop.MISSING.format(home=hadoop.home())
    inventory(lab, tmp_path / "inventory.yaml")
    # the HDFS is what the hosts share, not what is tested: the session's, probed, never started or stopped
    scenario = write_scenario(tmp_path, f"""\
        name: nnbench-hosts
        inventory: inventory.yaml
        hosts: {{local: {{transport: local}}, h2: {{}}, h3: {{}}}}
        services:
          hdfs:
            kind: hdfs
            hosts: [local]
            managed: false
            ready_timeout: 1m
            hdfs: {{namenode: "{hadoop_lab.hdfs_url}"}}
        targets:
          hdfs:
            kind: hdfs
            path: /nnbench-hosts
            hosts: [h2, h3]
            services: [hdfs]
            hdfs: {{namenode: "${{services.hdfs.url}}"}}
        workloads:
          nn:
            tool: nnbench
            options: {{maps: 4, files_per_map: 3, barrier_ms: 1000}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain", timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    case = run / "raw" / "hdfs__nn__r1"
    runs, found = {}, {}
    for h in HOSTS:
        command = (case / h / "command").read_text()
        # each host its own base folder and half of the load's maps, both at the barrier on the first host
        assert f"/nnbench-hosts/fsbench-{run.name}" in command and f"/hdfs__nn__r1/{h} -maps 2 " in command, command
        assert " -barrier 127.0.0.2:" in command
        assert (case / h / "exit_status").read_text() == "0\n"
        runs[h] = runner_lines((case / h / "stdout").read_text())
        found[h] = blocks((case / h / "NNBench_results.log").read_text())
        assert [r["operation"] for r in runs[h]] == ["create_write", "open_read", "rename", "create_write", "delete"]
        assert [b.operation for b in found[h]] == [r["operation"] for r in runs[h]]
    # the barrier's server ran on h2 for both hosts: one round per NNBench run
    server = (case / "h2" / "server.out").read_text()
    assert "2 parties joined" in server and "5 rounds, every party left" in server, server
    # every run started at the same moment on both hosts, and only after both had ended the one before:
    # no host renamed while the other still read
    for n, (a, b) in enumerate(zip(found["h2"], found["h3"])):
        starts = [_when(a.text("Start time")), _when(b.text("Start time"))]
        assert abs((starts[0] - starts[1]).total_seconds()) < 0.25, (a.operation, starts)
        if n:
            ended = max(_when(found[h][n - 1].text("Date & time")) for h in HOSTS)
            assert min(starts) > ended, (a.operation, starts, ended)

    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    nn = results[(results.tool == "nnbench") & (results.job == "")]
    rate = nn[nn.metric == "rate"].pivot_table(index="operation", columns="host", values="value")
    assert set(rate.columns) == {*HOSTS, "all"} and set(rate.index) == set(OPERATIONS)
    assert ((rate["all"] - rate["h2"] - rate["h3"]).abs() <= 1e-9 * rate["all"]).all()  # the hosts' rates added
    ops = nn[(nn.metric == "ops") & (nn.host == "all")]
    assert set(ops.operation) == set(OPERATIONS) and set(ops.value) == {12.0}  # 4 maps x 3 files, every one done
    assert set(nn[nn.host == "all"].maps.astype(float)) == {4.0}  # the whole load's maps, not one host's
    assert (nn[nn.metric == "exceptions"].value == 0).all()
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert list(cases.status) == ["ok"], cases[["case_id", "status", "reason"]].to_string()
    # the report breaks the sum down by host under it
    html = (run / "report.html").read_text()
    assert "nn · rate per host" in html and "nn · latency_mean per host" in html
    # the run removed its own folders from the shared HDFS, and started and stopped nothing there
    assert not [n for n in hadoop_lab.hdfs_list("/nnbench-hosts") if run.name in n]
    assert not list((run / "services").glob("hdfs/*/start-*"))


@dataclass
class _Case:
    case_id: str
    options: dict = field(default_factory=dict)


class _LocalFs:
    """A Hadoop file system on this machine's disk (file://), for the runner without a cluster."""

    jars = ""

    def __init__(self, root: Path) -> None:
        self.root = root

    def url(self, path: str) -> str:
        return f"file://{self.root}{path}"

    def client_conf(self, threads: int = 1) -> dict[str, str]:
        return {}

    def client_env(self) -> dict[str, str]:
        return {}


def test_a_host_that_leaves_the_barrier_ends_the_others_runs_instead_of_hanging(tmp_path):
    """The real runner and metabench's real barrier server; the second host is a party that waits for the
    first run with it and then goes away: the runner ends with the reason, its base folder removed."""
    for tool in ("java", "metabench"):
        require(tool)
    assert Path(hadoop.home(), "fsbench-hadoop.jar").is_file(), hadoop.MISSING.format(home=hadoop.home())
    port = free_port()
    ctx = BuildContext({"c1": HostInfo("c1", "127.0.0.1"), "c2": HostInfo("c2", "127.0.0.1")}, port=port,
                       address="url", target_kind="hdfs", target_settings=_LocalFs(tmp_path / "fs"), run_id="r1")
    inv = PLUGIN.build(_Case("local__nn__r1", {"maps": 2, "files_per_map": 2, "operations": ["create_write",
                                                                                           "open_read"]}), "/b", ctx)
    work = tmp_path / "c1"
    work.mkdir()
    for name, text in inv.files.items():
        (work / name).write_text(text)
    server = subprocess.Popen(inv.servers["c1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    runner = None
    try:
        with _connect(port) as gone:
            gone.sendall(b"h")
            runner = subprocess.Popen(inv.per_host["c1"], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True)
            gone.settimeout(120)
            gone.sendall(b"r")
            assert gone.recv(1) == b"g"  # the first run's barrier: both parties were there
        out, err = runner.communicate(timeout=180)
        said, _ = server.communicate(timeout=30)
    finally:
        for proc in (runner, server):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert runner.returncode == 1, err[-2000:]
    assert "the barrier across hosts at 127.0.0.1:" in err and "broke before open_read (run 2)" in err, err[-2000:]
    lines = runner_lines(out)
    assert [(r["operation"], r["exit"]) for r in lines] == [("create_write", "0")]  # run 2 never started
    assert server.returncode == 1 and "1 of 2 parties left early" in said, said
    assert not (tmp_path / "fs" / "b" / "fsbench-r1" / "local__nn__r1" / "c1").exists()  # -cleanup still ran


def _connect(port: int, seconds: float = 30) -> socket.socket:
    """A connection to the barrier server once it listens (it was just started: not yet, on a busy machine)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=30)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
