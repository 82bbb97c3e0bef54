"""NNBench across hosts: the start times of NNBench's results (read as NNBench writes them), and a host that
leaves the barrier. That every operation starts together on every host at metabench's barrier is checked on
the seed's campaign across three lab clients (tests/e2e/test_multihost_campaigns.py), against a real HDFS."""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from fsbench import hadoop
from fsbench.api.tools import BuildContext, HostInfo
from fsbench.run.targets.services import free_port
from fsbench.tools.nnbench import PLUGIN
from fsbench.tools.nnbench.parse import runner_lines
from tests.conftest import require


def nnbench_when(text: str) -> dt.datetime:
    """NNBench's `Start time` (SimpleDateFormat `yyyy-MM-dd HH:mm:ss,S`): the milliseconds are not padded,
    so `40,90` is 40.090 s, which strptime's %f would read as 40.900."""
    stamp, _, millis = text.rpartition(",")
    return dt.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S") + dt.timedelta(milliseconds=int(millis))


def test_nnbench_start_times_read_their_unpadded_milliseconds():
    assert nnbench_when("2026-11-27 04:29:40,90") - nnbench_when("2026-11-27 04:29:40,118") == \
        dt.timedelta(milliseconds=-28)
    assert nnbench_when("2026-11-27 04:29:43,0") == dt.datetime(2026, 11, 27, 4, 29, 43)


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
