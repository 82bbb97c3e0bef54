"""vdbench is bring-your-own (Oracle's licence): a stand-in proves the parameter file, the launch and the collection."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from tests.conftest import run_cli, write_scenario
from tests.paths import FIXTURES

OUTPUT = FIXTURES / "public" / "vdbench" / "masakioui-vdb_nvme" / "50407_fs_1host_read"


def test_stand_in_vdbench_run(tmp_path, fio):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "vdbench").write_text(
        "#!/bin/sh\n"
        '[ "$1" = -f ] && [ "$3" = -o ] || { echo "usage: vdbench -f parmfile -o dir" >&2; exit 2; }\n'
        # each call's parameter file, numbered: the prepare step's format pass, then the measured run
        f'n=$(ls {tmp_path}/seen-parmfile.* 2>/dev/null | wc -l); cp "$2" {tmp_path}/seen-parmfile.$n\n'
        f'cp -r {OUTPUT} "$4"\n')
    (bindir / "vdbench").chmod(0o755)
    scenario = write_scenario(tmp_path, f"""\
        name: vdbench-plumbing
        targets:
          t: {{path: {tmp_path}}}
        workloads:
          read-small:
            tool: vdbench
            jobs:
              fsd1: {{depth: 2, width: 10, files: 100, size: 128k, shared: true}}
              fwd1: {{fsd: fsd1, operation: read, xfersize: 128k, fileio: random, fileselect: random, threads: 8}}
              rd1: {{fwd: fwd1, fwdrate: max, format: restart, elapsed: 60, interval: 1}}
        """)
    plan = run_cli("plan", str(scenario), check=True)
    assert "65s" in plan.stdout  # elapsed plus start-up
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report",
                   env={"PATH": f"{bindir}:{os.environ['PATH']}"}, check=True)
    run = Path(proc.stdout.splitlines()[0])
    prep, parm = ((tmp_path / f"seen-parmfile.{i}").read_text().splitlines() for i in (0, 1))
    # the format lays the files out first, untimed; the measured run then finds them (format=no)
    assert "(prepare: the format pass of rd1, not measured)" in prep[0]
    assert prep[1:] == [parm[1], parm[2], "rd=rd1,fwd=fwd1,interval=1,fwdrate=max,format=(restart,only)"]
    assert parm[1].startswith(f"fsd=fsd1,depth=2,width=10,files=100,size=128k,shared=yes,anchor={tmp_path}/")
    assert parm[2] == "fwd=fwd1,fsd=fsd1,operation=read,xfersize=128k,fileio=random,fileselect=random,threads=8"
    assert parm[3] == "rd=rd1,fwd=fwd1,fwdrate=max,format=no,elapsed=60,interval=1"
    assert not (tmp_path / "seen-parmfile.2").exists()
    raw = run / "raw" / "t__read-small__r1" / "local"
    assert (raw / "output" / "flatfile.html").exists() and (raw / "parmfile").exists()
    # the format pass's own output is kept apart; the cache was dropped between the two, with proof
    assert (raw / "prepare" / "parmfile").read_text().splitlines() == prep
    assert (raw / "prepare" / "output" / "flatfile.html").exists()
    assert json.loads((raw / "drop_caches.json").read_text())["ok"]
    assert (raw / "parmfile").read_text().splitlines() == parm
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    results = results[results.tool != "monitor"]
    assert set(results.tool) == {"vdbench"} and "rate" in set(results.metric)
    assert (results["stat"] == "mean").all()


def test_vdbench_needs_a_run_definition(tmp_path):
    scenario = write_scenario(tmp_path, f"""\
        name: vdb
        targets: {{t: {{path: {tmp_path}}}}}
        workloads:
          w: {{tool: vdbench, jobs: {{fsd1: {{files: 10}}, wrong: {{x: 1}}}}}}
        """)
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 3
    assert "needs a run definition" in proc.stderr and "'wrong' is not a vdbench definition name" in proc.stderr


FORMATTED = FIXTURES / "public" / "vdbench" / "masakioui-vdb" / "50407_fs_8host_format_only"


def test_a_measured_format_pass_gives_the_file_creation_rate(tmp_path):
    """Seed 003's FILE_CREATES (498 files/s): with format_pass: measured, vdbench formats inside the one
    measured run (no untimed prepare before it) and the format's creations are results of the case."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "vdbench").write_text(
        "#!/bin/sh\n"
        f'n=$(ls {tmp_path}/seen-parmfile.* 2>/dev/null | wc -l); cp "$2" {tmp_path}/seen-parmfile.$n\n'
        f'cp -r {FORMATTED} "$4"\n')  # genuine output of a format pass: format_for_rd1's creates
    (bindir / "vdbench").chmod(0o755)
    scenario = write_scenario(tmp_path, f"""\
        name: vdbench-format-measured
        targets:
          t: {{path: {tmp_path}}}
        workloads:
          small-files:
            tool: vdbench
            options: {{format_pass: measured}}
            jobs:
              fsd1: {{depth: 1, width: 10, files: 30, size: 128k, shared: true}}
              fwd1: {{fsd: fsd1, operation: read, xfersize: 128k, fileio: random, fileselect: random, threads: 4}}
              rd1: {{fwd: fwd1, fwdrate: max, format: true, elapsed: 10, interval: 1}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report",
                   env={"PATH": f"{bindir}:{os.environ['PATH']}"}, check=True)
    run = Path(proc.stdout.splitlines()[0])
    # one vdbench run, the guide's own rd line: format=yes inside it, no format_pass in the file
    parm = (tmp_path / "seen-parmfile.0").read_text().splitlines()
    assert not (tmp_path / "seen-parmfile.1").exists()
    assert parm[-1] == "rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=10,interval=1"
    assert "(prepare" not in parm[0] and not any(line.startswith("format_pass") for line in parm)
    raw = run / "raw" / "t__small-files__r1" / "local"
    assert not (raw / "prepare").exists()
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    creates = results[(results.tool == "vdbench") & (results.operation == "create") & (results.metric == "rate")]
    assert set(creates.job) == {"format_for_rd1"} and (creates.value > 0).all()  # in total and per host


def test_format_pass_takes_prepare_or_measured(tmp_path):
    scenario = write_scenario(tmp_path, f"""\
        name: vdb
        targets: {{t: {{path: {tmp_path}}}}}
        workloads:
          w: {{tool: vdbench, options: {{format_pass: timed}}, jobs: {{fsd1: {{files: 10}}, rd1: {{fsd: fsd1}}}}}}
        """)
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 3 and "format_pass=timed: expected prepare or measured" in proc.stderr
