"""vdbench parser: golden rows for every public output directory, plus numbers checked by hand.

Fixtures are read in place under FIXTURES/public/vdbench (never copied). Golden files live in
tests/golden/vdbench/<owner>/<dir>.csv (`<dir>.intervals.csv` for intervals=True); regenerate
with FSBENCH_REGEN_GOLDEN=1 and review the diff. The hand-checked assertions below quote the raw
totals/summary/flatfile rows they were checked against, so the golden files are not only
self-generated.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fsbench.core.errors import ParseError
from fsbench.tools.vdbench import parse_path
from tests.golden.golden import check_golden
from tests.paths import FIXTURES, GOLDEN

VDB = FIXTURES / "public" / "vdbench"
MIB = 1048576.0

#: inputs without any finished run definition: (substring of the ParseError reason)
EXPECTED_ERRORS = {
    "hero0906-jiaoben/50406_fs_parmfile_eof_error":
        "vdbench stopped on a parameter error: Unexpected EOF in parameter file.",
    "insummus-vdbench/50405_invalid_execution_parameter":
        "vdbench stopped on a parameter error: Invalid execution parameter: 'help'",
    "lnsyyj-sttdv/fs_4host_summary_only": "no run definition finished",
    "lnsyyj-sttdv/50407_fs_3host_console": "no run definition finished",
}
#: inputs that also get an intervals=True golden file (interrupted runs and a small complete one)
WITH_INTERVALS = {
    "hero0906-jiaoben/50406_fs_2host_interrupted",
    "lnsyyj-sttdv/fs_4host_summary_only",
    "lnsyyj-sttdv/50407_fs_3host_console",
    "masakioui-vdb/50407_sd_localhost_quick",
}


def _output_dirs() -> list[str]:
    """Every vdbench output directory (params/ holds parameter files only)."""
    return sorted(
        f"{owner.name}/{d.name}"
        for owner in VDB.iterdir() if owner.is_dir()
        for d in owner.iterdir() if d.is_dir() and d.name != "params"
    )


DIRS = _output_dirs()


def test_fixture_inventory_is_complete():
    # guards against a wrong fixture path parametrising nothing (a new directory fails test_golden
    # until it gets a golden file or an expected error)
    assert len(DIRS) >= 14
    assert set(EXPECTED_ERRORS) <= set(DIRS) and set(DIRS) >= WITH_INTERVALS


def _golden(rel: str, suffix: str = ".csv") -> Path:
    owner, name = rel.split("/")
    return GOLDEN / "vdbench" / owner / f"{name}{suffix}"


def _finite(rows: list[dict]) -> None:
    assert all(isinstance(r["value"], float) and math.isfinite(r["value"]) for r in rows)


@pytest.mark.parametrize("rel", DIRS)
def test_golden(rel: str):
    if rel in EXPECTED_ERRORS:
        with pytest.raises(ParseError) as info:
            parse_path(VDB / rel)
        assert EXPECTED_ERRORS[rel] in info.value.reason
        assert info.value.tool == "vdbench"
        return
    result = parse_path(VDB / rel)
    assert result.rows
    _finite(result.rows)
    check_golden(result.rows, _golden(rel))


@pytest.mark.parametrize("rel", sorted(WITH_INTERVALS))
def test_golden_intervals(rel: str):
    result = parse_path(VDB / rel, intervals=True)
    _finite(result.rows)
    assert {r["stat"] for r in result.rows} <= {"mean", "value"}
    assert all(isinstance(r["interval"], int) for r in result.rows if r["stat"] == "value")
    check_golden(result.rows, _golden(rel, ".intervals.csv"))


def _pick(rows, job, operation, metric, host="", stat="mean", **extra):
    hits = [
        r["value"] for r in rows
        if (r["job"], r["operation"], r["metric"], r["host"], r["stat"]) == (job, operation, metric, host, stat)
        and all(r.get(k) == v for k, v in extra.items())
    ]
    assert len(hits) == 1, (job, operation, metric, host, hits)
    return hits[0]


def _ops(rows, job, host=""):
    return {r["operation"] for r in rows if r["job"] == job and r["host"] == host}


# ---- numbers checked by hand against the raw files ----------------------------------------------


def test_50407_fs_8host_random_read_by_hand():
    res = parse_path(VDB / "masakioui-vdb/50407_fs_8host_random_read")
    rows = res.rows
    # flatfile avg_2-12: Rate 1104872.7091, MB/sec 4313.7267, Resp 0.1148, Open_rate 1389.8545,
    # Close_resp 0.0051, cpu_used 1.2987 (totals.html: 1104872  0.115  1.3 ... 4313.7 ... 1389 0.025)
    assert _pick(rows, "rd1", "all", "rate") == pytest.approx(1104872.7091)
    assert _pick(rows, "rd1", "all", "bandwidth") == pytest.approx(4313.7267 * MIB)
    assert _pick(rows, "rd1", "all", "latency_mean") == pytest.approx(0.1148e-3)
    assert _pick(rows, "rd1", "read", "rate") == pytest.approx(1104872.7091)
    assert _pick(rows, "rd1", "open", "rate") == pytest.approx(1389.8545)
    assert _pick(rows, "rd1", "close", "latency_mean") == pytest.approx(0.0051e-3)
    # a pure read run: no write rows, and only the metadata operations that occurred
    assert _ops(rows, "rd1") == {"all", "read", "open", "close"}
    assert _pick(rows, "rd1", "all", "cpu_usage") == pytest.approx(1.2987)
    # n3.html avg_2-12: 111274  0.143 ... 434.44 (per-host rows come from the host report)
    assert _pick(rows, "rd1", "all", "rate", host="n3") == pytest.approx(111274)
    assert _pick(rows, "rd1", "all", "latency_mean", host="n3") == pytest.approx(0.143e-3)
    assert _pick(rows, "rd1", "all", "bandwidth", host="n3") == pytest.approx(434.44 * MIB)
    assert {r["host"] for r in rows} == {"", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"}
    assert res.meta["version"] == "vdbench50407" and res.meta["workload"] == "fs"
    assert res.meta["completed"] is True and res.meta["source"] == "flatfile.html"


def test_50401_sd_2host_for_loops_by_hand():
    res = parse_path(VDB / "TheOtherOtherOperation-vdbconvert/50401_sd_2host_3rds")
    rows = res.rows
    # flatfile rd1 avg_2-60: rate 50.0169, MB/sec 0.1954, resp 5.3952, read_resp 6.9438,
    # write_resp 0.5163, cpu_used 1.1605 (totals.html: 50.02 0.20 4096 75.91 5.395 6.944 0.516)
    assert _pick(rows, "rd1", "all", "rate") == pytest.approx(50.0169)
    assert _pick(rows, "rd1", "all", "bandwidth") == pytest.approx(0.1954 * MIB)
    assert _pick(rows, "rd1", "all", "latency_mean") == pytest.approx(5.3952e-3)
    assert _pick(rows, "rd1", "read", "latency_mean") == pytest.approx(6.9438e-3)
    assert _pick(rows, "rd1", "write", "latency_mean") == pytest.approx(0.5163e-3)
    assert _pick(rows, "rd1", "all", "cpu_usage") == pytest.approx(1.1605)
    # rd3: 310.0508 op/s; "Starting RD=rd3; I/O rate: 5000; elapsed=60; For loops: threads=2"
    assert _pick(rows, "rd3", "all", "rate") == pytest.approx(310.0508)
    assert all(r["forthreads"] == "2" and r["rd_index"] == 0 for r in rows)
    # raw runs print no per-direction rate: read/write carry latency only
    assert {r["metric"] for r in rows if r["operation"] in ("read", "write")} == {"latency_mean"}
    # hd2.html rd2 avg_2-60: 71.95 op/s, 0.28 MB/sec
    assert _pick(rows, "rd2", "all", "rate", host="hd2") == pytest.approx(71.95)
    assert _pick(rows, "rd2", "all", "bandwidth", host="hd2") == pytest.approx(0.28 * MIB)
    assert res.meta["version"] == "vdbench50401" and res.meta["workload"] == "raw"


def test_50406_fs_interrupted_by_hand():
    res = parse_path(VDB / "hero0906-jiaoben/50406_fs_2host_interrupted")
    rows = res.rows
    # flatfile format_for_rd1 avg_2-6: rate 3166.5, MB/sec 98.9531, Mkdir_rate 1.6667,
    # Create_rate 1583.1667 / Create_resp 6.8002 (totals.html: 3166.5 1.806 ... 98.95 ... 1.7 2.025 1583 6.800)
    assert _pick(rows, "format_for_rd1", "all", "rate") == pytest.approx(3166.5)
    assert _pick(rows, "format_for_rd1", "write", "bandwidth") == pytest.approx(98.9531 * MIB)
    assert _pick(rows, "format_for_rd1", "mkdir", "rate") == pytest.approx(1.6667)
    assert _pick(rows, "format_for_rd1", "create", "latency_mean") == pytest.approx(6.8002e-3)
    assert "read" not in _ops(rows, "format_for_rd1")
    # rd1 was interrupted after 5 intervals: no mean rows, and a warning names it
    assert not [r for r in rows if r["job"] == "rd1"]
    assert any("rd1" in w and "did not finish" in w for w in res.warnings)
    assert res.meta["completed"] is False and res.meta["version"] == "vdbench50406"


def test_50406_fs_interrupted_intervals_by_hand():
    rows = parse_path(VDB / "hero0906-jiaoben/50406_fs_2host_interrupted", intervals=True).rows
    # flatfile rd1 interval 3: rate 4220, Read_rate 2490, Read_resp 3.9876 (summary: 2490.0 3.988)
    assert _pick(rows, "rd1", "all", "rate", stat="value", interval=3) == pytest.approx(4220)
    assert _pick(rows, "rd1", "read", "rate", stat="value", interval=3) == pytest.approx(2490)
    assert _pick(rows, "rd1", "read", "latency_mean", stat="value", interval=3) == pytest.approx(3.9876e-3)
    # format interval 6 did nothing (0.0 ops): rate 0 but no latency row
    assert _pick(rows, "format_for_rd1", "all", "rate", stat="value", interval=6) == 0.0
    assert not [
        r for r in rows
        if r["job"] == "format_for_rd1" and r.get("interval") == 6 and r["metric"] == "latency_mean"
    ]


def test_50407_sd_7host_by_hand():
    rows = parse_path(VDB / "masakioui-vdb/50407_sd_7host_random_write").rows
    # flatfile avg_2-60: rate 15773.1017, MB/sec 117.5485, write_resp 1.0093, read% 0
    # (totals.html: 15773.1 117.55 7814 0.00 1.009 0.000 1.009)
    assert _pick(rows, "random_write", "all", "rate") == pytest.approx(15773.1017)
    assert _pick(rows, "random_write", "all", "bandwidth") == pytest.approx(117.5485 * MIB)
    assert _pick(rows, "random_write", "write", "latency_mean") == pytest.approx(1.0093e-3)
    assert _ops(rows, "random_write") == {"all", "write"}
    # n1.html avg_2-60: 2293.7 17.06 7800 0.00 1.302
    assert _pick(rows, "random_write", "all", "rate", host="n1") == pytest.approx(2293.7)
    assert _pick(rows, "random_write", "all", "latency_mean", host="n1") == pytest.approx(1.302e-3)
    assert "n2" not in {r["host"] for r in rows}  # n2 is commented out of that run


def test_many_rds_and_empty_average_by_hand():
    rows = parse_path(VDB / "masakioui-vdb_oceanstor/50407_sd_multihost_many_rds").rows
    assert len({r["job"] for r in rows}) == 38
    # flatfile seq_read_2m avg_2-10: rate 76.1111, MB/sec 152.2222 (totals: 76.1 152.22)
    assert _pick(rows, "seq_read_2m", "all", "rate") == pytest.approx(76.1111)
    assert _pick(rows, "seq_read_2m", "all", "bandwidth") == pytest.approx(152.2222 * MIB)
    mac = parse_path(VDB / "tiger7z-vdbench_for_mac_m1/50407_sd_localhost_macos")
    # SD_format's average is avg_2-1 (one interval only): no mean rows, a warning instead
    assert {r["job"] for r in mac.rows} == {"rd1"}
    assert any("SD_format" in w and "avg_2-1" in w for w in mac.warnings)
    # rd1 avg_2-5: rate 105.25; macOS reports no cpu (n/a): no cpu_usage row
    assert _pick(mac.rows, "rd1", "all", "rate") == pytest.approx(105.25)
    assert "cpu_usage" not in {r["metric"] for r in mac.rows}


def test_summary_only_and_console_intervals_by_hand():
    rows = parse_path(VDB / "lnsyyj-sttdv/fs_4host_summary_only", intervals=True).rows
    # summary.html interval 16: 32.0 899.99 ... read 18.0 1598.5
    assert _pick(rows, "rd1", "all", "latency_mean", stat="value", interval=16) == pytest.approx(0.89999)
    assert _pick(rows, "rd1", "read", "latency_mean", stat="value", interval=16) == pytest.approx(1.5985)
    console = VDB / "lnsyyj-sttdv/50407_fs_3host_console/863.log"
    res = parse_path(console, intervals=True)
    # 863.log interval 1: 39.1 143.61 ... 18.0 6.705 (open) ... 1.0 77.087 (close)
    assert _pick(res.rows, "format_for_rd1", "all", "rate", stat="value", interval=1) == pytest.approx(39.1)
    assert _pick(res.rows, "format_for_rd1", "open", "latency_mean", stat="value", interval=1) == pytest.approx(
        6.705e-3
    )
    # the unterminated last line (interval 30) is not trusted
    assert max(r["interval"] for r in res.rows) == 29
    assert any("no line end" in w for w in res.warnings)
    assert res.meta["version"] == "vdbench50407" and res.meta["source"] == "863.log"


# ---- cross-checks between files and entry points -------------------------------------------------


def _by_key(rows):
    return {(r["job"], r["rd_index"], r["operation"], r["metric"]): r["value"] for r in rows if r["host"] == ""}


WITH_BOTH = [d for d in DIRS if (VDB / d / "flatfile.html").is_file() and (VDB / d / "totals.html").is_file()]


@pytest.mark.parametrize("rel", WITH_BOTH)
def test_flatfile_agrees_with_totals(rel: str):
    """Two files, two readers: the avg rows must agree to the precision totals.html prints."""
    flat = _by_key(parse_path(VDB / rel / "flatfile.html", hosts=False).rows)
    tot = _by_key(parse_path(VDB / rel / "totals.html", hosts=False).rows)
    assert flat.keys() == tot.keys()
    tol = {"rate": 0.06, "bandwidth": 0.006 * MIB, "latency_mean": 1e-6, "cpu_usage": 0.06}
    for key, value in flat.items():
        if rel == "hero0906-jiaoben/50406_fs_2host_interrupted" and key[3] == "cpu_usage":
            # 50406 oddity: flatfile cpu_used 5.4833 vs summary/totals cpu% total 7.1
            continue
        assert math.isclose(value, tot[key], rel_tol=0.01, abs_tol=tol[key[3]]), (key, value, tot[key])


@pytest.mark.parametrize(
    "rel", [d for d in DIRS if (VDB / d / "logfile.html").is_file() and d not in EXPECTED_ERRORS]
)
def test_logfile_tables_match_directory(rel: str):
    """logfile.html repeats the tables (with each RD start printed twice): same RDs and rows."""
    log = parse_path(VDB / rel / "logfile.html", hosts=False).rows
    ref = _by_key(parse_path(VDB / rel, hosts=False).rows)
    got = _by_key(log)
    assert got.keys() == ref.keys()
    assert all(math.isclose(got[k], ref[k], rel_tol=0.02, abs_tol=1e-3 if k[3] != "bandwidth" else 0.006 * MIB)
               for k in got if k[3] != "cpu_usage")


def test_file_paths_equal_directory():
    d = VDB / "TheOtherOtherOperation-vdbconvert/50401_sd_2host_3rds"
    assert parse_path(d / "flatfile.html").rows == parse_path(d).rows
    lone = VDB / "jfritzen-VdbenchExplorer/old_sd_flatfile"
    assert parse_path(lone / "flatfile.html").rows == parse_path(lone).rows
    console = VDB / "lnsyyj-sttdv/50407_fs_3host_console"
    assert parse_path(console / "863.log", intervals=True).rows == parse_path(console, intervals=True).rows
    # a host report given directly: its rows carry that host
    one = parse_path(VDB / "masakioui-vdb/50407_sd_7host_random_write/n1.html").rows
    assert {r["host"] for r in one} == {"n1"}


def test_old_flatfile_without_directions():
    rows = parse_path(VDB / "jfritzen-VdbenchExplorer/old_sd_flatfile").rows
    # 2013 flatfile: no read_resp/write_resp, kstat columns ignored; random_write_max_4k rate 327.4444
    assert _pick(rows, "random_write_max_4k", "all", "rate") == pytest.approx(327.4444)
    assert {r["operation"] for r in rows} == {"all"}


# ---- synthetic inputs (written here, not copied) ------------------------------------------------

_FLAT = """<pre>
* Run       : Name of run from RD=
         tod        Run   Interval    reqrate       rate     MB/sec   bytes/io      read%       resp  read_resp write_resp   cpu_used
10:00:01.000 rd1 1 10 10.0 1.0 4096 50.0 1.0 1.0 1.0 1.0
10:00:02.000 rd1 2 10 20.0 2.0 4096 50.0 2.0 2.0 2.0 2.0
10:00:02.100 rd1 avg_2-2 10 20.0 2.0 4096 50.0 2.0 2.0 2.0 2.0
10:00:03.000 rd1 1 10 30.0 3.0 4096 100.0 3.0 3.0 0.0 3.0
10:00:04.000 rd1 2 10 40.0 4.0 4096 100.0 4.0 4.0 0.0 n/a
10:00:04.100 rd1 avg_2-2 10 40.0 4.0 4096 100.0 4.0 4.0 0.0 n/a
"""
_TOTALS = """<pre>
Run totals
<a name="_1"></a><i><b>10:00:00.001 Starting RD=rd1; I/O rate: 10; elapsed=2; For loops: threads=2 xfersize=4k</b></i>

Jan 01, 2024  interval        i/o   MB/sec   bytes   read     resp     read    write  cpu%
                             rate  1024**2     i/o    pct     time     resp     resp sys+u
10:00:02.100   avg_2-2      20.00     2.00    4096  50.00    2.000    2.000    2.000   2.0

<a name="_2"></a><i><b>10:00:02.501 Starting RD=rd1; I/O rate: 10; elapsed=2; For loops: threads=4 xfersize=4k</b></i>

10:00:04.100   avg_2-2      40.00     4.00    4096 100.00    4.000    4.000    0.000   0.0
"""


def test_for_loop_rds_share_a_name(tmp_path: Path):
    (tmp_path / "flatfile.html").write_text(_FLAT)
    (tmp_path / "totals.html").write_text(_TOTALS)
    rows = parse_path(tmp_path).rows
    assert [(r["rd_index"], r["forthreads"], r["forxfersize"]) for r in rows if r["metric"] == "rate"] == [
        (0, "2", "4k"),
        (1, "4", "4k"),
    ]
    second = [r for r in rows if r["rd_index"] == 1]
    assert {r["operation"] for r in second} == {"all", "read"}  # read% 100: no write row
    assert "cpu_usage" not in {r["metric"] for r in second}  # n/a
    # the totals table alone gives the same RDs, occurrences and for-loop values
    tot = parse_path(tmp_path / "totals.html").rows
    assert [(r["rd_index"], r["forthreads"], r["value"]) for r in tot if r["metric"] == "rate"] == [
        (0, "2", 20.0),
        (1, "4", 40.0),
    ]


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "no vdbench result table found"),
        ("<pre>\nRun totals\n", "no vdbench result table found"),
        ("java.lang.RuntimeException: No such file: /x\n\tat Vdb.Vdbmain.main(Vdbmain.java:1)\n",
         "vdbench stopped on a parameter error: No such file: /x"),
    ],
)
def test_no_result_raises_parse_error(tmp_path: Path, text: str, reason: str):
    (tmp_path / "logfile.html").write_text(text)
    with pytest.raises(ParseError) as info:
        parse_path(tmp_path)
    assert reason in info.value.reason


def test_missing_path_raises_parse_error(tmp_path: Path):
    with pytest.raises(ParseError, match="no such file"):
        parse_path(tmp_path / "nope")
