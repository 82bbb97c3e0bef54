"""fsbench across hosts over SSH: a real sshd on 127.0.0.2-5, fio client/server, failures (mpirun: test_mdtest_real)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import run_cli, write_scenario
from tests.sshlab import make_key, write_known_hosts


def inventory(lab, path: Path, *, known_hosts: Path | None = None, key: Path | None = None,
              extra: str = "") -> Path:
    hosts = "".join(f"  h{a.rsplit('.', 1)[1]}:\n    address: {a}\n    groups: [clients]\n"
                    for a in lab.addresses[:3])
    path.write_text(f"defaults:\n  port: {lab.port}\n  user: {lab.user}\n  key_file: {key or lab.client_key}\n"
                    f"  known_hosts: {known_hosts or lab.known_hosts}\n  slots: 1\nhosts:\n{hosts}{extra}")
    return path


def no_strays(pattern: str) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not subprocess.run(["pgrep", "-f", pattern], capture_output=True).stdout:
            return True
        time.sleep(0.2)
    return False


def test_fio_client_server_across_three_hosts(lab, tmp_path, fio):
    inventory(lab, tmp_path / "inventory.yaml")
    scenario = write_scenario(tmp_path, f"""\
        name: three-clients
        inventory: inventory.yaml
        targets:
          shared:
            path: {tmp_path}/shared
            hosts: [clients]
            setup: ["mkdir -p ${{target.path}}"]
            teardown: ["rm -rf ${{target.path}}"]
        workloads:
          write:
            tool: fio
            options: {{rw: write, bs: 64k, size: 4m, ioengine: psync}}
        """)
    plan = run_cli("plan", str(scenario), check=True)
    assert "h2,h3,h4" in plan.stdout
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    raw = run / "raw" / "shared__write__r1"
    command = (raw / "controller" / "command").read_text()
    for a in lab.addresses[:3]:  # one --client=HOST JOBFILE pair per host
        assert f"--client=ip:{a}," in command
    assert command.count(".fio") == 3
    for h in ("h2", "h3", "h4"):
        assert (raw / h / "server-command").read_text().startswith("fio --server=ip:127.0.0.")
        assert (raw / h / "monitor.txt").stat().st_size > 0
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    fio_rows = results[(results.tool == "fio") & (results.metric == "bandwidth")]
    assert set(fio_rows.host) == {"h2", "h3", "h4", "all"}
    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False)
    assert list(hosts.host) == ["h2", "h3", "h4"] and (hosts.fio_version == "fio-3.33").all()
    assert "clock_skew_s" in hosts.columns
    assert no_strays("fio --server=ip:127.0.0")
    assert not (tmp_path / "shared").exists()


@pytest.mark.parametrize("problem", ["changed host key", "unreachable host", "wrong key"])
def test_preflight_failures_stop_before_anything_ran(lab, tmp_path, fio, problem):
    extra, kh, key = "", None, None
    if problem == "changed host key":
        other = make_key(tmp_path / "other_host_key")
        kh = write_known_hosts(tmp_path / "known_hosts", lab.addresses, lab.port, Path(f"{other}.pub"))
    elif problem == "unreachable host":
        extra = "  h9:\n    address: 127.0.0.9\n    groups: [clients]\n"
    else:
        key = make_key(tmp_path / "stranger")
    inventory(lab, tmp_path / "inventory.yaml", known_hosts=kh, key=key, extra=extra)
    scenario = write_scenario(tmp_path, f"""\
        name: preflight
        inventory: inventory.yaml
        targets:
          t: {{path: {tmp_path}/t, hosts: [clients], setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 4, proc.stderr
    assert "preflight failed, nothing ran" in proc.stderr
    if problem == "changed host key":
        assert "h2" in proc.stderr and "ssh-keyscan" in proc.stderr
    elif problem == "unreachable host":
        assert "h9" in proc.stderr and "127.0.0.9" in proc.stderr
    else:
        assert "stranger" in proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "t").exists()


def test_sshd_killed_mid_run_keeps_finished_results(lab, tmp_path, fio):
    inventory(lab, tmp_path / "inventory.yaml")
    scenario = write_scenario(tmp_path, f"""\
        name: crash
        inventory: inventory.yaml
        hosts: {{h2: {{}}}}
        monitor: {{enabled: false}}
        targets:
          t: {{path: {tmp_path}/t, hosts: [h2], setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          first: {{tool: fio, options: {{rw: write, size: 1m}}}}
          second: {{tool: fio, options: {{rw: read, size: 1m, time_based: true, runtime: 20}}}}
        """)
    out = tmp_path / "out"

    def crash_when_second_starts() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if list(out.glob("*/raw/t__second__r1/h2/command")):
                time.sleep(1.0)
                lab.crash()
                return
            time.sleep(0.05)

    killer = threading.Thread(target=crash_when_second_starts)
    killer.start()
    proc = run_cli("run", str(scenario), "-o", str(out), "--no-report", timeout=300)
    killer.join()
    assert proc.returncode == 1, proc.stderr[-2000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("workload")
    assert cases.loc["first", "status"] == "ok"
    assert cases.loc["second", "status"] == "failed" and "h2" in cases.loc["second", "reason"]
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    assert set(results.workload) == {"first"} and len(results) > 0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["cases"]["t__first__r1"] == "ok"
