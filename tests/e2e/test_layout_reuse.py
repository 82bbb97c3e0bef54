"""A dataset laid out once per run and reused (real fio on a real folder): cases that read the same files
skip the prepare step only while the files are exactly as fsbench's own prepare step left them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tests.conftest import run_cli, write_scenario

#: a collector that changes the dataset's file under the run (its modification time) during every case
TOUCH = "find ${case.dir} -type f -exec touch -d '2001-01-01' {} +; trap 'exit 0' TERM; while :; do sleep 0.1; done"


def _run(tmp_path: Path, name: str, collectors: str = "") -> Path:
    scenario = write_scenario(tmp_path, f"""\
        name: {name}
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/{name}, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          r:
            tool: fio
            options: {{rw: randread, bs: 4k, size: 2m, ioengine: psync, runtime: 0.3s, time_based: 1}}
            sweep: {{product: {{iodepth: [1, 2, 4]}}}}
        {collectors}
        """, f"{name}.yaml")
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert list(cases.status) == ["ok"] * 3, cases[["case_id", "reason"]].to_string()
    return run


def _prepare(run: Path, iodepth: int) -> Path:
    return run / "raw" / f"t__r__iodepth={iodepth}__r1" / "local" / "prepare"


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
