"""End to end with real fio on temporary directories: run directory, rows, report, resume, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import fsbench
from tests.conftest import run_cli, write_scenario
from tests.paths import REPO

SCENARIO = """\
name: e2e
description: two folders, fio at two job counts
use_case:
  application: test suite
targets:
  fast:
    path: {root}/fast
    baseline: true
    setup: ["mkdir -p ${{target.path}}"]
    teardown: ["rmdir ${{target.path}}"]
  slow:
    path: {root}/slow
    setup: ["mkdir -p ${{target.path}}", "{gate}"]
    teardown: ["rmdir ${{target.path}}"]
workloads:
  seq-write:
    tool: fio
    options: {{rw: write, bs: 64k, size: 4m, ioengine: psync}}
    sweep:
      product: {{numjobs: [1, 2]}}
  rand-read:
    tool: fio
    options: {{rw: randread, bs: 4k, size: 2m}}
"""


def make(tmp_path: Path, gate: str = "true") -> Path:
    root = tmp_path / "targets"
    root.mkdir()
    return write_scenario(tmp_path, SCENARIO.format(root=root, gate=gate))


def test_run_writes_the_run_directory_rows_and_report(tmp_path, fio):
    scenario = make(tmp_path)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain", check=True)
    run = Path(proc.stdout.splitlines()[0])
    assert proc.stdout.splitlines()[1] == str(run / "report.html")
    assert "[1/6] fast · seq-write numjobs=1 · rep 1" in proc.stderr and "ETA" in proc.stderr

    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["schema_version"] == fsbench.SCHEMA_VERSION and manifest["status"] == "complete"
    assert set(manifest["cases"].values()) == {"ok"} and len(manifest["cases"]) == 6
    assert (run / "scenario.yaml").read_text().startswith("name: e2e")

    hosts = pd.read_csv(run / "hosts.csv")
    assert hosts.loc[0, "fio_version"].startswith("fio-3") and hosts.loc[0, "memory_bytes"] > 0
    assert {"kernel", "cpu_model", "os", "mount_fast", "mount_slow"} <= set(hosts.columns)

    cases = pd.read_csv(run / "cases.csv")
    assert list(cases["param_numjobs"].dropna().astype(int)) == [1, 2, 1, 2]
    assert (cases["status"] == "ok").all()

    for cid in cases["case_id"]:
        raw = run / "raw" / cid / "local"
        assert {"command", "job.fio", "fio.json", "stdout", "stderr", "exit_status"} <= {p.name for p in raw.iterdir()}
        assert (raw / "exit_status").read_text().strip() == "0"
        assert f"directory={tmp_path}/targets/" in (raw / "job.fio").read_text()

    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    assert list(results.columns[:14]) == ["run_id", "case_id", "scenario", "target", "workload", "repetition",
                                          "tool", "host", "job", "operation", "metric", "stat", "value", "unit"]
    assert set(results["host"]) == {"local"} and set(results["tool"]) == {"fio", "monitor"}
    mon = results[results.tool == "monitor"]  # every case monitored: the host's CPU and memory
    assert set(mon.case_id) == set(cases.case_id) and {"cpu_usage", "memory_peak"} <= set(mon.metric)
    assert (run / "raw" / cases.case_id[0] / "local" / "monitor-local.csv").exists()
    bw = results[(results.metric == "bandwidth")]
    assert (bw["unit"] == "B/s").all() and (bw["value"] > 0).all()
    assert set(bw["operation"]) == {"write", "read"}  # directions only where data moved
    pq = pd.read_parquet(run / "results.parquet")
    assert len(pq) == len(results)

    df = fsbench.load_results(run)
    assert {"status", "param_numjobs"} <= set(df.columns) and len(df) == len(results)

    # test files and target folders are gone: teardown ran, nothing left behind
    assert list((tmp_path / "targets").iterdir()) == []

    html = (run / "report.html").read_text()
    assert "<h1>e2e</h1>" in html and 'href="results.csv"' in html and "<svg" in html
    import re

    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing to fetch (the browser test proves it)


def test_report_numbers_are_the_results(tmp_path, fio):
    scenario = make(tmp_path)
    run = Path(run_cli("run", str(scenario), "-o", str(tmp_path / "out"), check=True).stdout.splitlines()[0])
    results = pd.read_csv(run / "results.csv")
    out = tmp_path / "elsewhere" / "r.html"
    out.parent.mkdir()
    proc = run_cli("report", str(run), "-o", str(out), "--baseline", "slow", check=True)
    assert proc.stdout.strip() == str(out)
    html = out.read_text()
    import re

    shown = {float(v) for v in re.findall(r'data-value="([0-9.e+-]+)"', html)}
    want = results[(results.workload == "rand-read") & (results.metric == "iops")]["value"]
    assert all(any(abs(v - s) <= 1e-6 * v for s in shown) for v in want)
    assert "../" in html and "results.csv" in html  # the link still reaches the run directory


def test_failed_setup_then_resume_reruns_only_what_failed(tmp_path, fio):
    gate = tmp_path / "allow"
    scenario = make(tmp_path, gate=f"test -e {gate}")
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 1, proc.stderr
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    failed = cases[cases.status == "failed"]
    assert list(failed.target.unique()) == ["slow"] and len(failed) == 3
    assert all("target setup failed" in r and f"test -e {gate}" in r for r in failed.reason)
    assert not (tmp_path / "targets" / "slow").exists()  # teardown ran after the failed setup
    ok_before = {p: p.stat().st_mtime_ns for p in (run / "raw").glob("fast__*/local/fio.json")}
    assert len(ok_before) == 3

    gate.touch()
    proc = run_cli("run", str(scenario), "--resume", str(run))
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.splitlines()[0]) == run
    cases = pd.read_csv(run / "cases.csv")
    assert (cases.status == "ok").all()
    assert {p: p.stat().st_mtime_ns for p in ok_before} == ok_before  # ok cases were not rerun
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["attempts"] == 2 and manifest["status"] == "complete"
    assert len(pd.read_csv(run / "results.csv").case_id.unique()) == 6


def test_resume_refuses_a_changed_scenario(tmp_path, fio):
    scenario = make(tmp_path)
    run = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", check=True).stdout.splitlines()[0]
    scenario.write_text(scenario.read_text().replace("size: 2m", "size: 3m"))
    proc = run_cli("run", str(scenario), "--resume", run)
    assert proc.returncode == 3 and "differs from the one that made" in proc.stderr


def test_a_failing_tool_is_recorded_and_the_run_goes_on(tmp_path, fio):
    """A stand-in `fio` on PATH fails for one workload: the case is failed with its command and tail."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "fio"
    wrapper.write_text(f"#!/bin/sh\nif grep -q 'rw=randread' job.fio 2>/dev/null; then\n"
                       f"  echo 'fio: something broke' >&2; exit 3\nfi\nexec {fio} \"$@\"\n")
    wrapper.chmod(0o755)
    scenario = make(tmp_path)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"),
                   env={"PATH": f"{bindir}:{os.environ['PATH']}"})
    assert proc.returncode == 1
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    bad = cases[cases.workload == "rand-read"]
    assert (bad.status == "failed").all() and (bad.exit_status == 3).all()
    assert all("exit status 3" in r and "fio: something broke" in r and "fio --output-format=json" in r
               for r in bad.reason)
    assert (cases[cases.workload == "seq-write"].status == "ok").all()
    html = (run / "report.html").read_text()
    assert "Cases that did not succeed" in html and "something broke" in html


def test_case_timeout_stops_the_tool(tmp_path, fio):
    scenario = write_scenario(tmp_path, f"""\
        name: slow
        targets:
          t: {{path: {tmp_path}}}
        workloads:
          long:
            tool: fio
            timeout: 2s
            options: {{rw: read, size: 1m, time_based: true, runtime: 60}}
        """)
    start = time.monotonic()
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 1 and time.monotonic() - start < 30
    cases = pd.read_csv(Path(proc.stdout.splitlines()[0]) / "cases.csv")
    assert "timed out after 2s" in cases.reason[0]
    assert subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True).stdout == b""


def test_a_run_whose_every_case_failed_still_gets_its_report_with_every_view(tmp_path, fio):
    """Every case timed out: no result row at all. The run used to end in a traceback (KeyError
    'workload' in the best view) instead of a report saying what failed."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    scenario = write_scenario(tmp_path, f"""\
        name: allfailed
        monitor: {{enabled: false}}
        targets:
          a: {{path: {tmp_path}/a, baseline: true}}
          b: {{path: {tmp_path}/b}}
        workloads:
          w: {{tool: fio, timeout: 1s, options: {{rw: write, size: 1m, time_based: true, runtime: 30}}}}
        report:
          views:
            - {{view: best, workload: w, title: Compare}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    run = Path(proc.stdout.splitlines()[0])
    html = (run / "report.html").read_text()
    assert "Compare" in html and "Cases that did not succeed" in html and "timed out after 1s" in html


def test_ctrl_c_keeps_finished_cases_and_leaves_a_resumable_run(tmp_path, fio):
    scenario = write_scenario(tmp_path, f"""\
        name: interrupt
        targets:
          t:
            path: {tmp_path}/t
            setup: ["mkdir -p ${{target.path}}"]
            teardown: ["rmdir ${{target.path}}"]
        workloads:
          quick:
            tool: fio
            options: {{rw: write, size: 1m}}
          long:
            tool: fio
            options: {{rw: read, size: 1m, time_based: true, runtime: 3}}
        """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                             "--progress", "plain"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        started = list((tmp_path / "out").glob("*/raw/t__long__r1/local/job.fio"))
        if started:
            break
        time.sleep(0.05)
    assert started, "the long case never started"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    run = Path(out.splitlines()[0])
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert manifest["cases"] == {"t__quick__r1": "ok", "t__long__r1": "interrupted"}
    assert "--resume" in err
    assert not (tmp_path / "t").exists()  # teardown ran
    assert subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True).stdout == b""
    quick_json = run / "raw" / "t__quick__r1" / "local" / "fio.json"
    before = quick_json.stat().st_mtime_ns

    proc2 = run_cli("run", str(scenario), "--resume", str(run), check=True)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and set(manifest["cases"].values()) == {"ok"}
    assert quick_json.stat().st_mtime_ns == before
    assert list((run / "raw" / "_attempts").iterdir())[0].name == "t__long__r1.attempt-1"  # kept, not lost
    assert proc2.returncode == 0


@pytest.mark.parametrize("bad, exit_code", [("targets: {}\n", 3), ("workloads:\n  w: {tool: fio, options: {bs: x}}\n", 3)])
def test_invalid_scenario_runs_nothing(tmp_path, bad, exit_code):
    f = tmp_path / "s.yaml"
    f.write_text(f"name: bad\ntargets:\n  t: {{path: {tmp_path}/t}}\n" + bad)
    proc = run_cli("run", str(f), "-o", str(tmp_path / "out"))
    assert proc.returncode == exit_code and f"{f}:" in proc.stderr
    assert not (tmp_path / "out").exists()
