"""Hosts and processes over a real sshd (tests/sshlab.py): juicefs bench's verdicts under `script` on an SSH
host, tool output capped, a frozen host (sshd stopped with SIGSTOP), a tool's background child stopped with
its case while the run's services live on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import require, run_cli, write_scenario
from tests.paths import REPO


def inventory(lab, path: Path) -> Path:
    """The lab's first address as host h2."""
    path.write_text(f"defaults:\n  port: {lab.port}\n  user: {lab.user}\n  key_file: {lab.client_key}\n"
                    f"  known_hosts: {lab.known_hosts}\n  slots: 1\n"
                    f"hosts:\n  h2:\n    address: {lab.addresses[0]}\n")
    return path


def redis(host: str) -> str:
    """A managed Redis service on host, as scenario lines indented for write_scenario's dedent."""
    text = f"redis: {{kind: redis, hosts: [{host}], redis: {{appendonly: false}}}}\n"
    return textwrap.indent(text, " " * 10)


def test_juicefs_bench_with_verdicts_on_an_ssh_host_ends_in_seconds(lab, tmp_path):
    """`script` (juicefs bench's pseudo-terminal) waited for the remote watchdog, its child after the exec."""
    for tool in ("juicefs", "redis-server", "redis-cli", "script", "fusermount3"):
        require(tool)
    inventory(lab, tmp_path / "inventory.yaml")
    scenario = write_scenario(tmp_path, f"""\
        name: jfs-verdicts-ssh
        inventory: inventory.yaml
        hosts: {{h2: {{}}}}
        monitor: {{enabled: false}}
        settings: {{case_timeout: 120s}}
        services:
{redis("h2")}
        targets:
          jfs:
            kind: juicefs
            path: {tmp_path}/jfs
            hosts: [h2]
            services: [redis]
            juicefs: {{meta: "${{services.redis.url}}/1", storage: file}}
        workloads:
          bench:
            tool: juicefs-bench
            options: {{threads: 1, block_size: 1m, big_file_size: 8m, small_file_size: 64k, small_file_count: 20}}
        """)
    start = time.monotonic()
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", timeout=300)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert float(cases.tool_wall_s.iloc[0]) < 60, cases.to_string()  # was the whole case timeout
    assert elapsed < 100
    rows = pd.read_csv(run / "results.csv", keep_default_na=False)
    judged = rows[(rows.tool == "juicefs-bench") & (rows.operation == "write_big_file") & (rows.metric != "io_bytes")]
    assert len(judged) and set(judged.verdict) <= {"good", "fair", "poor"} and (judged.verdict != "").all()


def fsbench_popen(*args: str) -> subprocess.Popen:
    """`fsbench ARGS` started in the background, as a user would in another terminal."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "fsbench", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for_file(proc: subprocess.Popen, folder: Path, pattern: str, limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        if list(folder.glob(pattern)):
            return
        time.sleep(0.05)
    proc.kill()
    out, err = proc.communicate(timeout=30)
    raise AssertionError(f"{pattern} never appeared; fsbench exit {proc.returncode}:\n{out}\n{err[-3000:]}")


def freeze(lab) -> list[int]:
    """SIGSTOP the lab's sshd, its sessions and every process they started: the host stops answering."""
    stopped: set[int] = set()
    for _ in range(3):  # a session may start a command while the others are being stopped: look again
        for pid in sorted((set(lab.sshd_pids()) | set(lab.session_pids())) - stopped):
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:  # it ended between the listing and the signal
                continue
            stopped.add(pid)
    return sorted(stopped)


def thaw(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def test_a_frozen_ssh_host_fails_fast_with_the_reason_and_keeps_its_clean_ups(lab, tmp_path, fio):
    inventory(lab, tmp_path / "inventory.yaml")
    common = textwrap.indent(textwrap.dedent(f"""\
        inventory: inventory.yaml
        hosts: {{h2: {{}}}}
        monitor: {{enabled: false}}
        settings: {{case_timeout: 300s}}
        targets:
          t: {{path: {tmp_path}/t, hosts: [h2], setup: ["mkdir -p ${{target.path}}"]}}
        """), " " * 8)
    scenario = write_scenario(tmp_path, f"""\
        name: frozen
{common}
        workloads:
          a: {{tool: fio, options: {{rw: write, size: 1m, time_based: true, runtime: 6}}}}
          b: {{tool: fio, options: {{rw: write, size: 1m}}}}
          c: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    out = tmp_path / "out"
    proc = fsbench_popen("run", str(scenario), "-o", str(out), "--no-report")
    frozen: list[int] = []
    try:
        wait_for_file(proc, out, "*/raw/t__a__r1/h2/command")
        time.sleep(1.0)  # fio runs on the host now
        frozen = freeze(lab)
        start = time.monotonic()
        stdout, stderr = proc.communicate(timeout=180)
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
        thaw(frozen)
    # every command on the frozen host would have waited 30 s or more (about 2.5 min per case)
    assert elapsed < 45, (elapsed, stderr[-3000:])
    assert proc.returncode == 1, stderr[-3000:]
    run = Path(stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("workload")
    for workload in ("a", "b", "c"):
        assert cases.loc[workload, "status"] == "failed"
        reason = cases.loc[workload, "reason"]
        assert "h2" in reason and "stopped answering" in reason and "MaxSessions" not in reason, reason
    # the clean-ups that could not run on the frozen host stay listed for the next run
    left = json.loads((run / "leftovers.json").read_text())
    assert {a["what"] for a in left if a["host"] == "h2"} >= {"scratch folders", "target t"}, left
    assert list((tmp_path / "t").glob(f"fsbench-{run.name}*")), "the case's folder was not left on the host"

    # the host answers again: the next run removes what the frozen one left there, then runs
    again = write_scenario(tmp_path, f"""\
        name: thawed
{common}
        workloads:
          quick: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """, "again.yaml")
    proc2 = run_cli("run", str(again), "-o", str(out), "--no-report", timeout=300)
    assert proc2.returncode == 0, proc2.stderr[-3000:]
    assert f"cleaned up after the dead run {run.name}" in proc2.stderr
    assert not list((tmp_path / "t").glob(f"fsbench-{run.name}*"))
    assert json.loads((run / "leftovers.json").read_text()) == []


def running(pattern: str) -> list[int]:
    """Pids whose command line is exactly pattern."""
    out = subprocess.run(["pgrep", "-fx", pattern], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_a_tools_background_child_ends_with_its_case_but_the_runs_service_lives_on(where, request, tmp_path, fio):
    host = "h2" if where == "ssh" else "local"
    head = "name: strays\n"
    if where == "ssh":
        inventory(request.getfixturevalue("lab"), tmp_path / "inventory.yaml")
        head += "inventory: inventory.yaml\nhosts: {h2: {}}\n"
    unique = 3000 + os.getpid() % 1000 + (0 if where == "local" else 1000)
    stray, service = f"sleep {unique}", f"sleep {unique + 7}"
    seen = tmp_path / "service-seen-by-case-b"
    on = f"hosts: [{host}], " if where == "ssh" else ""
    scenario = write_scenario(tmp_path, head + textwrap.dedent(f"""\
        monitor: {{enabled: false}}
        services:
          keeper:
            start: ["{service} >/dev/null 2>&1 &"]
            ready: "true"
            stop: ["pkill -fx '{service}'"]
        targets:
          t: {{path: {tmp_path}/t, {on}services: [keeper], setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          a: {{tool: fio, allow_commands: true, options: {{rw: write, size: 1m, exec_prerun: "{stray} &"}}}}
          b: {{tool: fio, allow_commands: true, options: {{rw: write, size: 1m,
                                                         exec_prerun: "pgrep -fx '{service}' | tee {seen}"}}}}
        """).replace("keeper:\n", f"keeper:\n    hosts: [{host}]\n" if where == "ssh" else "keeper:\n"))
    try:
        proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        run = Path(proc.stdout.splitlines()[0])
        cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("workload")
        # the stray was stopped when case a ended (the case says so), the service lived on into case b
        assert f"stopped what the case left running on {host}: sleep (pid" in cases.loc["a", "warnings"]
        assert seen.read_text().split(), "the run's service was gone during case b"
        assert "stopped" not in cases.loc["b", "warnings"]
        assert not running(stray) and not running(service)  # and the service's own stop ended it
    finally:
        for pid in running(stray) + running(service):
            os.kill(pid, signal.SIGKILL)


CHATTY = '''\
from pathlib import Path

from fsbench.core.tidy import ParseResult, measurement
from fsbench.api.tools import Invocation


class ChattyTool:
    """Prints 40 MB on stdout and 20 MB on stderr, as a tool stuck in a loop would, then its result."""

    name = "chatty"
    bring_your_own = False
    accepts = ("directory",)
    metrics = {}
    operations = ("write",)
    primary_metrics = ("io_bytes",)
    packages = {}

    def check_options(self, options, job_file_text, jobs, ctx):
        return []

    def estimate_seconds(self, options, job_file_text, jobs, job_file=None):
        return 1.0

    def build(self, case, test_dir, ctx=None):
        return Invocation(argv=["sh", "-c", "echo START; yes chatty | head -c 40000000; echo RESULT 42; "
                                            "yes err | head -c 20000000 >&2"])

    def parse_outputs(self, raw_dir):
        last = Path(raw_dir / "stdout").read_text(errors="replace").splitlines()[-1]
        return ParseResult([measurement("chatty", "write", "io_bytes", float(last.split()[1]))])

    def parse_file(self, path):
        raise NotImplementedError

    def version_argv(self, options=None):
        return ["yes", "--version"]


PLUGIN = ChattyTool()
'''


@pytest.mark.parametrize("where", ["local", "ssh"])
def test_a_tool_printing_without_end_is_capped_and_its_case_says_so(where, request, tmp_path):
    site = tmp_path / "site"
    (site / "fsbench_chatty").mkdir(parents=True)
    (site / "fsbench_chatty" / "__init__.py").write_text(CHATTY)
    info = site / "fsbench_chatty-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fsbench-chatty\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[fsbench.tools]\nchatty = fsbench_chatty:PLUGIN\n")
    host = "h2" if where == "ssh" else "local"
    head = "name: chatty\n"
    on = ""
    if where == "ssh":
        inventory(request.getfixturevalue("lab"), tmp_path / "inventory.yaml")
        head += "inventory: inventory.yaml\nhosts: {h2: {}}\n"
        on = ", hosts: [h2]"
    scenario = write_scenario(tmp_path, head + textwrap.dedent(f"""\
        monitor: {{enabled: false}}
        settings: {{output_cap: 2MiB}}
        targets: {{t: {{path: {tmp_path}/t{on}, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: chatty}}
        """))
    proc = subprocess.run([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                           "--no-report"], env={**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{REPO}"},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    raw = run / "raw" / "t__w__r1" / host
    out, err = (raw / "stdout").read_bytes(), (raw / "stderr").read_bytes()
    # 2 MiB per stream kept (and the marker line), not 40 and 20 MB: the head, the tail with the result
    assert len(out) < 2 * 2**20 + 300 and len(err) < 2 * 2**20 + 300
    # (40,000,000 bytes of "chatty\\n" end inside a line: the result follows on that line)
    assert out.startswith(b"START\nchatty\n") and out.endswith(b"chattRESULT 42\n")
    assert b"\n[fsbench: " in out and b"bytes of stdout left out here" in out and b"bytes of stderr left" in err
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    warnings = cases.warnings.iloc[0]
    assert f"{host}: stdout: 38.1 MiB printed, over the cap of 2.0 MiB per stream" in warnings, warnings
    assert f"{host}: stderr: 19.1 MiB printed" in warnings
    assert pd.read_csv(run / "results.csv").value.tolist() == [42]
