"""The generic `command` collector on real cases: vmstat and a shell loop run beside each fio case, their
output is kept as printed, they stop when the case's tool ends, and nothing of them is left running."""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

import pandas as pd

from tests.conftest import require, run_cli, write_scenario


def _processes_of(run_id: str) -> list[str]:
    """Command lines of the processes that carry this run's FSBENCH_RUN marker in their environment."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"FSBENCH_RUN={run_id}".encode() in environ:
            found.append(f"{pid}: {cmdline}")
    return found


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def test_command_collectors_run_beside_each_case_and_stop_with_it(tmp_path, fio):
    vmstat = require("vmstat")
    scenario = write_scenario(tmp_path, f"""\
        name: collect
        settings: {{repetitions: 2}}
        targets:
          t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, bs: 4k, size: 1m, time_based: true, runtime: 3}}}}
        collectors:
          vm: {{kind: command, command: {vmstat} 1}}
          ticks:
            kind: command
            command: 'echo "case ${{case.id}} on ${{host.name}}"; while :; do date +%s.%N; sleep 0.2; done'
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("case_id")
    assert list(cases.index) == ["t__w__r1", "t__w__r2"] and (cases.status == "ok").all()
    spans = []
    for case_id, case in cases.iterrows():
        raw = run / "raw" / str(case_id) / "local"
        assert (raw / "collector-vm.command").read_text().strip().endswith(f"{vmstat} 1")
        vm = (raw / "collector-vm.txt").read_text().splitlines()
        assert vm[0].split()[0] == "procs" and len([v for v in vm if v.split()[0].isdigit()]) >= 2, vm
        lines = (raw / "collector-ticks.txt").read_text().splitlines()
        assert lines[0] == f"case {case_id} on local"
        ticks = [float(t) for t in lines[1:]]
        # from before the tool's 3 s to its end, within the case's own start and end
        assert ticks[-1] - ticks[0] >= 2.5 and len(ticks) >= 10
        assert _epoch(case.started) - 1 <= ticks[0] and ticks[-1] < _epoch(case.ended) + 1  # whole seconds
        assert (raw / "collector-ticks.stderr").read_text() == ""
        spans.append((ticks[0], ticks[-1]))
    assert spans[0][1] < spans[1][0]  # the first case's collector stopped before the second case began
    sizes = {p: p.stat().st_size for p in run.glob("raw/*/local/collector-*.txt")}
    time.sleep(1.5)
    assert {p: p.stat().st_size for p in sizes} == sizes  # nothing writes to them any more
    assert _processes_of(run.name) == []
