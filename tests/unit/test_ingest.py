"""`fsbench ingest`: every tool, bad files named on stderr, the good ones still written."""

from __future__ import annotations

import io
import shutil

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsbench.core.errors import ParseError
from fsbench.ingest import ingest_files, parser_for
from fsbench.tools import tool_names
from tests.conftest import run_cli
from tests.paths import FIXTURES

FIO = FIXTURES / "fio"
SAMPLES = {
    "fio": FIO / "json_cs_2clients_write_128k.json",
    "mdtest": FIXTURES / "mdtest" / "4.0.0" / "seed_n500_u_z2_i3_np4_ext4.stdout.txt",
    "vdbench": next(p for p in (FIXTURES / "public" / "vdbench").glob("*/*") if (p / "flatfile.html").exists()),
    "juicefs-bench": FIXTURES / "public" / "juicefs-bench" / "issue-4712_table_negative_update_meta.txt",
}


@pytest.mark.parametrize("tool", sorted(SAMPLES))
def test_every_tool_gives_tidy_rows(tool):
    rows, errors = ingest_files(tool, [str(SAMPLES[tool])])
    assert errors == [] and rows
    assert {r["source"] for r in rows} == {str(SAMPLES[tool])}
    assert all(isinstance(r["value"], float) and r["unit"] for r in rows)


def test_bad_file_is_named_and_the_others_are_written(tmp_path):
    bad = tmp_path / "killed.json"
    text = (FIO / "json_single_write_128k_libaio_direct.json").read_text()
    bad.write_text(text[:1000])
    good = FIO / "json_single_write_128k_libaio_direct.json"
    proc = run_cli("ingest", "fio", str(good), str(bad), str(FIO / "normal_single_randrw70_4k_psync.txt"))
    assert proc.returncode == 1
    assert f"{bad}" in proc.stderr and "was fio killed?" in proc.stderr
    df = pd.read_csv(io.StringIO(proc.stdout), keep_default_na=False)
    assert set(df["source"]) == {str(good), str(FIO / "normal_single_randrw70_4k_psync.txt")}
    assert list(df.columns[:9]) == ["source", "tool", "host", "job", "operation", "metric", "stat", "value", "unit"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_output_file(tmp_path, suffix):
    out = tmp_path / f"rows{suffix}"
    proc = run_cli("ingest", "mdtest", str(SAMPLES["mdtest"]), "-o", str(out), check=True)
    assert proc.stdout == ""
    df = pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out)
    assert set(df["metric"]) == {"rate"} and (df["tool"] == "mdtest").all() and len(df) > 10


def test_unknown_tool():
    proc = run_cli("ingest", "iozone", str(SAMPLES["fio"]))
    from fsbench.tools import tool_names

    assert proc.returncode == 2 and f"known: {', '.join(sorted(tool_names()))}" in proc.stderr
    assert "known: fio, juicefs-bench" in proc.stderr


def test_run_dir_side_by_side_report(tmp_path):
    for target, name in (("ssd", "json_single_write_128k_libaio_direct.json"),
                         ("hdd", "json_timebased_write_1m_psync.json")):
        (tmp_path / target).mkdir()
        shutil.copyfile(FIO / name, tmp_path / target / "seq-write.json")
    out = tmp_path / "compared"
    proc = run_cli("ingest", "fio", str(tmp_path / "ssd" / "seq-write.json"), str(tmp_path / "hdd" / "seq-write.json"),
                   "--run-dir", str(out), check=True)
    assert proc.stdout.strip() == str(out)
    cases = pd.read_csv(out / "cases.csv")
    assert list(cases["target"]) == ["ssd", "hdd"] and set(cases["workload"]) == {"seq-write"}
    assert (out / "raw" / "ssd__seq-write__r1" / "ingested" / "seq-write.json").exists()
    html = (out / "report.html").read_text()
    assert "(1.00)" in html and "hdd" in html and "ssd" in html
    proc = run_cli("report", str(out), check=True)  # and it rebuilds like any run
    assert proc.stdout.strip() == str(out / "report.html")
    again = run_cli("ingest", "fio", str(tmp_path / "ssd" / "seq-write.json"), "--run-dir", str(out))
    assert again.returncode == 2 and "not empty" in again.stderr


def test_parse_errors_carry_tool_and_file():
    with pytest.raises(ParseError) as err:
        parser_for("juicefs-bench")(FIO / "fio_version.txt")
    assert err.value.tool == "juicefs-bench" and err.value.file.endswith("fio_version.txt")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3000), tool=st.sampled_from(tool_names()))
def test_no_file_makes_a_parser_raise_anything_but_parse_error(tmp_path, data, tool):
    f = tmp_path / "random.out"
    f.write_bytes(data)
    try:
        result = parser_for(tool)(f)
    except ParseError:
        return
    assert all(r["value"] == r["value"] for r in result.rows)
