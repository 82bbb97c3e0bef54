"""Two runs of one scenario started in the same second, into two folders, on one machine: each keeps its own
run id, so neither stops the other's processes (a case's strays are stopped by run id and case id)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from tests.conftest import require, write_scenario
from tests.paths import REPO


def test_two_runs_started_in_the_same_second_keep_their_own_processes(tmp_path):
    require("fio")
    scenario = write_scenario(tmp_path, """\
        name: same-second
        monitor: {enabled: false}
        variables: {dir: /nonexistent, secs: 1}
        targets:
          t: {path: "${dir}", setup: ["mkdir -p ${target.path}"]}
        workloads:
          w:
            tool: fio
            options: {rw: write, bs: 64k, size: 4m, runtime: "${secs}", time_based: 1}
        """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    time.sleep(1 - time.time() % 1)  # both start at the top of a second: they pick their run ids in it
    procs = [subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / name),
                               "--no-report", "--set", f"dir={tmp_path / name / 'target'}", "--set", f"secs={secs}"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name, secs in (("short", 1), ("long", 4))]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    runs = [Path(out.splitlines()[0]) for out, _ in outs]
    assert runs[0].name != runs[1].name
    # the long run's fio ran its whole time: the short run's end did not stop it
    long_case = pd.read_csv(runs[1] / "cases.csv")
    assert long_case.status.tolist() == ["ok"] and long_case.tool_wall_s.iloc[0] >= 3.5, long_case.to_string()
