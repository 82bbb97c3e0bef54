"""The README's first scenario for real, at its smoke scale: every case runs, and the plan's total
estimate is within 2x of what the cases took (issue 10, item 6)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pandas as pd

from tests.conftest import require, run_cli
from tests.paths import REPO

QUICKSTART = REPO / "scenarios" / "quickstart.yaml"


def test_quickstart_runs_at_smoke_scale_within_twice_its_estimate(tmp_path):
    require("fio")
    assert os.geteuid() == 0, "the tmpfs target mounts itself: run as root (as in CI)"
    plan = run_cli("plan", str(QUICKSTART), "--set", "scale=smoke", check=True).stdout
    proc = run_cli("run", str(QUICKSTART), "--set", "scale=smoke", "-o", str(tmp_path), "--no-report",
                   "--progress", "plain", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert len(cases) == 2 * 4 * 2 and (cases.status == "ok").all(), cases[["case_id", "reason"]].to_string()
    # the plan's total (what `fsbench plan` printed) against the time the cases took
    planned, took = cases.estimate_s.sum(), cases.duration_s.sum()
    assert f"16 cases on 2 targets; estimated {planned / 60:.1f} min" in plan
    assert took / 2 <= planned <= took * 2, (planned, took)
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    bw = results[(results.metric == "bandwidth") & (results.value > 0)]
    assert set(bw.target) == {"tmpfs", "disk"} and set(bw.workload) == {"seq-write-1m", "seq-read-1m",
                                                                         "rand-read-4k", "rand-write-4k"}
    # the tmpfs is unmounted and both targets' folders are gone
    mounts = subprocess.run(["findmnt", "-n", "/tmp/fsbench-quickstart-tmpfs"], capture_output=True, text=True)
    assert mounts.stdout == ""
    assert not Path("/tmp/fsbench-quickstart-tmpfs").exists() and not Path("/var/tmp/fsbench-quickstart-disk").exists()
