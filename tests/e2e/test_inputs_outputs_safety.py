"""Inputs and outputs fsbench did not make: FIFOs and devices as input files, files edited between a run
and its --resume, spreadsheet formulas in names, ingest's left-out rows, damaged tables, a full disk."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import run_cli, write_scenario

# -- item 10: every input file is a regular file, read bounded -------------------------------------------

_TARGET = "targets: {{t: {{path: {tmp}/t}}}}"
_WORKLOAD = "workloads: {w: {tool: fio, options: {rw: read, size: 1m}}}"


def _as_scenario(tmp: Path, special: Path) -> tuple[list[str], str]:
    return ["validate", str(special)], f"{special}: <top>: cannot read the scenario: not a regular file"


def _as_inventory_flag(tmp: Path, special: Path) -> tuple[list[str], str]:
    scenario = write_scenario(tmp, f"name: inv\n{_TARGET.format(tmp=tmp)}\n{_WORKLOAD}\n")
    return (["validate", str(scenario), "--inventory", str(special)],
            f"{special}: --inventory: cannot read the inventory: not a regular file")


def _as_inventory_key(tmp: Path, special: Path) -> tuple[list[str], str]:
    scenario = write_scenario(tmp, f"name: inv\ninventory: {special}\n{_TARGET.format(tmp=tmp)}\n{_WORKLOAD}\n")
    return ["validate", str(scenario)], f"scenario.yaml:2: inventory: cannot read the inventory {special}: not a regular"


def _as_job_file(tmp: Path, special: Path) -> tuple[list[str], str]:
    scenario = write_scenario(tmp, f"name: jf\n{_TARGET.format(tmp=tmp)}\nworkloads: {{w: {{tool: fio, "
                                   f"job_file: {special}}}}}\n")
    return (["validate", str(scenario)],
            f"scenario.yaml:3: workloads.w.job_file: cannot read job file {special}: not a regular file")


def _as_include(tmp: Path, special: Path) -> tuple[list[str], str]:
    (tmp / "job.fio").write_text(f"[global]\ninclude {special}\n[j]\nrw=read\nsize=1m\n")
    scenario = write_scenario(tmp, f"name: inc\n{_TARGET.format(tmp=tmp)}\nworkloads: {{w: {{tool: fio, "
                                   "job_file: job.fio}}\n")
    return ["validate", str(scenario)], f"job.fio:2: workloads.w.job_file: include {special}: cannot read {special}: " \
                                        "not a regular file"


def _as_secret_file(tmp: Path, special: Path) -> tuple[list[str], str]:
    scenario = write_scenario(tmp, f"""\
        name: sec
        secrets: {{k: {{file: {special}}}}}
        targets: {{t: {{path: {tmp}/t, setup: ["echo ${{secrets.k}}"]}}}}
        {_WORKLOAD}
        """)
    return ["run", str(scenario), "-o", str(tmp / "out")], f"secret k: {special} is not a regular file"


ROLES = {"scenario": _as_scenario, "--inventory": _as_inventory_flag, "inventory key": _as_inventory_key,
         "job file": _as_job_file, "include": _as_include, "secret file": _as_secret_file}
#: what the CLI answers: an invalid scenario (3); a secret that cannot be had stops the preflight (4)
EXIT = {"secret file": 4}


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
@pytest.mark.parametrize("role", list(ROLES))
def test_a_fifo_or_a_device_as_an_input_file_is_refused_at_once(tmp_path, role, special):
    if special == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)  # no writer ever: opening it for reading would wait for ever
    else:
        path = Path(special)
    args, message = ROLES[role](tmp_path, path)
    start = time.monotonic()
    proc = run_cli(*args, timeout=30)
    elapsed = time.monotonic() - start
    assert proc.returncode == EXIT.get(role, 3) and message in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert elapsed < 3, f"{elapsed:.1f} s (the CLI's start-up included)"
    assert not (tmp_path / "out").exists()  # nothing ran


# -- item 11: a resume runs the same workloads as the run it continues --------------------------------------


def test_a_resume_after_a_job_file_or_an_include_changed_is_refused(tmp_path, fio):
    marker = tmp_path / "second-target-ready"
    (tmp_path / "common.fio").write_text("[global]\nsize=1m\n")
    job = tmp_path / "job.fio"
    job.write_text("include common.fio\n[w]\nrw=write\nbs=64k\n")
    scenario = write_scenario(tmp_path, f"""\
        name: edits
        monitor: {{enabled: false}}
        targets:
          a: {{path: {tmp_path}/a, setup: ["mkdir -p ${{target.path}}"]}}
          b: {{path: {tmp_path}/b, setup: ["test -e {marker}", "mkdir -p ${{target.path}}"]}}
        workloads:
          w: {{tool: fio, job_file: job.fio}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 1, proc.stderr[-2000:]  # target b's setup failed: its case waits for a resume
    run = Path(proc.stdout.splitlines()[0])
    assert set(json.loads((run / "manifest.json").read_text())["inputs"]) == {"job.fio", "common.fio"}
    marker.touch()

    job.write_text("include common.fio\n[w]\nrw=randread\nbs=4k\n")  # the same workload name, another job
    again = run_cli("run", str(scenario), "--resume", str(run), "--no-report")
    assert again.returncode == 3 and f"{job}: <top>: changed since {run} started" in again.stderr, again.stderr
    assert "restore the file as it was to resume, or start a new run" in again.stderr
    job.write_text("include common.fio\n[w]\nrw=write\nbs=64k\n")  # restored
    (tmp_path / "common.fio").write_text("[global]\nsize=2m\n")
    again = run_cli("run", str(scenario), "--resume", str(run), "--no-report")
    assert again.returncode == 3 and f"{tmp_path / 'common.fio'}: <top>: changed since" in again.stderr
    assert json.loads((run / "manifest.json").read_text())["attempts"] == 1  # neither refusal touched the run

    (tmp_path / "common.fio").write_text("[global]\nsize=1m\n")
    again = run_cli("run", str(scenario), "--resume", str(run), "--no-report")
    assert again.returncode == 0, again.stderr[-2000:]
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert list(cases["status"]) == ["ok", "ok"]
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    assert set(results.loc[results["metric"] == "bandwidth", "operation"]) == {"write"}  # no randread mixed in
