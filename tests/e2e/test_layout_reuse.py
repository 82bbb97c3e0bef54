"""A dataset laid out once per run and reused (real fio on a real folder): cases that read the same files
skip the prepare step only while the files are exactly as fsbench's own prepare step left them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tests.conftest import run_cli, write_scenario

#: a collector that changes the dataset's file under the run (its modification time) during every case
TOUCH = "find ${case.dir} -type f -exec touch -d '2001-01-01' {} +; trap 'exit 0' TERM; while :; do sleep 0.1; done"


def _run(tmp_path: Path, name: str, collectors: str = "", sweep: str = "iodepth: [1, 2, 4]") -> Path:
    scenario = write_scenario(tmp_path, f"""\
        name: {name}
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/{name}, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          r:
            tool: fio
            options: {{rw: randread, bs: 4k, size: 2m, ioengine: psync, runtime: 0.3s, time_based: 1}}
            sweep: {{product: {{{sweep}}}}}
        {collectors}
        """, f"{name}.yaml")
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert set(cases.status) == {"ok"}, cases[["case_id", "reason"]].to_string()
    return run


def _prepare(run: Path, value: int | str, swept: str = "iodepth") -> Path:
    return run / "raw" / f"t__r__{swept}={value}__r1" / "local" / "prepare"


def test_cases_reading_the_same_files_reuse_the_layout_proven_unchanged(tmp_path, fio):
    run = _run(tmp_path, "reuse")
    first = _prepare(run, 1)
    assert "create_only=1" in (first / "job.fio").read_text() and (first / "fio.json").exists()
    laid_out = (first / "layout.txt").read_text()
    name, size, mtime, ctime, inode = laid_out.split("\t")
    assert size == str(2 * 2**20)
    for iodepth in (2, 4):  # no fio started to lay out or check: the listing proves the files unchanged
        later = _prepare(run, iodepth)
        assert not (later / "fio.json").exists() and not (later / "job.fio").exists()
        assert (later / "layout.txt").read_text() == laid_out
        assert "laid out by t__r__iodepth=1__r1 in this run" in (later / "reused").read_text()
        text = (later.parent / "fio.json").read_text()  # fio notes the psync queue depth cap before its JSON
        measured = json.loads(text[text.index("{"):])["jobs"][0]
        assert f"iodepth={iodepth}\n" in (later.parent / "job.fio").read_text() and measured["read"]["io_bytes"] > 0
        assert measured["write"]["io_bytes"] == 0
        # the page cache was still dropped before the measured read, with its proof
        assert json.loads((later.parent / "drop_caches.json").read_text())["ok"]


def test_files_changed_since_the_layout_are_laid_out_again(tmp_path, fio):
    run = _run(tmp_path, "touched", f"collectors: {{touch: {{kind: command, command: {json.dumps(TOUCH)}}}}}")
    for iodepth in (1, 2, 4):  # each case's files were touched by the last one: fio checks them again
        prep = _prepare(run, iodepth)
        assert (prep / "fio.json").exists() and not (prep / "reused").exists()
        assert json.loads((prep / "exit_status").read_text()) == 0


def test_a_numjobs_sweep_lays_out_its_whole_dataset_in_its_first_case(tmp_path, fio):
    """The first case lays out the files of the sweep's most clones; the later cases find them unchanged."""
    run = _run(tmp_path, "cover", sweep="numjobs: [1, 2, 3]")
    first = _prepare(run, 1, "numjobs")
    assert "numjobs=3" in (first / "job.fio").read_text() and "create_only=1" in (first / "job.fio").read_text()
    covers = (first / "covers").read_text()
    assert "the step of t__r__numjobs=3__r1" in covers and "t__r__numjobs=2__r1\n" in covers
    laid_out = (first / "layout.txt").read_text()
    assert sorted(line.split("\t")[:2] for line in laid_out.splitlines()) == [
        [f"r.0.{n}.0", str(2 * 2**20)] for n in range(3)]
    assert "numjobs=1\n" in (first.parent / "job.fio").read_text()  # the first case measured one clone's reads
    for numjobs in (2, 3):
        later = _prepare(run, numjobs, "numjobs")
        assert not (later / "fio.json").exists() and (later / "layout.txt").read_text() == laid_out
        assert "laid out by t__r__numjobs=1__r1 in this run" in (later / "reused").read_text()
        text = (later.parent / "fio.json").read_text()
        measured = json.loads(text[text.index("{"):])["jobs"][0]
        assert measured["read"]["io_bytes"] > 0 and measured["write"]["io_bytes"] == 0


def test_a_sweep_from_its_most_clones_down_lays_out_once_too(tmp_path, fio):
    run = _run(tmp_path, "down", sweep="numjobs: [2, 1]")
    first = _prepare(run, 2, "numjobs")
    assert "the step of t__r__numjobs=2__r1" in (first / "covers").read_text()
    later = _prepare(run, 1, "numjobs")
    assert not (later / "fio.json").exists() and "laid out by t__r__numjobs=2__r1" in (later / "reused").read_text()


def test_layouts_no_step_holds_are_laid_out_case_by_case(tmp_path, fio):
    run = _run(tmp_path, "files", sweep="nrfiles: [1, 2]")  # other file names: neither step holds the other's
    assert not (_prepare(run, 1, "nrfiles") / "covers").exists()
    assert (_prepare(run, 2, "nrfiles") / "fio.json").exists() and not (_prepare(run, 2, "nrfiles") / "reused").exists()
