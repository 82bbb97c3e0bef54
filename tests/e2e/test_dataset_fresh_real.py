"""Datasets on disk with real fio: each write repetition writes new files, the reads after it find exactly the
files the last write left (not laid out again), and a mixed job file's prepare lays out only its reading section.

A command collector lists the dataset's folder when each measured run starts (after the prepare step) and
again when it is stopped (after the tool ended)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tests.conftest import run_cli, write_scenario

SNAPSHOT = ("snap() { echo \"== $1\"; find ${case.dir} -type f -printf '%i %T@ %s %f\\n' | sort -k4; }; "
            "snap start; trap 'snap end; exit 0' TERM; while :; do sleep 0.1; done")


def _snapshots(run: Path, case_id: str) -> dict[str, list[str]]:
    """{'start': [...], 'end': [...]}: 'inode mtime size name' of each file of the case's folder."""
    out: dict[str, list[str]] = {}
    current: list[str] = []
    for line in (run / "raw" / case_id / "local" / "collector-files.txt").read_text().splitlines():
        if line.startswith("== "):
            current = out.setdefault(line[3:], [])
        else:
            current.append(line)
    return out


def _names(lines: list[str]) -> list[str]:
    return [line.split()[3] for line in lines]


def test_writes_make_new_files_and_reads_find_the_last_ones(tmp_path, fio):
    (tmp_path / "mixed.fio").write_text("[global]\nsize=1m\nbs=64k\n[fill]\nrw=write\n[scan]\nrw=read\n")
    scenario = write_scenario(tmp_path, f"""\
        name: fresh
        settings: {{repetitions: 2}}
        targets:
          t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          write: {{tool: fio, dataset: d, options: {{rw: write, bs: 64k, size: 1m, numjobs: 2}}}}
          read: {{tool: fio, dataset: d, options: {{rw: read, bs: 64k, size: 1m, numjobs: 2}}}}
          mixed: {{tool: fio, job_file: mixed.fio}}
        collectors:
          files: {{kind: command, command: {json.dumps(SNAPSHOT)}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert list(cases.case_id) == [f"t__{w}__r{r}" for w in ("write", "read", "mixed") for r in (1, 2)]
    assert (cases.status == "ok").all(), cases[["case_id", "reason"]].to_string()
    snaps = {cid: _snapshots(run, cid) for cid in cases.case_id}
    written = ["d.0.0.0", "d.0.1.0"]
    for r in (1, 2):  # the first repetition's files were removed: the second writes new ones too
        assert snaps[f"t__write__r{r}"]["start"] == []
        assert _names(snaps[f"t__write__r{r}"]["end"]) == written
        assert {line.split()[2] for line in snaps[f"t__write__r{r}"]["end"]} == {str(2**20)}
    last_write = snaps["t__write__r2"]["end"]
    for r in (1, 2):  # the very files the last write left: same inodes, times and sizes (nothing laid out again)
        assert snaps[f"t__read__r{r}"]["start"] == last_write
        assert snaps[f"t__read__r{r}"]["end"] == last_write
    for r in (1, 2):  # the prepare laid out the reading section only; the writing one wrote new files
        assert _names(snaps[f"t__mixed__r{r}"]["start"]) == ["mixed.1.0.0"]
        assert _names(snaps[f"t__mixed__r{r}"]["end"]) == ["mixed.0.0.0", "mixed.1.0.0"]
    prepared = (run / "raw" / "t__mixed__r1" / "local" / "prepare" / "job.fio").read_text()
    assert "[scan]" in prepared and "[fill]" not in prepared and "create_only=1" in prepared
    measured = (run / "raw" / "t__mixed__r1" / "local" / "job.fio").read_text()
    assert "[scan]" in measured and "[fill]" in measured
    assert not list((tmp_path / "t").glob("fsbench-*/data/*"))  # every dataset removed after its last case
