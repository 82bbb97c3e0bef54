"""Comparison of real fio runs: a slower environment is worse, changed options are not comparable."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fsbench.compare import compare_runs, exit_code, to_html, to_markdown
from fsbench.report.markdown import write_markdown_report
from tests.conftest import require, run_cli, run_quietly, write_scenario

# time-based, so a run's bandwidth is measured over 300 ms rather than the 1-2 ms that 4 MiB of
# page-cache writes take (fio's runtime has millisecond resolution: at 2 ms that is ±50 %)
SCENARIO = """\
name: {name}
targets:
  disk:
    path: {root}/disk
    setup: ["mkdir -p ${{target.path}}"]
    teardown: ["rmdir ${{target.path}}"]
workloads:
  write:
    tool: fio
    description: page-cache writes
    options: {{rw: write, bs: 64k, size: 4m, ioengine: psync, time_based: true, runtime: 300ms{extra}}}
    repetitions: 3
{more}"""
# paced too: with one repetition a verdict is untested, so an unpaced 4 MiB page-cache read (1-2 ms,
# its speed whatever the machine does meanwhile) would be judged better or worse by chance
EXTRA_WORKLOAD = """\
  extra:
    tool: fio
    options: {rw: read, bs: 64k, size: 4m, rate: 20m}
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Four real runs: reference, the same scenario in a throttled environment, and twice with `rate` set."""
    fio = require("fio")
    tmp = tmp_path_factory.mktemp("compare")
    (tmp / "targets").mkdir()
    plain = write_scenario(tmp, SCENARIO.format(name="cmp", root=tmp / "targets", extra="", more=""), "plain.yaml")
    paced = write_scenario(tmp, SCENARIO.format(name="cmp-paced", root=tmp / "targets", extra=", rate: 20m",
                                                more=EXTRA_WORKLOAD), "paced.yaml")
    # a stand-in fio that throttles every job: the scenario (and so scenario.yaml) is unchanged,
    # only the environment is slower, as when a storage system regresses
    bindir = tmp / "bin"
    bindir.mkdir()
    (bindir / "fio").write_text(f'#!/bin/sh\nif [ "$1" = "--version" ]; then exec {fio} "$@"; fi\n'
                                f'exec {fio} "$@" --rate=10m\n')
    (bindir / "fio").chmod(0o755)
    return {
        "reference": run_quietly(tmp, plain),
        "throttled": run_quietly(tmp, plain, env={"PATH": f"{bindir}:{os.environ['PATH']}"}),
        "paced": run_quietly(tmp, paced),
        "paced-again": run_quietly(tmp, paced),
    }


def test_a_slower_environment_is_worse_significantly_and_fails_the_gate(runs):
    c = compare_runs(runs["reference"], runs["throttled"])
    f = c.frame
    bw = f[f["metric"] == "bandwidth"].iloc[0]
    assert bw["verdict"] == "worse" and bw["confidence"] == "significant", bw.to_dict()
    assert bw["n_a"] == 3 and bw["n_b"] == 3 and bw["p_value"] < c.alpha
    assert bw["mean_b"] == pytest.approx(10 * 2**20, rel=0.2) and bw["change"] < -0.5
    assert f[f["metric"] == "iops"]["verdict"].iloc[0] == "worse"
    assert set(f["verdict"]) <= {"worse", "better", "same"}  # same options, same fio version: comparable
    assert c.summary[c.runs[0].label]["worse"] >= 2
    assert exit_code(c, ["worse"]) == 1

    md = to_markdown(c)
    assert "❌ worse" in md and "disk · write" in md and f"`{runs['reference'].name}`" in md
    html = to_html(c)
    assert "✘ worse" in html and not re.search(r'(src|href)="(https?:)?//', html)


def test_changed_options_are_not_comparable_and_new_workloads_are_new(runs):
    c = compare_runs(runs["reference"], runs["paced"], metrics="all")  # every metric, not the primary four
    f = c.frame
    write = f[f["workload"] == "write"]
    assert len(write) >= 10 and set(write["verdict"]) == {"not comparable"}
    assert "options.rate: – → 20m" in write["detail"].iloc[0]
    extra = f[f["workload"] == "extra"]
    assert len(extra) >= 5 and set(extra["verdict"]) == {"new"}
    assert exit_code(c) == 0 and exit_code(c, ["not comparable"]) == 1
    md = to_markdown(c)
    assert "⚠ not comparable" in md and "options.rate: – → 20m" in md and "➕ new" in md


def test_the_same_scenario_twice_is_not_worse(runs):
    # throughput is paced by fio's `rate`, so it does not depend on what else this machine does;
    # latencies of microsecond page-cache writes do, and are compared but not gated on
    c = compare_runs(runs["paced"], runs["paced-again"], tolerances=["*:50%"],
                     metrics=["bandwidth", "iops", "io_bytes", "ops"])
    assert set(c.frame["verdict"]) == {"same"}, c.frame[["workload", "metric", "change", "p_value", "verdict"]]
    assert exit_code(c, ["worse"]) == 0
    paced = c.frame[(c.frame["workload"] == "write") & (c.frame["metric"] == "bandwidth")].iloc[0]
    assert paced["mean_a"] == pytest.approx(20 * 2**20, rel=0.1) and paced["confidence"] != "untested"


def test_several_runs_are_each_compared_with_the_first(runs):
    c = compare_runs(runs["reference"], runs["throttled"], runs["paced"], metrics="all")
    assert [r.label for r in c.runs] == [runs["throttled"].name, runs["paced"].name]
    assert c.summary[runs["throttled"].name]["worse"] >= 2
    assert c.summary[runs["paced"].name]["not comparable"] >= 10
    assert "## `" + runs["paced"].name in to_markdown(c)


def test_report_md_of_a_real_run(runs):
    md = write_markdown_report(runs["reference"]).read_text()
    assert md.startswith("# cmp\n") and "## write (fio)" in md and "3 cases: 3 ok" in md
    assert "| **fio version** | fio-3" in md


def test_compare_command_line_gate(runs, tmp_path):
    ref, slow = str(runs["reference"]), str(runs["throttled"])
    gate = run_cli("compare", ref, slow, "--tolerance", "bandwidth:5%", "--fail-on", "worse")
    assert gate.returncode == 1 and "❌ worse" in gate.stdout
    ok = run_cli("compare", ref, slow, "--metric", "runtime", "--fail-on", "worse")
    assert ok.returncode == 0, ok.stdout
    out = tmp_path / "cmp.html"
    html = run_cli("compare", ref, slow, "-o", str(out))
    assert html.returncode == 0 and "worse" in html.stderr and "✘ worse" in out.read_text()
    bad = run_cli("compare", ref, slow, "--tolerance", "bandwidth:five")
    assert bad.returncode == 2 and "bandwidth:five" in bad.stderr
    typo = run_cli("compare", ref, slow, "--fail-on", "worst")
    assert typo.returncode == 2 and "worse" in typo.stderr
    md = run_cli("report", ref, "--markdown", check=True).stdout.splitlines()
    assert md[1].endswith("report.md") and Path(md[1]).read_text().startswith("# ")
