"""The monitor end to end: the real sampler through the real local transport, watching real processes."""

from __future__ import annotations

import csv
import html
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
    # one thread: at most one core, plus sampling jitter; the peak is over a second or more, so the stop
    # sample's few ms (150 % was seen under load) cannot make it
    assert 0 < cpu_mean < 110 and cpu_max < 115
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
    limit = time.monotonic() + 10  # no stop(): the sampler must give up on its own
    while mon.running() and time.monotonic() < limit:
        time.sleep(0.05)
    assert not mon.running() and mon.result is not None and mon.result.exit_status == 0
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
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=_no_run()).stdout
    finally:
        keeper.kill()
        keeper.wait()
    assert " scan=1 marker=0\n" in out
    samples = analyse(out, "local").series
    rss = [r for r in samples if r["scope"] == name and r["metric"] == "memory_rss"]
    assert len(rss) == out.count("\n. ") >= 5


def _no_run(**more: str) -> dict[str, str]:
    """This environment without a run's marker (a test may itself run inside one), plus `more`."""
    return {**{k: v for k, v in os.environ.items() if k != "FSBENCH_RUN"}, **more}


def test_the_sampler_says_which_watched_processes_carry_the_runs_marker(tmp_path):
    name = f"fsbm-mark{os.getpid() % 100000}"
    exe, sleep, run = named_python(tmp_path, name), "import time; time.sleep(30)", "fsbm-run-1"
    # the run's own, one without a marker, one of another run whose id starts like this run's
    procs = [subprocess.Popen([exe, "-c", sleep], env=_no_run(**env)) for env in
             ({"FSBENCH_RUN": run}, {}, {"FSBENCH_RUN": f"{run}0"})]
    try:
        time.sleep(0.3)  # exec'd: /proc/PID/comm is the name
        marked = subprocess.run(sampler_argv(0.1, [name], max_s=0.3), capture_output=True, text=True, timeout=30,
                                env=_no_run(FSBENCH_RUN=run)).stdout
        unmarked = subprocess.run(sampler_argv(0.1, [name], max_s=0.3), capture_output=True, text=True, timeout=30,
                                  env=_no_run()).stdout
    finally:
        for p in procs:
            p.kill()
            p.wait()
    mine, none, other = (p.pid for p in procs)
    assert " marker=1\n" in marked and f"\nm {mine}\n" in marked
    assert f"\nn {none}\n" in marked and f"\nn {other}\n" in marked and f"\nm {other}\n" not in marked
    # one line per pid per scan, after the scan's p lines and before meminfo
    first = marked[marked.index("\n@ "):marked.index("MemTotal:")]
    assert sorted(re.findall(r"^([mn]) (\d+)$", first, re.M)) == sorted([("m", str(mine)), ("n", str(none)),
                                                                         ("n", str(other))])
    # a sampler without the marker cannot tell, and says so in its header instead of guessing
    assert " marker=0\n" in unmarked and not re.search(r"^[mn] \d+$", unmarked, re.M)
    got = {(r["job"], r["metric"]) for r in analyse(marked, "local").summary}
    assert (name, "memory_peak") in got


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
            cmd = " ".join(words.split("\x1f"))
            # the first full command line of each pid: one read as the process exits may be empty or its
            # bare name (seen under load: juicefs bench's last line was "juicefs")
            if int(pid) in seen and len(cmd.split()) > len(seen[int(pid)][1].split()):
                seen[int(pid)] = (seen[int(pid)][0], cmd)
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


GHOST = """\
import sys, time
block = b"x" * (160 << 20)  # filled, so every page is resident: the ghost is told apart by its memory
print("ready", flush=True)
time.sleep(120)
"""


@pytest.fixture(scope="module")
def ghost_run(tmp_path_factory):
    """One real run beside processes it did not start, named like the ones it watches (ghosts, no marker).

    - `own`: the target's service starts one (small, with the run's marker); a 160 MiB ghost has its name
    - `lone`: nobody in the scenario starts it; only a 160 MiB ghost runs
    - `other`: another target's client process name (a target without cases); only a ghost runs
    """
    from tests.conftest import require, run_cli, write_scenario

    require("fio")
    tmp = tmp_path_factory.mktemp("ghosts")
    tag = str(os.getpid() % 100000)
    names = {k: f"fsbm-{k}{tag}" for k in ("own", "lone", "other")}
    exes = {k: named_python(tmp, n) for k, n in names.items()}
    env = {k: v for k, v in os.environ.items() if k != "FSBENCH_RUN"}  # the ghosts are nobody's run
    ghosts = {k: subprocess.Popen([exe, "-c", GHOST], stdout=subprocess.PIPE, text=True, env=env)
              for k, exe in exes.items()}
    try:
        for g in ghosts.values():
            assert g.stdout is not None and g.stdout.readline().strip() == "ready"
        scenario = write_scenario(tmp, f"""\
            name: monitor-ghosts
            monitor: {{interval: 0.5s, processes: [{names['own']}, {names['lone']}, {names['other']}]}}
            services:
              own:
                start: ["{exes['own']} -c 'import time; time.sleep(300)' >/dev/null 2>&1 & echo $! > {tmp}/own.pid"]
                ready: "true"
                stop: ["kill $(cat {tmp}/own.pid)"]
            targets:
              t: {{path: {tmp}/t, services: [own], setup: ["mkdir -p ${{target.path}}"]}}
              u: {{path: {tmp}/u, client_process: {names['other']}}}
            workloads:
              w: {{tool: fio, targets: [t], options: {{rw: write, size: 4m}}}}
            """)
        proc = run_cli("run", str(scenario), "-o", str(tmp / "out"), "--progress", "plain", timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        run = Path(proc.stdout.splitlines()[0])
        alive = {k: g.poll() is None for k, g in ghosts.items()}
    finally:
        for g in ghosts.values():
            g.kill()
            g.wait()
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    procs = results[(results.tool == "monitor") & (results.operation == "process")]
    yield {"run": run, "names": names, "pids": {k: g.pid for k, g in ghosts.items()}, "alive": alive,
           "own_pid": int((tmp / "own.pid").read_text()), "procs": procs.set_index(["job", "metric", "stat"])}


def test_a_watched_name_counts_the_runs_own_process_not_a_ghost_of_that_name(ghost_run):
    names, procs = ghost_run["names"], ghost_run["procs"]
    own = procs.loc[(names["own"], "memory_peak", "max")]
    # the run's own python sleeps in ~10 MiB; with the 160 MiB ghost beside it the row read 170 MiB
    assert own.value < 60 * MiB, own.value / MiB
    assert "none started by this run" not in own.get("warnings", "")
    text = (ghost_run["run"] / "raw" / "t__w__r1" / "local" / "monitor.txt").read_text()
    assert re.search(r"^#fsbench-monitor 1 .* marker=1$", text, re.M)
    # the sampler read both environments: the service's process carries the run's marker, the ghost not
    assert f"\nm {ghost_run['own_pid']}\n" in text and f"\nn {ghost_run['pids']['own']}\n" in text
    assert all(ghost_run["alive"].values()), "fsbench ended a process it did not start"


def test_a_name_none_of_whose_processes_is_the_runs_counts_them_all_and_says_so(ghost_run):
    names, procs = ghost_run["names"], ghost_run["procs"]
    lone = procs.loc[(names["lone"], "memory_peak", "max")]
    assert lone.value > 150 * MiB  # the ghost's own figures ...
    why = f"process '{names['lone']}': 1 process of that name on local, none started by this run"
    assert why in lone["warnings"]  # ... with why they may not be this run's, beside them
    assert why in procs.loc[(names["lone"], "cpu_usage", "mean"), "warnings"]
    assert why in html.unescape((ghost_run["run"] / "report.html").read_text())  # in its Warnings table
    # another target's client name, none of its processes this run's: another run's client, left out
    assert names["other"] not in set(procs.index.get_level_values(0))
    cases = pd.read_csv(ghost_run["run"] / "cases.csv", keep_default_na=False)
    assert "never seen" not in " ".join(cases.warnings)
