"""fio normal and terse parsers: golden files over every fixture, the MANIFEST's key numbers, and
agreement with parse_json (the reference) on fio's own JSON for the same run."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from fsbench.core.errors import ParseError
from fsbench.tools.fio import parse_any, parse_json, parse_normal, parse_terse
from tests.golden.golden import check_golden
from tests.paths import FIXTURES, GOLDEN

FIO = FIXTURES / "fio"
PUBLIC = FIXTURES / "public" / "fio-public"
GOLDEN_DIR = GOLDEN / "fio"
MANIFEST = (FIO / "MANIFEST.md").read_text()

NORMAL = sorted(FIO.glob("normal_*.txt")) + sorted(p for p in PUBLIC.iterdir() if p.is_file())
TERSE = sorted(FIO.glob("terse_*.txt"))
#: files that hold no fio result at all: name -> a substring of the ParseError reason
EXPECTED_ERRORS = {
    "fio_version.txt": "the output starts with: 'fio-3.33'",
    "fio_enghelp.txt": "the output starts with: 'Available IO engines:'",
    "fio_enghelp_io_uring.txt": "no fio result block",
    "fio_enghelp_libaio.txt": "no fio result block",
}
JSON_FILES = sorted(FIO.glob("json*.json"))


def _parser(path: Path):
    return parse_terse.parse_text if path.name.startswith("terse_") else parse_normal.parse_text


def test_fixtures_found() -> None:
    # guards against a glob silently matching nothing (8 normal + 3 public fio-3.7 logs, 1 terse)
    assert len(NORMAL) == 11 and len(TERSE) == 1 and len(JSON_FILES) == 14
    assert all((FIO / name).exists() for name in EXPECTED_ERRORS)


@pytest.mark.parametrize("path", NORMAL + TERSE, ids=[p.stem for p in NORMAL + TERSE])
def test_golden(path: Path) -> None:
    result = _parser(path)(path.read_text(), str(path))
    assert result.rows
    check_golden(result.rows, GOLDEN_DIR / f"{path.stem}.csv")
    # the dispatcher picks the same parser from the text alone
    assert parse_any(path.read_text(), str(path)).rows == result.rows


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_expected_errors(name: str) -> None:
    path = FIO / name
    for parse in (parse_terse.parse_text, parse_normal.parse_text):
        with pytest.raises(ParseError) as info:
            parse(path.read_text(), str(path))
        assert info.value.tool == "fio" and info.value.file == str(path)
    assert EXPECTED_ERRORS[name] in info.value.reason  # the normal parser's reason


def test_warnings_of_fixtures() -> None:
    enospc = parse_normal.parse_text((FIO / "normal_error_enospc_partial.txt").read_text())
    assert enospc.warnings == ["fio job 'fill-enospc' ended with error=28 (ENOSPC)"]
    cut = parse_normal.parse_text((FIO / "normal_truncated_by_pipe_head_1500.txt").read_text())
    assert any("ends mid-line" in w for w in cut.warnings)
    assert {r["operation"] for r in cut.rows} == {"write"}  # the write block itself is complete


# --- the MANIFEST's "Key numbers" (extracted by the fixture author's own script) -----------------

_BIN = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_SUFFIX = {"": 1, "k": 1e3, "M": 1e6}
_UNIT_S = {"nsec": 1e-9, "usec": 1e-6, "msec": 1e-3}


def _count(text: str) -> float:
    return float(text[:-1]) * _SUFFIX[text[-1]] if text[-1] in "kM" else float(text)


def _binary(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)([KMGT]?)i?B?(?:/s)?", text)
    assert m, text
    return float(m.group(1)) * _BIN[m.group(2)]


def _key_numbers(stem: str) -> str:
    section = MANIFEST.split("\n### ")
    body = next(s for s in section if re.match(rf"\d+\. {re.escape(stem)}\n", s))
    return body.split("Key numbers", 1)[1].split("```")[1]


def _manifest_normal(stem: str) -> list[dict]:
    """One dict per direction block listed, in order: job, op, main line numbers, clat, percentiles."""
    blocks: list[dict] = []
    job = ""
    for line in _key_numbers(stem).splitlines():
        line = line.strip()
        if m := re.match(r"job header: (.+?): \(groupid=(\d+)", line):
            job = m.group(1)
        elif m := re.match(r"(read|write|trim) line:", line):
            blocks.append({"job": job, "op": m.group(1)})
        elif m := re.match(r"-> IOPS=(\S+) BW=(\S+) io=(\S+) runtime=(\d+)msec", line):
            blocks[-1].update(iops=_count(m.group(1)), bandwidth=_binary(m.group(2)),
                              io_bytes=_binary(m.group(3)), runtime=int(m.group(4)) / 1e3)
        elif m := re.match(r"clat line: clat \((\w+)\): min=(\S+), max=(\S+), avg=(\S+), stdev=(\S+)", line):
            f = _UNIT_S[m.group(1)]
            blocks[-1].update(clat_min=_count(m.group(2)) * f, clat_max=_count(m.group(3)) * f,
                              clat_mean=float(m.group(4)) * f, clat_stddev=float(m.group(5)) * f)
        elif m := re.match(r"clat percentiles \((\w+)\): 50\.00th=(\d+) 99\.00th=(\d+)", line):
            f = _UNIT_S[m.group(1)]
            blocks[-1].update(clat_p50=int(m.group(2)) * f, clat_p99=int(m.group(3)) * f)
    return blocks


def _by_block(rows: list[dict]) -> list[dict]:
    """Rows grouped per (host, job, job_index, operation), in order of appearance."""
    blocks: dict[tuple, dict] = {}
    for r in rows:
        key = (r["host"], r["job"], r["job_index"], r["operation"])
        blocks.setdefault(key, {"job": "All clients" if r["host"] == "all" else r["job"], "op": r["operation"]})
        blocks[key][r["metric"]] = r["value"]
    return list(blocks.values())


MANIFEST_NORMAL = sorted(FIO.glob("normal_*.txt")) + [FIO / "jsonnormal_single_randread_128k_libaio.txt"]


@pytest.mark.parametrize("path", MANIFEST_NORMAL, ids=[p.stem for p in MANIFEST_NORMAL])
def test_manifest_key_numbers_normal(path: Path) -> None:
    expected = _manifest_normal(path.stem)
    got = _by_block(parse_normal.parse_text(path.read_text(), str(path)).rows)
    assert len(expected) == len(got) and expected
    for want, have in zip(expected, got):
        assert (want["job"], want["op"]) == (have["job"], have["op"])
        for metric, value in want.items():
            if metric not in ("job", "op"):
                assert math.isclose(have[metric], value, rel_tol=1e-9), (want["job"], metric, have[metric], value)


def test_manifest_key_numbers_terse() -> None:
    text = _key_numbers("terse_single_read_1m_psync")
    head = re.search(r"jobname=(\S+) groupid=(\d+) error=(\d+)", text)
    nums = dict(re.findall(r"(\w+)=([\d.]+)", text.split("read:", 1)[1].splitlines()[0]))
    rows = parse_terse.parse_text((FIO / "terse_single_read_1m_psync.txt").read_text()).rows
    got = {r["metric"]: r["value"] for r in rows}
    assert {(r["job"], r["groupid"], r["operation"]) for r in rows} == {(head.group(1), int(head.group(2)), "read")}
    expected = {
        "io_bytes": float(nums["kb"]) * 1024, "bandwidth": float(nums["bw_kb"]) * 1024,
        "iops": float(nums["iops"]), "runtime": float(nums["runtime_ms"]) / 1e3,
        "clat_mean": float(nums["clat_mean_us"]) / 1e6, "clat_p50": float(nums["clat_p50_us"]) / 1e6,
        "clat_p99": float(nums["clat_p99_us"]) / 1e6, "lat_mean": float(nums["lat_mean_us"]) / 1e6,
    }
    for metric, value in expected.items():
        assert math.isclose(got[metric], value, rel_tol=1e-9), metric


# --- agreement with the JSON parser ---------------------------------------------------------------

_TOLERANCE = {"ops": 0.0, "runtime": 0.0}  # the others are printed rounded to ~3 significant digits


def test_normal_matches_json_of_the_same_run() -> None:
    # --output-format=json,normal: one run, fio's JSON document first, then the normal text
    path = FIO / "jsonnormal_single_randread_128k_libaio.txt"
    text = path.read_text()
    normal = {(r["host"], r["job"], r["job_index"], r["operation"], r["metric"]): r
              for r in parse_normal.parse_text(text).rows}
    reference = {(r["host"], r["job"], r["job_index"], r["operation"], r["metric"]): r
                 for r in parse_json.parse_text(text).rows}
    assert normal.keys() == reference.keys()
    for key, row in normal.items():
        ref = reference[key]
        assert (row["unit"], row["groupid"], row["stat"]) == (ref["unit"], ref["groupid"], ref["stat"])
        rel = _TOLERANCE.get(key[-1], 0.02)
        # latencies print as whole usec: allow one unit of the last printed digit too
        assert math.isclose(row["value"], ref["value"], rel_tol=rel, abs_tol=1e-6 if row["unit"] == "s" else 0), (
            key, row["value"], ref["value"])


def test_text_rows_have_the_shape_of_json_rows() -> None:
    json_rows = [r for p in JSON_FILES for r in _json_rows(p)]
    json_metrics = {(r["metric"], r["unit"]) for r in json_rows}
    json_columns = {tuple(sorted(r)) for r in json_rows}
    for path in NORMAL + TERSE:
        for row in _parser(path)(path.read_text(), str(path)).rows:
            assert (row["metric"], row["unit"]) in json_metrics, (path.name, row)
            assert tuple(sorted(row)) in json_columns, (path.name, sorted(row))
            assert row["tool"] == "fio" and row["stat"] == "value" and row["host"] in ("", "all")


def _json_rows(path: Path) -> list[dict]:
    try:
        return parse_json.parse_text(path.read_text(), str(path)).rows
    except ParseError:
        return []


# --- traps not covered by a fixture (texts built from the fixtures at run time) ------------------

SINGLE = (FIO / "normal_single_randrw70_4k_psync.txt").read_text()


def test_status_interval_last_report_wins() -> None:
    block = SINGLE[SINGLE.index("randrw70-psync: (groupid=0"):]
    later = block.replace("IOPS=36.5k, BW=142MiB/s", "IOPS=40.0k, BW=156MiB/s")
    result = parse_normal.parse_text(SINGLE + later)
    read = {r["metric"]: r["value"] for r in result.rows if r["operation"] == "read"}
    assert read["iops"] == 40000.0 and read["bandwidth"] == 156 * 2**20
    assert {r["job_index"] for r in result.rows} == {0}
    assert result.meta["reports"] == 2 and any("--status-interval" in w for w in result.warnings)


def test_cut_inside_a_direction_keeps_the_complete_ones() -> None:
    cut = SINGLE[: SINGLE.index("| 30.00th=[ 1928]")]  # inside the write percentiles
    result = parse_normal.parse_text(cut)
    assert {r["operation"] for r in result.rows} == {"read"}
    assert any("ends inside the write block" in w for w in result.warnings)
    with pytest.raises(ParseError, match="before the first result block is complete"):
        parse_normal.parse_text(SINGLE[: SINGLE.index("| 30.00th=[    9]")])


def test_lines_prefixed_by_hostname_and_decimal_units() -> None:
    text = "\n".join("<host1> " + line for line in SINGLE.splitlines())
    assert parse_normal.parse_text(text).rows == parse_normal.parse_text(SINGLE).rows
    # kb_base=1000 prints the decimal figure first: MB is then 10**6
    decimal = SINGLE.replace("BW=142MiB/s (149MB/s)(22.2MiB/156msec)", "BW=149MB/s (142MiB/s)(23.3MB/156msec)")
    read = {r["metric"]: r["value"] for r in parse_normal.parse_text(decimal).rows if r["operation"] == "read"}
    assert read["bandwidth"] == 149e6 and read["io_bytes"] == 23.3e6


# hand-written in fio 2.x's layout (fields as fio 2.x stat.c prints them; not a captured output)
FIO2 = """\
randread: (groupid=0, jobs=1): err= 0: pid=4321: Tue Mar  1 10:00:00 2016
  read : io=262144KB, bw=52428KB/s, iops=13107, runt=  5000msec
    clat (usec): min=31, max=4216, avg=72.95, stdev=30.00
     lat (usec): min=35, max=4221, avg=76.23, stdev=30.05
    clat percentiles (usec):
     |  1.00th=[   45],  5.00th=[   50], 10.00th=[   53], 20.00th=[   57],
     | 30.00th=[   61], 40.00th=[   65], 50.00th=[   69], 60.00th=[   73],
     | 70.00th=[   78], 80.00th=[   85], 90.00th=[   96], 95.00th=[  107],
     | 99.00th=[  137], 99.50th=[  157], 99.90th=[  235], 99.95th=[  302],
     | 99.99th=[  812]
    bw (KB  /s): min=50720, max=53912, per=100.00%, avg=52470.40, stdev=1131.32
    lat (usec) : 50=5.01%, 100=87.47%, 250=7.45%, 500=0.04%, 750=0.01%
  cpu          : usr=4.38%, sys=12.34%, ctx=65604, majf=0, minf=25
     issued    : total=r=65536/w=0/d=0, short=r=0/w=0/d=0, drop=r=0/w=0/d=0

Run status group 0 (all jobs):
   READ: io=262144KB, aggrb=52428KB/s, minb=52428KB/s, maxb=52428KB/s, mint=5000msec, maxt=5000msec
"""


def test_fio2_layout() -> None:
    got = {r["metric"]: r["value"] for r in parse_normal.parse_text(FIO2).rows}
    assert got["io_bytes"] == 262144 * 1024 and got["bandwidth"] == 52428 * 1024
    assert got["iops"] == 13107 and got["runtime"] == 5.0 and got["ops"] == 65536
    assert got["clat_p50"] == 69e-6 and got["clat_p99.9"] == 235e-6 and got["lat_mean"] == 76.23e-6


# terse: other versions and client/server, built from the v3 fixture line
TERSE_V3 = (FIO / "terse_single_read_1m_psync.txt").read_text().strip().split(";")
READ, WRITE, TAIL, DISK = TERSE_V3[5:46], TERSE_V3[46:87], TERSE_V3[87:121], TERSE_V3[121:]
V5_EXTRA = ["3", "5000", "5400", "5333.0", "10.0", "3"]


def _line(*parts: list[str]) -> str:
    return ";".join(x for part in parts for x in part)


def test_terse_versions_give_the_same_rows() -> None:
    v3 = parse_terse.parse_text(";".join(TERSE_V3)).rows
    head = TERSE_V3[1:5]
    v5 = _line(["5"], head, READ, V5_EXTRA, WRITE, V5_EXTRA, WRITE, V5_EXTRA, TAIL, DISK)
    v4 = _line(["4"], head, READ, WRITE, WRITE, TAIL, DISK)
    v2 = _line(["2"], head[1:], READ, WRITE, WRITE, TAIL)
    for text, version in ((v5, 5), (v4, 4), (v2, 2)):
        result = parse_terse.parse_text(text)
        assert result.rows == v3 and result.meta["terse_version"] == version


def test_terse_client_server() -> None:
    all_clients = [f if "%=" not in f else "0%=0" for f in READ]
    text = "\n".join([
        "hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1",
        "<vm> seqread-1m: (g=0): rw=read, bs=(R) 1024KiB-1024KiB, ioengine=psync, iodepth=1",
        "<vm> Starting 1 process",
        _line(TERSE_V3[:5], READ, WRITE, TAIL), ";" + ";".join(DISK),
        _line(TERSE_V3[:5], READ, WRITE, TAIL), ";" + ";".join(DISK),
        _line(TERSE_V3[:2], ["All clients", "0", "0"], all_clients, WRITE, TAIL),
    ]) + "\n"
    rows = parse_terse.parse_text(text).rows
    assert [(r["host"], r["job_index"]) for r in rows if r["metric"] == "iops"] == [("", 0), ("", 1), ("all", 0)]
    assert {r["job"] for r in rows} == {"seqread-1m"}
    assert not any(r["metric"].startswith("clat_p") for r in rows if r["host"] == "all")


def test_terse_cut_and_error_lines() -> None:
    text = ";".join(TERSE_V3)
    with pytest.raises(ParseError, match="cut off or malformed"):
        parse_terse.parse_text(text[: len(text) // 2])
    failed = ";".join(TERSE_V3[:4] + ["13"] + ["0"] * 4 + TERSE_V3[9:])
    result = parse_terse.parse_text(failed)
    assert "error=13 (EACCES)" in result.warnings[0]
