"""The monitor end to end: the real sampler through the real local transport, watching real processes."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from fsbench.monitor import Client, MonitorSession, analyse, sampler_argv
from fsbench.transport.local import LocalTransport

MiB = 1024 * 1024
BURN = "import time\nend = time.monotonic() + 3.0\nwhile time.monotonic() < end:\n    pass\n"
HOG = """\
import sys, time
block = b"x" * (200 << 20)  # filled, so every page is touched and resident
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(int(status["VmHWM"].split()[0]) * 1024, flush=True)
time.sleep(2.5)
"""


def named_python(folder: Path, name: str) -> str:
    """A python the kernel calls `name` in /proc/PID/comm: comm is the basename of the exec'd path."""
    path = folder / name
    path.symlink_to(os.path.realpath(sys.executable))
    return str(path)


def sampler_pid(raw: Path) -> int:
    match = re.search(r"^#fsbench-monitor 1 pid=(\d+) ", raw.read_text(), re.M)
    assert match, raw.read_text()[:500]
    return int(match.group(1))


def assert_no_sampler_left(raw: Path, tag: str) -> None:
    """Nothing of the sampler's process group (sh, cat, sleep) remains, nor any sampler for our names."""
    pid = sampler_pid(raw)  # the transport starts it as a session leader: its pid is its group id
    group = subprocess.run(["pgrep", "-g", str(pid)], capture_output=True, text=True)
    assert group.returncode == 1 and not group.stdout, f"left behind in group {pid}: {group.stdout}"
    ours = subprocess.run(["pgrep", "-f", f"fsbench-monitor .*{tag}"], capture_output=True, text=True)
    assert ours.returncode == 1, f"sampler still running: {ours.stdout}"


def by_key(rows: list[dict]) -> dict[tuple[str, str, str], float]:
    return {(r["job"], r["metric"], r["stat"]): r["value"] for r in rows}


def test_monitor_measures_a_busy_process_and_a_big_one(tmp_path):
    tag = str(os.getpid() % 100000)
    burn_name, hog_name = f"fsbm-burn{tag}", f"fsbm-hog{tag}"
    burn_exe, hog_exe = named_python(tmp_path, burn_name), named_python(tmp_path, hog_name)
    raw = tmp_path / "raw" / "monitor-local.txt"
    mon = MonitorSession(LocalTransport(), "local", 0.25, [burn_name, hog_name], raw, max_s=120)
    assert mon.start(), "no baseline sample within the start-up wait"
    try:
        started = time.monotonic()
        burner = subprocess.Popen([burn_exe, "-c", BURN])
        hog = subprocess.Popen([hog_exe, "-c", HOG], stdout=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(burner.pid, 0)
        burner.returncode = os.waitstatus_to_exitcode(status)
        # the truth: the CPU time the kernel charged the burner over its whole life, as a rate
        truth = (usage.ru_utime + usage.ru_stime) / (time.monotonic() - started) * 100
        hog_hwm = int(hog.stdout.readline())
        assert hog.wait(timeout=30) == 0 and burner.returncode == 0
    finally:
        result = mon.stop()
    assert_no_sampler_left(raw, tag)

    got = by_key(result.rows)
    cpu_mean, cpu_max = got[burn_name, "cpu_usage", "mean"], got[burn_name, "cpu_usage", "max"]
    print(f"burner: monitor mean {cpu_mean:.1f} % max {cpu_max:.1f} %, truth {truth:.1f} %; hog: monitor "
          f"{got[hog_name, 'memory_peak', 'max'] / MiB:.1f} MiB, truth {hog_hwm / MiB:.1f} MiB; {result.meta}")
    # a loaded machine (load 14 on 2 cores was seen) gives the burner far less than a core: the
    # reference is what the kernel charged it, not an assumed 100 %
    assert abs(cpu_mean - truth) < 12, (cpu_mean, truth)
    assert 0 < cpu_mean < 110 and cpu_max < 130  # one thread: at most one core, plus sampling jitter
    if truth > 90:  # it did get its core
        assert cpu_mean > 70
    assert got[hog_name, "memory_peak", "max"] == pytest.approx(200 * MiB, rel=0.10)
    assert got[hog_name, "memory_peak", "max"] == pytest.approx(hog_hwm, rel=0.02)
    assert got[hog_name, "cpu_usage", "mean"] < 50  # it fills memory once, then sleeps
    assert 20 < got["host", "cpu_usage", "max"] <= os.cpu_count() * 100 * 1.05
    assert got["host", "memory_peak", "max"] > 200 * MiB
    assert not [w for w in result.warnings if "never seen" in w]

    with open(mon.csv_path, newline="") as fh:
        series = list(csv.DictReader(fh))
    assert mon.csv_path == raw.parent / "monitor-local.csv"
    metrics = {(r["scope"], r["metric"], r["unit"]) for r in series}
    assert {("host", m, "B/s") for m in ("disk_read", "disk_write", "net_rx", "net_tx")} <= metrics
    assert {(burn_name, "cpu_usage", "%"), (hog_name, "memory_rss", "B"), ("host", "memory_used", "B")} <= metrics
    assert all(float(r["t"]) >= 0 for r in series)


def test_stop_ends_a_sleeping_sampler_at_once_and_leaves_nothing(tmp_path):
    raw = tmp_path / "monitor-local.txt"
    tag = f"fsbm-idle{os.getpid() % 100000}"
    mon = MonitorSession(LocalTransport(), "local", 30, [tag], raw, max_s=600)
    assert mon.start()
    time.sleep(0.3)  # the sampler now waits in `sleep 30`, a child in its process group
    begin = time.monotonic()
    result = mon.stop(final_sample=False)
    assert time.monotonic() - begin < 8
    assert mon.result is not None and mon.result.interrupted
    assert_no_sampler_left(raw, tag)
    # the baseline sample, the dense first samples (0.1 s apart) and the last one the sampler takes as it
    # is stopped (no waiting for a long sleep)
    assert 2 <= result.meta["samples"] <= 8 and any("never seen" in w for w in result.warnings)
    assert {(r["job"], r["metric"]) for r in result.rows} == {("host", "memory_peak"), ("host", "cpu_usage")}


def test_sampler_ends_by_itself_after_its_maximum_duration(tmp_path):
    raw = tmp_path / "monitor-local.txt"
    tag = f"fsbm-max{os.getpid() % 100000}"
    mon = MonitorSession(LocalTransport(), "local", 0.2, [tag], raw, max_s=1)
    assert mon.start()
    mon._thread.join(timeout=10)  # no stop(): the sampler must give up on its own
    assert not mon._thread.is_alive() and mon.result is not None and mon.result.exit_status == 0
    assert_no_sampler_left(raw, tag)
    result = mon.stop()
    assert result.meta["samples"] >= 4
    assert ("host", "cpu_usage", "mean") in by_key(result.rows)


def test_pids_found_by_a_sparse_scan_are_still_sampled_every_time(tmp_path):
    name = f"fsbm-keep{os.getpid() % 100000}"
    keeper = subprocess.Popen([named_python(tmp_path, name), "-c", "import time; time.sleep(30)"])
    try:
        # one comm read allowed per sample: a full scan every ~(number of pids) samples
        argv = sampler_argv(0.1, [name], max_s=1, scan_pids_per_s=1)
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    finally:
        keeper.kill()
        keeper.wait()
    assert " scan=1\n" in out
    samples = analyse(out, "local").series
    rss = [r for r in samples if r["scope"] == name and r["metric"] == "memory_rss"]
    assert len(rss) == out.count("\n. ") >= 5


def test_the_client_is_told_from_other_processes_of_its_name_by_its_command_line(tmp_path):
    """Three processes with one name, as a JuiceFS mount, `juicefs bench` and `juicefs stats` are: only the
    one holding the mount's words is the client; the name alone still gives all three as `<name> (all)`."""
    name = f"fsbm-cli{os.getpid() % 100000}"
    exe, mount = named_python(tmp_path, name), "/mnt/fsbm client"  # a space stays inside its argument
    sleep = "import sys, time; time.sleep(30)"
    big = "import sys, time; b = b'x' * (64 << 20); time.sleep(30)"
    procs = [subprocess.Popen([exe, "-c", sleep, "mount", mount]),
             subprocess.Popen([exe, "-c", big, "bench", f"{mount}/case"]),
             subprocess.Popen([exe, "-c", big, "stats", mount])]
    raw = tmp_path / "monitor-local.txt"
    try:
        time.sleep(0.5)  # the three have their final command lines
        mon = MonitorSession(LocalTransport(), "local", 0.2, [name], raw, max_s=60,
                             client=Client(name, ("mount", mount)))
        assert mon.start()
        time.sleep(1.0)
        result = mon.stop()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    got = by_key(result.rows)
    client_peak, all_peak = got[name, "memory_peak", "max"], got[f"{name} (all)", "memory_peak", "max"]
    assert client_peak < 40 * MiB < 2 * 64 * MiB < all_peak  # the two 64 MiB ones are not the client
    text = raw.read_text()
    assert f"#client {name}\x1fmount\x1f{mount}\n" in text
    for p, words in zip(procs, ("mount", "bench", "stats")):
        assert f"\nc {p.pid} " in text and f"\x1f{words}\x1f" in text
    assert not [w for w in result.warnings if "never seen" in w or "command line" in w]


def test_juicefs_client_figures_leave_out_juicefs_bench_and_stats(tmp_path):
    """A real JuiceFS mount on Redis with `juicefs bench` and `juicefs stats` beside it: all three are
    called juicefs; the client rows are the mount's processes only."""
    from tests.conftest import require, run_cli, write_scenario

    for tool in ("juicefs", "redis-server", "redis-cli", "script", "fusermount3"):
        require(tool)
    mount = tmp_path / "jfs"
    scenario = write_scenario(tmp_path, f"""\
        name: jfs-client
        monitor: {{interval: 0.5s, processes: [juicefs]}}
        services:
          redis: {{kind: redis, redis: {{appendonly: false}}}}
        targets:
          jfs:
            kind: juicefs
            path: {mount}
            services: [redis]
            juicefs: {{meta: "${{services.redis.url}}/1", storage: file}}
        collectors:
          stats: {{kind: juicefs-stats, targets: [jfs], interval: 1s}}
        workloads:
          bench:
            tool: juicefs-bench
            options: {{threads: 2, block_size: 1m, big_file_size: 256m, small_file_size: 128k, small_file_count: 200}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    text = (run / "raw" / "jfs__bench__r1" / "local" / "monitor.txt").read_text()

    from fsbench.monitor.samples import read_raw

    raw = read_raw(text)
    assert raw.client is not None and raw.client.words == ("mount", str(mount))
    seen: dict[int, tuple[bool, str]] = {}  # pid -> (counted as the client, its command line)
    for s in raw.samples:
        for p in s.procs.values():
            seen[p.pid] = (p.client, "")
    for line in text.splitlines():
        if line.startswith("c "):
            pid, _, words = line[2:].partition(" ")
            if int(pid) in seen:
                seen[int(pid)] = (seen[int(pid)][0], " ".join(words.split("\x1f")))
    clients = {pid: cmd for pid, (client, cmd) in seen.items() if client}
    others = {pid: cmd for pid, (client, cmd) in seen.items() if not client}
    # the mount's supervisor and worker, and only they (their title may be cut before the mount point:
    # JuiceFS stops at 255 bytes; the run's marker in their environment then says they are this run's)
    # (another run's JuiceFS mount on this machine, a test module beside this one, names its own mount point)
    mounts = {pid for pid, cmd in (clients | others).items()
              if " mount " in f" {cmd} " and (pid in clients or str(mount) in cmd)}
    assert len(mounts) == 2 and set(clients) == mounts, (clients, others)
    # juicefs bench runs for seconds (256 MiB, 200 small files), so the 0.5 s sampler reads its command line
    assert any(" bench " in f" {c} " for c in others.values()), others  # the sampler saw juicefs bench ...
    assert any(" stats " in f" {c} " for c in others.values()), others  # ... and the stats collector

    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    mon = results[(results.tool == "monitor") & (results.operation == "process")].set_index(["job", "metric", "stat"])
    client_mem, all_mem = mon.loc[("juicefs", "memory_peak", "max"), "value"], \
        mon.loc[("juicefs (all)", "memory_peak", "max"), "value"]
    client_cpu, all_cpu = mon.loc[("juicefs", "cpu_usage", "mean"), "value"], \
        mon.loc[("juicefs (all)", "cpu_usage", "mean"), "value"]
    assert client_mem < all_mem and client_cpu < all_cpu  # bench and stats used memory and CPU of their own
    assert "client CPU" in (run / "report.html").read_text()
