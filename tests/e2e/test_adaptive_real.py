"""Adaptive repetitions for real: fio on a tmpfs folder and a disk folder, a CPU hog started by the
scenario as a service of the noisy target (and stopped by fsbench), the report with intervals."""

from __future__ import annotations

import csv
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.conftest import require, run_cli, write_scenario

# a hog that is busy for a random part of each 0.8 s: the disk target's service, which fsbench starts and
# stops. Two of them and the noisy fio job are pinned to the first CPU, so they contend on any machine
# (unpinned, a machine with spare cores let fio run beside them undisturbed). The noisy job's spread comes
# from its own reads now, their random arrivals and sizes (the workload below says why)
HOG = """\
while :; do
  t=$(( $(od -An -N1 -tu1 /dev/urandom) % 8 ))
  end=$(( $(date +%s%N) + t * 100000000 ))
  while [ "$(date +%s%N)" -lt "$end" ]; do :; done
  sleep 0.$(( 8 - t ))
done
"""


@pytest.fixture
def tmpfs_dir(tmp_path):
    """A tmpfs of its own, mounted for the test and unmounted afterwards."""
    path = tmp_path / "tmpfs"
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96m", "fsbench-adaptive", str(path)], check=True)
    yield path
    subprocess.run(["umount", str(path)], check=True)


def _hogs(marker: str) -> list[str]:
    out = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmd:
            out.append(cmd)
    return out


def test_adaptive_repetitions_stop_early_when_stable_and_late_when_noisy(tmp_path, tmpfs_dir):
    require("fio")
    require("taskset")
    marker = f"hog-{uuid.uuid4().hex[:8]}.sh"
    hog = "\n".join(" " * 16 + line for line in HOG.splitlines())
    scenario = write_scenario(tmp_path, f"""\
        name: adaptive
        monitor: {{enabled: false}}
        settings:
          scratch: {tmp_path}/scratch
          # max 4: one repetition past the minimum tells "went on" from "stopped" (6 ran 4 more busy cases)
          repetitions: {{min: 3, max: 4, target_ci: 5%, budget: 2m}}
        services:
          hog:
            files:
              {marker}: |
{hog}
            ready: "true"
            start: ["taskset -c 0 sh ${{service.dir}}/{marker} > /dev/null 2>&1 &",
                    "taskset -c 0 sh ${{service.dir}}/{marker} > /dev/null 2>&1 &"]
        targets:
          tmpfs: {{path: {tmpfs_dir}}}
          disk: {{path: {tmp_path}/disk, services: [hog], setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          paced:     # fio holds it at 20 MiB/s: stable whatever the machine does
            tool: fio
            options: {{rw: write, bs: 64k, size: 64m, rate: 20m, runtime: 1, time_based: 1}}
          busy:      # noisy by construction: reads of random sizes, arriving as a Poisson process of 4 a second
            tool: fio
            targets: [disk]
            # Poisson(8) reads of 4 KiB converged at 3 twice in full suites (sessions 25 and 27): three runs with
            # the same count of reads (about 1 % with integer counts) are three equal bandwidths. Sizes drawn
            # from 4 to 256 KiB make a second's bytes spread by about 57 %, a continuous figure: three runs
            # within the 5 % interval (their spread under 2 % of their mean) is about a 0.1 % chance
            drop_caches: false
            options: {{rw: randread, bsrange: 4k-256k, size: 16m, runtime: 1, time_based: 1, cpus_allowed: 0,
                       rate_iops: 4, rate_process: poisson, randrepeat: 0}}
        """)
    plan = run_cli("plan", str(scenario), check=True)
    assert "adaptive repetitions" in plan.stdout and "9 to 12 cases" in plan.stdout
    out = tmp_path / "out"
    run_cli("run", str(scenario), "-o", str(out), check=True, timeout=240)
    run = next(out.iterdir())
    stops = {(r["target"], r["workload"]): r for r in csv.DictReader((run / "repetitions.csv").open())}
    # the paced cases stop at the minimum; the noisy one goes on until max (or its budget)
    assert stops[("tmpfs", "paced")]["stop"] == "converged" and stops[("tmpfs", "paced")]["repetitions"] == "3"
    assert stops[("disk", "paced")]["stop"] == "converged" and stops[("disk", "paced")]["repetitions"] == "3"
    busy = stops[("disk", "busy")]
    # it went on past the minimum; at the fourth (the max) its interval may or may not have narrowed enough,
    # so its stop then reads `converged` or `max` (seen once: ±4.3 % after 4, within the 5 %)
    assert int(busy["repetitions"]) > 3 and busy["stop"] in ("max", "budget", "converged"), busy
    cases = list(csv.DictReader((run / "cases.csv").open()))
    skipped = [c for c in cases if c["status"] == "skipped"]
    assert len(skipped) == 2 and all(c["reason"].startswith("not needed") for c in skipped)
    assert not _hogs(marker)  # fsbench stopped the hog with its service
    run_cli("report", str(run), "--markdown", check=True)
    md = (run / "report.md").read_text()
    assert "95% interval" in md and "±" in md
    assert "not needed" not in md  # not listed as cases that did not succeed
    # the same run compared with itself: its conclusions hold, none contradicted
    cmp = run_cli("compare", str(run), str(run), check=False)
    assert "Conclusions of the reference contradicted here: 0" in cmp.stdout, cmp.stdout + cmp.stderr
