"""`fsbench compare --fail-on worse` as a regression gate on real fio runs: a rerun passes, a 20 % slowdown of
one workload fails it, naming exactly that workload's slowed measurements (issue 34)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fsbench.compare import compare_runs
from tests.conftest import require, run_cli, run_quietly, write_scenario

# throughputs paced by fio's rate (what they are does not depend on the machine's neighbours); the
# latencies are not paced and vary from run to run: the floors and the false-discovery rate must hold them
SCENARIO = """\
name: gate
settings: {{order: rounds}}
targets:
  disk: {{path: "{root}/disk", setup: ["mkdir -p ${{target.path}}"], teardown: ["rmdir ${{target.path}}"]}}
workloads:
  write:
    tool: fio
    options: {{rw: write, bs: 64k, size: 8m, ioengine: psync, time_based: true, runtime: 700ms, rate: 40m}}
    repetitions: 3
  read:
    tool: fio
    options: {{rw: read, bs: 64k, size: 8m, ioengine: psync, time_based: true, runtime: 700ms, rate: 60m}}
    repetitions: 3
  randwrite:
    tool: fio
    options: {{rw: randwrite, bs: 4k, size: 8m, ioengine: psync, time_based: true, runtime: 700ms,
               rate_iops: 2000}}
    repetitions: 3
"""
# the regression, out of the scenario's sight (its scenario.yaml is the rerun's): a stand-in fio that runs
# the `write` workload's job at 32 MiB/s instead of 40, 20 % slower, and every other job as it is
SLOWER_WRITES = """\
#!/bin/sh
if [ "$1" = "--version" ]; then exec {fio} "$@"; fi
if grep -q '^\\[write\\]$' job.fio; then
  sed 's/^rate=.*/rate=32m/' job.fio > slowed.fio
  for a; do shift; [ "$a" = job.fio ] && a=slowed.fio; set -- "$@" "$a"; done
fi
exec {fio} "$@"
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Three real runs of one scenario: the reference, its rerun, and one with the writes slowed by 20 %."""
    fio = require("fio")
    tmp = tmp_path_factory.mktemp("gate")
    (tmp / "targets").mkdir()
    scenario = write_scenario(tmp, SCENARIO.format(root=tmp / "targets"), "gate.yaml")
    bindir = tmp / "bin"
    bindir.mkdir()
    (bindir / "fio").write_text(SLOWER_WRITES.format(fio=fio))
    (bindir / "fio").chmod(0o755)
    return {"reference": run_quietly(tmp, scenario), "rerun": run_quietly(tmp, scenario),
            "slowed": run_quietly(tmp, scenario, env={"PATH": f"{bindir}:{os.environ['PATH']}"})}


def test_a_rerun_passes_the_gate(runs):
    gate = run_cli("compare", str(runs["reference"]), str(runs["rerun"]), "--fail-on", "worse")
    assert gate.returncode == 0, gate.stdout
    assert "false-discovery rate 5 %" in gate.stdout and "12 of 12 measurements tested" in gate.stdout
    c = compare_runs(runs["reference"], runs["rerun"])
    assert set(c.frame["metric"]) == {"bandwidth", "iops", "clat_mean", "clat_p99"}  # fio's primary metrics
    assert not (c.frame["verdict"] == "worse").any(), c.frame[["workload", "metric", "change", "q_value"]]
    assert c.frame["q_value"].notna().all()


def test_a_slowdown_of_one_workload_fails_the_gate_naming_its_measurements(runs):
    gate = run_cli("compare", str(runs["reference"]), str(runs["slowed"]), "--fail-on", "worse")
    assert gate.returncode == 1, gate.stdout
    c = compare_runs(runs["reference"], runs["slowed"])
    worse = c.frame[c.frame["verdict"] == "worse"]
    assert sorted(zip(worse["workload"], worse["metric"])) == [("write", "bandwidth"), ("write", "iops")], \
        c.frame[["workload", "metric", "change", "p_value", "q_value", "verdict"]]
    assert (worse["change"].between(-0.25, -0.15)).all() and (worse["q_value"] < 0.05).all()
    assert set(worse["sure"]) <= {"very sure", "sure", "fairly sure"}
    assert set(c.frame["verdict"]) <= {"worse", "same"}
    changes = gate.stdout.split("**Changes outside the tolerance band:**", 1)[1].split("**", 1)[0]
    assert changes.count("❌ worse") == 2 and "disk · write" in changes and "disk · read" not in changes


def test_every_metric_on_request_still_holds_the_rerun(runs):
    c = compare_runs(runs["reference"], runs["rerun"], metrics="all")
    assert len(c.frame) > 3 * len(compare_runs(runs["reference"], runs["rerun"]).frame)
    # fio's own figures, every percentile included, hold the rerun; the client's CPU and memory beside them are
    # the machine's state as much as fio's (on a loaded host the CPU share of one job moved 52 % between runs)
    worse = c.rows(["worse"])
    fio_worse = worse[(worse.tool == "fio") & ~worse.metric.isin(["cpu_usage", "memory_peak"])]
    assert fio_worse.empty, fio_worse[["workload", "metric", "change", "q_value"]]


def test_the_history_of_the_three_runs_puts_the_change_at_the_slowed_run(runs):
    order = [str(runs[k]) for k in ("reference", "rerun", "slowed")]
    proc = run_cli("compare", "--history", *order, "--fail-on", "worse")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    changes = [line for line in proc.stdout.splitlines() if line.endswith("| worse |")]
    assert len(changes) == 2 and all("disk · write |" in x and f"`{runs['slowed'].name}`" in x for x in changes)
    assert {x.split(" | ")[2] for x in changes} == {"bandwidth", "iops"}
    steady = run_cli("compare", "--history", *order[:2], order[0], "--fail-on", "worse")
    assert steady.returncode == 0 and "No change of level." in steady.stdout, steady.stdout
