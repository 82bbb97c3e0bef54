"""What fio measures is what the user asked for (real fio): reads measure reads, sections keep their rows,
nothing escapes the case folder."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pandas as pd

from tests.conftest import assert_drop_proof, run_cli, write_scenario


def _run(tmp_path: Path, scenario: Path, *args: str) -> Path:
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.splitlines()[0])


def test_a_read_case_lays_out_its_files_first_untimed_unmonitored_then_drops_the_cache(tmp_path, fio):
    scenario = write_scenario(tmp_path, f"""\
        name: reads
        settings: {{repetitions: 2}}
        monitor: {{interval: 0.2s}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"], teardown: ["rm -rf ${{target.path}}"]}}}}
        workloads:
          seq-read: {{tool: fio, options: {{rw: read, bs: 1m, size: 64m, ioengine: psync}}}}
        """)
    run = _run(tmp_path, scenario)
    first, second = (run / "raw" / f"t__seq-read__r{i}" / "local" for i in (1, 2))
    # the prepare pass: its own folder, create_only, and it wrote the 64 MiB only the first time
    prep = (first / "prepare" / "job.fio").read_text()
    assert "create_only=1" in prep and (first / "prepare" / "fio.json").exists()
    assert json.loads((first / "prepare" / "exit_status").read_text()) == 0
    # then the page cache was dropped on the host, with its proof, before the measured read
    proof = json.loads((first / "drop_caches.json").read_text())
    assert_drop_proof(proof)
    # the measured run only read: no write direction, 64 MiB read, one file shared by both repetitions
    measured = json.loads((first / "fio.json").read_text())["jobs"][0]
    assert measured["read"]["io_bytes"] == 64 * 2**20 and measured["write"]["io_bytes"] == 0
    for folder in (first, second):
        assert "directory=" + str(tmp_path / "t") in (folder / "job.fio").read_text()
        assert "/data/seq-read" in (folder / "job.fio").read_text()
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert (cases.status == "ok").all() and cases.estimate_s.iloc[0] > cases.estimate_s.iloc[1]
    # monitoring covers the measured run only: it starts after the prepare step ended
    # (the sampler stamps its samples with /proc/uptime; the prepare output's mtime is wall-clock time)
    uptime_now, wall_now = float(Path("/proc/uptime").read_text().split()[0]), time.time()
    prep_end = uptime_now - (wall_now - (first / "prepare" / "fio.json").stat().st_mtime)
    stamps = [float(line.split()[1]) for line in (first / "monitor.txt").read_text().splitlines()
              if line.startswith("@ ")]
    assert stamps and min(stamps) >= prep_end - 0.3
    assert not (tmp_path / "t").exists()


def test_parallel_job_sections_keep_their_own_rows(tmp_path, fio):
    """fio's aio-read example: four sections of one group; group_reporting merges only numjobs clones."""
    job = tmp_path / "aio-read.fio"
    job.write_text("[global]\nrw=randread\nsize=8m\nioengine=libaio\ndirect=0\nnumjobs=2\n"
                   "[aio-read4]\niodepth=4\n[aio-read32]\niodepth=32\n[aio-read8]\niodepth=8\n[aio-read16]\niodepth=16\n")
    scenario = write_scenario(tmp_path, f"""\
        name: sections
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          aio-read: {{tool: fio, job_file: aio-read.fio}}
        """)
    run = _run(tmp_path, scenario)
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    bw = results[(results.tool == "fio") & (results.metric == "io_bytes")]
    assert sorted(bw.job) == ["aio-read16", "aio-read32", "aio-read4", "aio-read8"]
    assert set(bw.value) == {2 * 8 * 2**20}  # each row: one section's two clones


def test_a_job_file_that_escapes_is_refused_before_anything_runs(tmp_path, fio):
    outside = tmp_path / "outside.dat"
    (tmp_path / "escape.fio").write_text(f"[global]\nsize=1m\n\n[writer]\nrw=write\nfilename={outside}\n")
    scenario = write_scenario(tmp_path, f"""\
        name: escape
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, job_file: escape.fio}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 3, proc.stderr
    assert f"escape.fio:6: workloads.w.job_file [writer] filename: filename={outside} is outside the case folder on t" \
           in proc.stderr
    assert not outside.exists() and not (tmp_path / "out").exists() and not (tmp_path / "t").exists()


def test_a_relative_filename_lands_in_the_case_folder_not_the_run_directory(tmp_path, fio):
    scenario = write_scenario(tmp_path, f"""\
        name: relative
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 2m, filename: data.bin, unlink: false}}}}
        """)
    run = _run(tmp_path, scenario)
    assert not list(run.rglob("data.bin"))  # not in the run directory (the report's disk)
    job = (run / "raw" / "t__w__r1" / "local" / "job.fio").read_text()
    assert re.search(rf"directory={re.escape(str(tmp_path))}/t/fsbench-{run.name}-[0-9a-f]{{12}}/t__w__r1\n", job)
    assert "filename=data.bin" in job


def test_plan_show_prints_the_exact_job_files_and_commands(tmp_path):
    job = tmp_path / "two.fio"
    job.write_text("[global]\nsize=4m\nruntime=3600  # one hour\ntime_based\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n")
    scenario = write_scenario(tmp_path, f"""\
        name: show
        targets: {{t: {{path: {tmp_path}/t}}}}
        workloads:
          mixed: {{tool: fio, job_file: two.fio, sweep: {{product: {{numjobs: [1, 2]}}}}}}
        """)
    proc = run_cli("plan", str(scenario), "--show", "--case", "t__mixed__numjobs=2__r1", check=True)
    out = proc.stdout
    assert "== case 2: t__mixed__numjobs=2__r1" in out and "case 1:" not in out
    assert "-- prepare (laying out the files to read; not timed, not monitored)" in out
    assert "   | create_only=1" in out and "   | runtime=3600" in out
    assert f"   | directory={tmp_path}/t/fsbench-<run-id>-<random>/data/mixed" in out
    assert "-- drop the page cache on every involved host" in out
    assert "   $ fio --output-format=json --output=fio.json job.fio" in out
    # the estimate read `runtime=3600  # one hour` as fio does: two hour-long groups, not 2 s
    assert "2 cases on 1 targets; estimated 240" in out


def test_repeated_globals_and_job_names_run_as_fio_reads_them(tmp_path, fio):
    """A later [global] counts for later jobs only and a repeated name is another job: three rows, not two."""
    (tmp_path / "multi.fio").write_text("[global]\nrw=write\nbs=4k\nsize=1m\nioengine=psync\n[a]\n"
                                        "[global]\nsize=2m\n[b]\n[a]\nbs=64k\n")
    scenario = write_scenario(tmp_path, f"""\
        name: multi
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, job_file: multi.fio}}
        """)
    run = _run(tmp_path, scenario)
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    moved = results[(results.metric == "io_bytes") & (results.operation == "write")]
    assert sorted(zip(moved.job, moved.job_index, moved.value)) == [
        ("a", 0, 2**20), ("a", 1, 2 * 2**20), ("b", 0, 2 * 2**20)]
    ops = results[(results.metric == "ops") & (results.operation == "write")]
    assert sorted(zip(ops.job, ops.job_index, ops.value)) == [("a", 0, 256), ("a", 1, 32), ("b", 0, 512)]


def test_a_log_path_from_the_environment_is_checked_after_expansion(tmp_path, fio):
    """`write_bw_log=${LOGS}/bw` with LOGS outside: real fio would write there; fsbench refuses it first."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "log.fio").write_text("[global]\nsize=1m\n[w]\nrw=write\nwrite_bw_log=${FSB_LOGS}/bw\n")
    scenario = write_scenario(tmp_path, f"""\
        name: logs
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, job_file: log.fio}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), env={"FSB_LOGS": str(outside)})
    assert proc.returncode == 3, proc.stderr
    assert f"log.fio:5: workloads.w.job_file [w] write_bw_log: write_bw_log={outside}/bw writes its log outside " \
           "the case's raw folder (target t)" in proc.stderr
    assert list(outside.iterdir()) == [] and not (tmp_path / "out").exists()
