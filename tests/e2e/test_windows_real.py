"""Issue 21: every number proves what it measures, with real fio: client CPU from the process's own
accounting over a short case, dense memory samples (or a flag), no warning about another target's
process, case warnings (a real fio output whose bandwidth became Infinity) in the report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from tests.conftest import run_cli, write_scenario


def _run(proc) -> Path:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.splitlines()[0])


def test_a_short_fio_case_has_its_cpu_accounted_and_no_other_targets_process_is_expected(tmp_path, fio):
    """fio writes 256 MiB in well under a second: its CPU comes from utime+stime over the case (beside fio's
    own usr+sys), its memory peak has 10 samples or says it has not, and only target a expects a's client."""
    scenario = write_scenario(tmp_path, f"""\
        name: windows
        monitor: {{interval: 1s, processes: [fio, fsbnope-a]}}
        targets:
          a: {{path: {tmp_path}/a, client_process: fsbnope-a, setup: ["mkdir -p ${{target.path}}"]}}
          b: {{path: {tmp_path}/b, setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, bs: 4k, size: 256m, ioengine: psync}}}}
        """)
    run = _run(run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "none", "--no-report"))
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("target")
    assert (cases["status"] == "ok").all(), cases
    # a's own client was never there: said; b's case does not expect a's client (before: every case warned)
    assert "'fsbnope-a' was never seen" in cases.loc["a", "warnings"]
    assert "fsbnope-a" not in cases.loc["b", "warnings"], cases.loc["b", "warnings"]
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    for target in ("a", "b"):
        mon = results[(results.tool == "monitor") & (results.job == "fio") & (results.target == target)]
        cpu = float(mon[(mon.metric == "cpu_usage") & (mon.stat == "mean")]["value"].iloc[0])
        job = json.loads((run / "raw" / f"{target}__w__r1" / "local" / "fio.json").read_text())["jobs"][0]
        own = job["usr_cpu"] + job["sys_cpu"]  # fio's own accounting of its job, % of its runtime
        assert own > 5 and own / 5 < cpu < own * 5 + 50, (cpu, own)  # before: 0.0 (1 s samples missed the job)
        text = (run / "raw" / f"{target}__w__r1" / "local" / "monitor.txt").read_text()
        seen = sum(1 for block in text.split("\n@ ")[1:] if "\nfio\n" in block.replace(" fio\n", "\nfio\n"))
        assert text.count("\n. ") >= 4  # dense first samples: 0.1 s apart, not 1 s
        peak = mon[mon.metric == "memory_peak"].iloc[0]
        assert seen >= 10 or "fewer than 10" in peak["warnings"], (seen, peak.to_dict())


def test_a_case_whose_bandwidth_was_infinity_says_so_in_the_report(tmp_path, fio):
    """Real fio, its JSON's bandwidths then made Infinity: the case is ok, its rows left out, and the
    report shows the warning near the top and in the empty view, not only "no results of this shape"."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "fio"
    wrapper.write_text(f"#!/bin/sh\n{fio} \"$@\"; rc=$?\n"
                       "[ -f fio.json ] && sed -i 's/\"bw_bytes\" : [0-9]*/\"bw_bytes\" : Infinity/' fio.json\n"
                       "exit $rc\n")
    wrapper.chmod(0o755)
    scenario = write_scenario(tmp_path, f"""\
        name: infinity
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, bs: 64k, size: 4m}}}}
        report:
          views:
            - {{view: table, workload: w, title: Write bandwidth, metrics: [bandwidth]}}
        """)
    run = _run(run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "none",
                       env={"PATH": f"{bindir}:{os.environ['PATH']}"}))
    assert "Infinity" in (run / "raw" / "t__w__r1" / "local" / "fio.json").read_text()  # the real output, edited
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert cases["status"].tolist() == ["ok"] and "left out" in cases["warnings"][0]
    html = (run / "report.html").read_text()
    assert 'id="warnings"' in html and "1 ok with warnings" in html
    assert "bandwidth: value inf is not a finite number; left out" in html
    # the empty view says which case lost its rows and why
    assert "cases that succeeded warned (see Warnings), t__w__r1" in html
