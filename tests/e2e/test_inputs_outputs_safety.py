"""Inputs and outputs fsbench did not make: FIFOs and devices as input files, files edited between a run
and its --resume, spreadsheet formulas in names, ingest's left-out rows, damaged tables, a full disk."""

from __future__ import annotations

import json
import os
import re
import subprocess
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
    # a read of the FIFO would wait for ever (the 30 s timeout); a refusal takes the CLI's start-up, which the
    # suite's own load stretched to 3.6 s once: the bound tells a wait from a refusal, not a fast CLI
    assert elapsed < 15, f"{elapsed:.1f} s (the CLI's start-up included)"
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


# -- minor: a disk full before the reserve could be set aside --------------------------------------------


def test_a_disk_too_full_for_the_reserve_still_records_how_the_run_ended(tmp_path, fio, small_disk):
    scenario = write_scenario(tmp_path, f"""\
        name: tight
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          v: {{tool: fio, options: {{rw: write, bs: 4k, size: 32m, write_lat_log: lat}}}}
        """)
    filler = small_disk / "filler"  # 128 KiB left: the run directory fits, its 256 KiB reserve does not
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k", "count=46"], capture_output=True, check=True)
    proc = run_cli("run", str(scenario), "-o", str(small_disk), "--no-report")
    assert proc.returncode == 5 and "is full" in proc.stderr, proc.stderr[-2000:]
    run = Path(proc.stdout.splitlines()[0])
    assert not (run / ".reserve").exists()  # there was no room for it
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "out-of-space" and manifest["ended"]
    filler.unlink()
    again = run_cli("run", str(scenario), "--resume", str(run), "--no-report")
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"


# -- item 12: no cell a spreadsheet would run -------------------------------------------------------------


def test_formula_like_names_are_guarded_in_the_csv_files_and_read_back_as_they_are(tmp_path, fio):
    from fsbench.compare.runs import load_run
    from fsbench.run.store import load_results

    (tmp_path / "job.fio").write_text("[global]\nrw=write\nsize=256k\nbs=64k\n[=2+5]\n")
    scenario = write_scenario(tmp_path, f"""\
        name: formulas
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w:
            tool: fio
            job_file: job.fio
            sweep: {{product: {{description: ["@SUM(1)", "-1"]}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = Path(proc.stdout.splitlines()[0])
    results_text, cases_text = (run / "results.csv").read_text(), (run / "cases.csv").read_text()
    assert ",'=2+5," in results_text and ",=2+5," not in results_text
    assert ",'@SUM(1)" in cases_text and ",@SUM(1)" not in cases_text
    assert ",-1" in cases_text  # a number written as text stays a number for the spreadsheet and for pandas
    assert set(pd.read_parquet(run / "results.parquet")["job"]) == {"=2+5"}  # parquet keeps the raw names

    (run / "results.parquet").unlink()  # the readers of results.csv strip the guard
    results = load_results(run)
    assert set(results["job"]) == {"=2+5"}
    assert set(results["param_description"].astype(str)) == {"@SUM(1)", "-1"}
    compared = load_run(run)
    assert set(compared.values["job"]) == {"=2+5"}
    assert set(compared.cases["param_description"]) == {"@SUM(1)", "-1"}
    report = run_cli("report", str(run))
    assert report.returncode == 0, report.stderr[-2000:]
    html = (run / "report.html").read_text()
    assert "@SUM(1)" in html and "&#39;@SUM(1)" not in html and "'@SUM(1)" not in html


# -- minor: ingest says what it left out; a damaged value is named, not a traceback -------------------------


def test_ingest_says_which_rows_it_left_out_and_guards_its_csv(tmp_path, fio):
    good = tmp_path / "good.json"
    subprocess.run([fio, "--name==HYPERLINK(1)", f"--filename={tmp_path / 'data'}", "--rw=write", "--size=256k",
                    "--bs=64k", "--output-format=json", f"--output={good}"], check=True, capture_output=True)
    text = good.read_text()
    bad = tmp_path / "nonfinite.json"
    bad.write_text(re.sub(r'"iops" : [0-9.]+', '"iops" : Infinity', text))  # as a broken fio build could print
    out = tmp_path / "rows.csv"
    proc = run_cli("ingest", "fio", str(good), str(bad), "-o", str(out))
    assert proc.returncode == 0, proc.stderr  # rows left out are warnings, as in a run; a file with none is an error
    assert f"warning: {bad}: fio " in proc.stderr and "is not a finite number; left out" in proc.stderr
    assert str(good) not in proc.stderr
    assert ",'=HYPERLINK(1)," in out.read_text()
    proc = run_cli("ingest", "fio", str(bad), "--run-dir", str(tmp_path / "r"), "--no-report")
    assert proc.returncode == 0 and f"warning: {bad}: fio " in proc.stderr, proc.stderr


def test_a_value_that_is_no_number_in_results_csv_is_named_by_report_and_compare(tmp_path, fio):
    good = tmp_path / "good.json"
    subprocess.run([fio, "--name=w", f"--filename={tmp_path / 'data'}", "--rw=write", "--size=256k", "--bs=64k",
                    "--output-format=json", f"--output={good}"], check=True, capture_output=True)
    run = tmp_path / "r"
    assert run_cli("ingest", "fio", str(good), "--run-dir", str(run), "--no-report").returncode == 0
    (run / "results.parquet").unlink()
    lines = (run / "results.csv").read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[2].split(",")
    cells[header.index("value")] = "fast"
    lines[2] = ",".join(cells)
    (run / "results.csv").write_text("\n".join(lines) + "\n")
    for args in (["report", str(run)], ["compare", str(run), str(run)]):
        proc = run_cli(*args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert f"{run / 'results.csv'}: damaged: line 3: value 'fast' is not a number" in proc.stderr
