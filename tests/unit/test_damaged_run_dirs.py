"""report, compare, run --resume and load_results on run directories whose files are not what fsbench wrote,
and bad output paths: a plain error naming the file and what is wrong (exit 2), never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fsbench.campaign import open_run
from fsbench.compare.runs import load_run
from fsbench.core.errors import RunDirError
from fsbench.ingest.run import ingest_run_dir
from fsbench.run.store import load_results
from tests.conftest import run_cli, write_scenario
from tests.paths import FIXTURES

FIO = FIXTURES / "fio" / "json_cs_2clients_write_128k.json"

DAMAGE = {
    "manifest_list": ("manifest.json", lambda d: (d / "manifest.json").write_text("[]\n"),
                      "damaged manifest: a JSON list, where fsbench writes an object"),
    "manifest_binary": ("manifest.json", lambda d: (d / "manifest.json").write_bytes(b"\xff\xfe"),
                        "damaged: not JSON"),
    "manifest_deep": ("manifest.json", lambda d: (d / "manifest.json").write_text("[" * 400_000 + "]" * 400_000),
                      "damaged: JSON nested too deeply"),
    "manifest_cases": ("manifest.json", lambda d: (d / "manifest.json").write_text(
        (d / "manifest.json").read_text().replace('"cases": {', '"cases": [0], "x": {')),
        "'cases' is list, not an object"),
    "cases_binary": ("cases.csv", lambda d: (d / "cases.csv").write_bytes(b"x\n\xff\n"), "not UTF-8 text"),
    "cases_columns": ("cases.csv", lambda d: (d / "cases.csv").write_text("a,b\n1,2\n"),
                      "no column case_id, target, workload, status (it has a, b)"),
    "results_columns": ("results.csv", lambda d: ((d / "results.parquet").unlink(),
                                                  (d / "results.csv").write_text("a,b\n1,2\n")), "no column case_id, target, workload"),
    "results_quote": ("results.csv", lambda d: ((d / "results.parquet").unlink(),
                                                (d / "results.csv").open("a").write('"x\n')),
                      "not CSV as fsbench writes it"),
    "parquet_junk": ("results.parquet", lambda d: (d / "results.parquet").write_text("junk\n"),
                     "not a Parquet file"),
    "scenario_list": ("scenario.yaml", lambda d: (d / "scenario.yaml").write_text("[1, 2]\n"),
                      "a YAML list, where fsbench writes the resolved scenario"),
    "scenario_targets": ("scenario.yaml", lambda d: (d / "scenario.yaml").write_text("targets: [a]\n"),
                         "targets is a list, not a mapping"),
    "hosts_quote": ("hosts.csv", lambda d: (d / "hosts.csv").write_text('"x\n'), "not CSV as fsbench writes it"),
}


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    out, errors = ingest_run_dir("fio", [str(FIO)], tmp_path_factory.mktemp("runs") / "good")
    assert errors == []
    return out


def _damaged(good: Path, folder: Path, kind: str) -> tuple[Path, str, str]:
    run = folder / kind
    shutil.copytree(good, run)
    name, damage, said = DAMAGE[kind]
    damage(run)
    return run, name, said


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_what_report_compare_and_load_results_read_first_names_the_damaged_file(good, tmp_path, kind):
    run, name, said = _damaged(good, tmp_path, kind)
    for read in (open_run, load_run, load_results):
        with pytest.raises(RunDirError) as err:
            read(run)
        assert str(err.value).startswith(f"{run / name}: ") and said in str(err.value), read


@pytest.mark.parametrize("kind", ["manifest_list", "results_quote", "parquet_junk", "scenario_list"])
def test_report_and_compare_exit_2_with_the_message(good, tmp_path, kind):
    run, name, said = _damaged(good, tmp_path, kind)
    for args in (["report", str(run)], ["compare", str(good), str(run)]):
        proc = run_cli(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and f"error: {run / name}: " in proc.stderr and said in proc.stderr


@pytest.mark.parametrize("kind", ["manifest_list", "cases_binary", "cases_columns"])
def test_resume_names_a_damaged_file_it_reads(good, tmp_path, kind):
    run, name, said = _damaged(good, tmp_path, kind)
    (tmp_path / "t").mkdir()  # preflight passes: the run directory is what stops it
    scenario = write_scenario(tmp_path, f"name: s\ntargets: {{t: {{path: {tmp_path / 't'}}}}}\n"
                                        "workloads: {w: {tool: fio, options: {rw: write, size: 1m}}}\n")
    proc = run_cli("run", str(scenario), "--resume", str(run), "--no-report")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"error: {run / name}: " in proc.stderr and said in proc.stderr


def test_bad_output_paths_are_errors_naming_them(good, tmp_path):
    cases = [
        (["compare", str(good), str(good), "-o", "/etc/passwd/x.md"], "/etc/passwd/x.md: cannot write it"),
        (["report", str(good), "-o", "/etc/passwd/x.html"], "/etc/passwd/x.html: cannot write it"),
        (["ingest", "fio", str(FIO), "-o", "/etc/passwd/x.csv"], "/etc/passwd/x.csv: cannot write it"),
        (["ingest", "fio", str(FIO), "--run-dir", "/etc/passwd/x"],
         "/etc/passwd/x: cannot create the run directory there"),
    ]
    for args, said in cases:
        proc = run_cli(*args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and f"error: {said}" in proc.stderr, args
    with pytest.raises(RunDirError, match="exists and is not a folder"):  # the command line's own check first
        ingest_run_dir("fio", [str(FIO)], FIO)
