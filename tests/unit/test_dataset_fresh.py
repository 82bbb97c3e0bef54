"""Shared datasets and writes: a case that writes a dataset's files starts from an empty folder (it measures new
files, not overwrites), reads keep the files the last write left, and a prepare lays out only what reads."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fsbench.run.plan_show import describe_case
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import LAYOUT_BW, PREPARE_START_S, plan_cases
from fsbench.tools import get_tool
from fsbench.tools.fio.jobfile import parse_jobfile
from tests.conftest import require

FIO = get_tool("fio")
MIXED = "[global]\nsize=4m\nbs=64k\n[fill]\nrw=write\n[scan]\nrw=read\nwait_for=fill\n[stamp]\nrw=randwrite\n"

SCENARIO = """\
name: fresh
settings: {repetitions: 2}
targets:
  t: {path: /srv/t}
  dev: {path: /dev/sdz, kind: device, destructive: true}
workloads:
  write: {tool: fio, targets: [t], dataset: d, options: {rw: write, size: 8m, numjobs: 2}}
  read: {tool: fio, targets: [t], dataset: d, options: {rw: read, size: 8m, numjobs: 2}}
  update: {tool: fio, targets: [t], dataset: d, options: {rw: randrw, size: 8m, numjobs: 2}}
  over: {tool: fio, targets: [t], dataset: d, overwrite: true, options: {rw: randwrite, size: 8m, numjobs: 2}}
  own: {tool: fio, targets: [t], options: {rw: write, size: 8m}}
  mixed: {tool: fio, targets: [t], job_file: mixed.fio}
  raw: {tool: fio, targets: [dev], dataset: d, options: {rw: write, size: 8m}}
"""


@pytest.fixture
def sc(tmp_path: Path) -> Scenario:
    (tmp_path / "mixed.fio").write_text(MIXED)
    return load_scenario_text(SCENARIO, "fresh.yaml", base_dir=tmp_path)


def _cases(sc: Scenario) -> dict:
    return {c.case_id: c for c in plan_cases(sc)}


def test_only_cases_that_write_a_folders_dataset_start_from_an_empty_one(sc):
    cases = _cases(sc)
    fresh = {cid for cid, c in cases.items() if c.fresh}
    # the write's repetitions and the mixed job file; not the read nor a read-and-write job (it reads what it
    # overwrites by design), not a write that asks to overwrite (seed 003's random write), not a case with its
    # own folder (new each time), not a device
    assert fresh == {"t__write__r1", "t__write__r2", "t__mixed__r1", "t__mixed__r2"}
    assert cases["t__mixed__r1"].dataset == "mixed" and cases["t__mixed__r1"].prepare


def test_a_fresh_case_that_reads_pays_its_layout_every_time_and_a_read_after_a_write_none(sc):
    cases = _cases(sc)
    read = FIO.estimate_seconds({"rw": "read", "size": "8m", "numjobs": 2}, None, {})
    for r in (1, 2):  # the write left the files: the prepare finds them and only starts fio
        assert cases[f"t__read__r{r}"].estimate_s == round(read + PREPARE_START_S, 1)
    mixed = [cases[f"t__mixed__r{r}"].estimate_s for r in (1, 2)]
    scan_only = 4 * 2**20 / LAYOUT_BW  # the read section's file, not the two written
    assert mixed[0] == mixed[1]
    assert round(mixed[0] - PREPARE_START_S - scan_only, 1) == round(FIO.estimate_seconds({}, MIXED, {}), 1)


def test_a_mixed_prepare_lays_out_the_reading_sections_under_the_measured_runs_names(sc, tmp_path):
    case = _cases(sc)["t__mixed__r1"]
    measured = parse_jobfile(FIO.build(case, "/srv/t/data/mixed").files["job.fio"])
    prep_text = FIO.prepare(case, "/srv/t/data/mixed").files["job.fio"]
    prep = parse_jobfile(prep_text)
    assert measured.job_names() == ["fill", "scan", "stamp"] and prep.job_names() == ["scan"]
    (scan,) = [o for n, o in prep.jobs()]
    assert scan["filename_format"] == dict(measured.jobs())["scan"]["filename_format"] == "mixed.1.$jobnum.$filenum"
    assert scan["create_only"] == "1" and "wait_for" not in scan  # its job is not in the prepare pass
    fio = require("fio")
    for text in (prep_text, FIO.build(case, "/srv/t/data/mixed").files["job.fio"]):
        (tmp_path / "job.fio").write_text(text)
        parsed = subprocess.run([fio, "--parse-only", str(tmp_path / "job.fio")], capture_output=True, text=True)
        assert parsed.returncode == 0, parsed.stderr


def test_the_plan_says_a_fresh_case_removes_the_datasets_files(sc):
    cases = _cases(sc)
    shown = describe_case(sc, cases["t__write__r2"])
    assert "-- remove the dataset's files (/srv/t/fsbench-<run-id>-<random>/data/d): this case writes them anew" in shown
    assert "remove the dataset's files" not in describe_case(sc, cases["t__read__r1"])
