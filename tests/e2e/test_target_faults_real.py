"""Faults of the system under test in the middle of a case, with real JuiceFS mounts on real Redis servers:
the metadata server stopped (SIGSTOP) or killed, and the bucket's disk full. Each fault ends its case within
seconds with the fault as its reason, the target's later cases are not run, the teardown is prompt, and no
process of the run (the `juicefs mount` clients, which ignore TERM while their servers are gone) outlives it.

Before the target watch and the client stop, such a case waited for its timeout, the unmount for two minutes,
and both JuiceFS processes of each mount ran on after the run, absent from leftovers.json."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import require, write_scenario
from tests.paths import REPO

SCRATCH = Path("/var/tmp/fsbench")  # the run's scratch space (services' folders, JuiceFS' buckets): the default
#: a case left to its timeout (the code before the watch) takes longer than this; a watched one ends well before
CASE_TIMEOUT_S = 90


def _tools() -> None:
    for tool in ("redis-server", "redis-cli", "juicefs", "fusermount3", "fio"):
        require(tool)


def _run_processes(run_id: str) -> list[str]:
    """Processes whose environment carries the run's marker (its services, clients and tools), but zombies."""
    found = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{d}/environ").read_bytes()
            stat = Path(f"/proc/{d}/stat").read_text()
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"FSBENCH_RUN={run_id}".encode() in env.split(b"\0") and stat.rsplit(")", 1)[1].split()[0] != "Z":
            found.append(f"{d} {cmd}")
    return found


def _is_mount(path: Path) -> bool:
    return subprocess.run(["findmnt", "--mountpoint", str(path)], capture_output=True).returncode == 0


def _start(scenario: Path, out: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(out), "--progress",
                             "plain", "--no-report"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _when_running(proc: subprocess.Popen, out: Path, case_id: str, limit_s: float = 120) -> str:
    """Wait until the case's tool has run for a second; the run id."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        started = list(out.glob(f"*/raw/{case_id}/*/command"))
        if started:
            time.sleep(1.0)
            return started[0].parents[3].name
        time.sleep(0.05)
    proc.kill()
    stdout, stderr = proc.communicate(timeout=30)
    raise AssertionError(f"{case_id} never started; fsbench exit {proc.returncode}:\n{stdout}\n{stderr[-3000:]}")


def _redis_pid(run_id: str, service: str) -> int:
    return int((SCRATCH / run_id / "services" / service / "redis.pid").read_text().strip())


def _cases(run_dir: Path) -> dict[str, dict]:
    with (run_dir / "cases.csv").open(newline="") as fh:
        return {row["case_id"]: row for row in csv.DictReader(fh)}


def _finish(proc: subprocess.Popen, limit_s: float) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=300)
        raise AssertionError(f"the run did not end within {limit_s:.0f}s of the fault:\n{stderr[-3000:]}") from None


def _assert_clean(run_id: str, mounts: list[Path], state: Path) -> None:
    # the case's own processes that waited in the kernel on the dead mount (fio, the watch's lookups) end once
    # its client is killed and the kernel aborts the connection: a moment after the run on a loaded host
    deadline = time.monotonic() + 20
    while _run_processes(run_id) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _run_processes(run_id), f"processes of the run outlived it: {_run_processes(run_id)}"
    assert not [m for m in mounts if _is_mount(m)]
    assert not list(state.glob(f"{run_id}.json"))  # nothing left for the next run: everything was undone


def test_a_stopped_or_killed_metadata_server_ends_its_case_and_every_client_is_stopped(tmp_path, monkeypatch):
    _tools()
    state = tmp_path / "state"
    monkeypatch.setenv("FSBENCH_STATE_DIR", str(state))
    scenario = write_scenario(tmp_path, f"""\
        name: meta-faults
        monitor: {{enabled: false}}
        settings: {{case_timeout: {CASE_TIMEOUT_S}s, fault_interval: 1s, fault_answer: 2s}}
        services:
          redis-stop: {{kind: redis}}
          redis-kill: {{kind: redis}}
        targets:
          stop: {{kind: juicefs, path: {tmp_path}/mnt-stop, services: [redis-stop],
                 juicefs: {{meta: "${{services.redis-stop.url}}/1"}}}}
          kill: {{kind: juicefs, path: {tmp_path}/mnt-kill, services: [redis-kill],
                 juicefs: {{meta: "${{services.redis-kill.url}}/1"}}}}
        workloads:
          long: {{tool: fio, options: {{rw: write, bs: 1m, size: 64m, runtime: 60s, time_based: true}}}}
          next: {{tool: fio, options: {{rw: write, bs: 1m, size: 4m}}}}
        """)
    out = tmp_path / "out"
    proc = _start(scenario, out)
    run_id = _when_running(proc, out, "stop__long__r1")
    os.kill(_redis_pid(run_id, "redis-stop"), signal.SIGSTOP)
    stopped_at = time.monotonic()
    _when_running(proc, out, "kill__long__r1")
    stop_took = time.monotonic() - stopped_at
    os.kill(_redis_pid(run_id, "redis-kill"), signal.SIGKILL)
    _, stderr = _finish(proc, 120)
    assert proc.returncode == 1, stderr[-3000:]
    cases = _cases(out / run_id)
    for target in ("stop", "kill"):
        long, nxt = cases[f"{target}__long__r1"], cases[f"{target}__next__r1"]
        assert long["status"] == "failed" and "gave no answer within 2s" in long["reason"], long
        assert "redis-" in long["reason"] and "the case was stopped after" in long["reason"]
        assert float(long["duration_s"]) < 45, long  # the fault's, not the 60 s tool's nor the 90 s timeout
        assert nxt["status"] == "failed" and nxt["reason"].startswith("not run: target "), nxt
    # the stopped server's target: its case, teardown and the next target's setup, well within the timeout
    assert stop_took < CASE_TIMEOUT_S, stop_took
    _assert_clean(run_id, [tmp_path / "mnt-stop", tmp_path / "mnt-kill"], state)


def test_a_full_bucket_disk_ends_its_case_and_the_client_is_stopped(tmp_path, monkeypatch):
    _tools()
    state = tmp_path / "state"
    monkeypatch.setenv("FSBENCH_STATE_DIR", str(state))
    bucket_disk = tmp_path / "bucket-disk"
    bucket_disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=40m", "fsbench-test-bucket", str(bucket_disk)], check=True)
    try:
        scenario = write_scenario(tmp_path, f"""\
            name: bucket-full
            monitor: {{enabled: false}}
            settings: {{case_timeout: {CASE_TIMEOUT_S}s, fault_interval: 1s, fault_answer: 2s}}
            services: {{redis: {{kind: redis}}}}
            targets:
              jfs: {{kind: juicefs, path: {tmp_path}/mnt, services: [redis],
                    juicefs: {{meta: "${{services.redis.url}}/1", bucket: {bucket_disk}/bucket}}}}
            workloads:
              long: {{tool: fio, options: {{rw: write, bs: 1m, size: 128m, runtime: 60s, time_based: true}}}}
            """)
        out = tmp_path / "out"
        began = time.monotonic()
        proc = _start(scenario, out)
        run_id = _when_running(proc, out, "jfs__long__r1")
        _, stderr = _finish(proc, 120)
        took = time.monotonic() - began
        assert proc.returncode == 1, stderr[-3000:]
        case = _cases(out / run_id)["jfs__long__r1"]
        assert case["status"] == "failed" and f"its object store {bucket_disk}/bucket is full" in case["reason"], case
        assert took < 45, took  # the tool alone would run 60 s, its timeout 90 s
        _assert_clean(run_id, [tmp_path / "mnt"], state)
    finally:
        subprocess.run(["umount", "-l", str(bucket_disk)], check=False)


def test_the_client_stop_kills_only_the_targets_client_of_this_run():
    """The stop's rule, on real processes that ignore TERM: the run's marker and the target's on this host (hosts
    in one PID namespace see each other's), no case's."""
    from fsbench.run.run_processes import client_stop_argv

    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"
    procs = {
        "client": {"FSBENCH_RUN": "r1", "FSBENCH_TARGET": "jfs@h1"},
        "other run": {"FSBENCH_RUN": "r2", "FSBENCH_TARGET": "jfs@h1"},
        "a case's tool": {"FSBENCH_RUN": "r1", "FSBENCH_TARGET": "jfs@h1", "FSBENCH_CASE": "c1"},
        "another target": {"FSBENCH_RUN": "r1", "FSBENCH_TARGET": "jfs-2@h1"},
        "another host's client": {"FSBENCH_RUN": "r1", "FSBENCH_TARGET": "jfs@h2"},
        "the run's service": {"FSBENCH_RUN": "r1"},
    }
    started = {k: subprocess.Popen([sys.executable, "-c", stubborn], env={"PATH": os.environ["PATH"], **env})
               for k, env in procs.items()}
    try:
        time.sleep(0.5)
        r = subprocess.run(client_stop_argv("r1", "jfs@h1", 1), capture_output=True, text=True, timeout=60,
                           env={**os.environ, "FSBENCH_RUN": "r1"})
        assert r.returncode == 0, r.stderr
        words = [line.split()[:2] for line in r.stdout.splitlines()]
        assert words == [["term", str(started["client"].pid)], ["kill", str(started["client"].pid)]], r.stdout
        assert started["client"].wait(timeout=10) == -signal.SIGKILL
        assert all(p.poll() is None for k, p in started.items() if k != "client")
    finally:
        for p in started.values():
            p.kill()
            p.wait(timeout=10)
