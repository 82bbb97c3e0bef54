"""Golden tests of the fio JSON parser over ../shared/fixtures/fio, cross-checked with its MANIFEST."""

import re
from collections import Counter

import pytest

from fsbench.core.errors import ParseError
from fsbench.tools.fio import parse_any
from fsbench.tools.fio.parse_json import parse_text
from tests.golden.golden import check_golden
from tests.paths import FIXTURES, GOLDEN

FIO = FIXTURES / "fio"
JSON_FILES = sorted(p for p in FIO.glob("json*") if p.suffix in (".json", ".txt"))
#: files with no usable result, and why
NO_RESULT = {"json_error_permission_denied_nobody.json": "error=13 (EACCES)"}


def test_fixtures_are_there():
    assert len(JSON_FILES) >= 15, f"expected the shared fio fixtures in {FIO}"


@pytest.mark.parametrize("path", JSON_FILES, ids=lambda p: p.name)
def test_golden(path):
    text = path.read_text()
    if path.name in NO_RESULT:
        with pytest.raises(ParseError, match=re.escape(NO_RESULT[path.name])):
            parse_text(text, path.name)
        return
    result = parse_text(text, path.name)
    check_golden(result.rows, GOLDEN / "fio" / f"{path.stem}.csv")
    assert parse_any(text, path.name).rows == result.rows  # the format sniffer agrees


def _manifest_cases() -> dict[str, list[dict]]:
    """{output file: [entry, ...]} from the MANIFEST's key numbers (last JSON object only)."""
    text = (FIO / "MANIFEST.md").read_text()
    cases = {}
    for block in re.finditer(r"Key numbers \(from `([^`]+\.json|jsonnormal[^`]+)`\):\n\n```\n(.*?)```", text, re.S):
        name, body = block.groups()
        body = body.split("object #")[-1]  # the final object is the result
        entries, cur = [], None
        for line in body.splitlines():
            m = re.match(r"\s*(job|client_stats) jobname='([^']*)'.*?(?:hostname='([^']*)')?.*$", line)
            if m and "jobname=" in line:
                host = re.search(r"hostname='([^']*)'", line)
                cur = {"job": m.group(2), "host": host.group(1) if host else "", "dirs": {}}
                entries.append(cur)
                continue
            d = re.match(r"\s*(read|write|trim): io_kbytes=(\d+) bw\(KiB/s\)=\d+ bw_bytes=(\d+) iops=([\d.]+) "
                         r"runtime\(ms\)=(\d+) total_ios=(\d+)", line)
            if d and cur is not None:
                cur["dirs"][d.group(1)] = {"io_bytes": int(d.group(2)) * 1024, "bandwidth": float(d.group(3)),
                                           "iops": float(d.group(4)), "runtime": int(d.group(5)) / 1e3,
                                           "ops": float(d.group(6))}
            c = re.match(r"\s*(read|write|trim): clat_ns: mean=([\d.]+) min=(\d+) max=(\d+)(?: p50=(\d+) p99=(\d+))?",
                         line)
            if c and cur is not None and c.group(1) in cur["dirs"]:
                dd = cur["dirs"][c.group(1)]
                dd.update(clat_mean=float(c.group(2)) / 1e9, clat_min=float(c.group(3)) / 1e9,
                          clat_max=float(c.group(4)) / 1e9)
                if c.group(5):
                    dd.update(clat_p50=float(c.group(5)) / 1e9, clat_p99=float(c.group(6)) / 1e9)
        cases[name] = entries
    return cases


MANIFEST = _manifest_cases()


def test_manifest_was_read():
    assert len(MANIFEST) >= 14 and sum(len(e) for e in MANIFEST.values()) >= 20


@pytest.mark.parametrize("name", sorted(MANIFEST), ids=str)
def test_numbers_match_the_manifest(name):
    entries = MANIFEST[name]
    if name in NO_RESULT:
        return
    rows = parse_text((FIO / name).read_text(), name).rows
    got = {(r["host"], r["job"], r["job_index"], r["operation"], r["metric"]): r["value"] for r in rows}
    seen: Counter = Counter()
    checked = 0
    for e in entries:
        aggregate = e["job"] == "All clients"
        host = "all" if aggregate else e["host"]
        job = e["job"] if not aggregate else next(x["job"] for x in entries if x["job"] != "All clients")
        index = seen[(host, job)]
        seen[(host, job)] += 1
        for direction, values in e["dirs"].items():
            if values["io_bytes"] == 0 and values["ops"] == 0:
                assert not any(k[3] == direction and k[2] == index and k[1] == job for k in got)
                continue
            for metric, want in values.items():
                assert got[(host, job, index, direction, metric)] == pytest.approx(want, rel=1e-9), metric
                checked += 1
    assert checked > 0 or all(not e["dirs"] for e in entries)


def test_status_interval_uses_the_last_object():
    rows = parse_text((FIO / "json_status_interval_timebased_randread.json").read_text()).rows
    runtime = [r["value"] for r in rows if r["metric"] == "runtime"]
    objects = MANIFEST["json_status_interval_timebased_randread.json"]
    assert runtime == [objects[-1]["dirs"]["read"]["runtime"]]


def test_truncated_json_says_fio_was_killed():
    text = (FIO / "json_single_write_128k_libaio_direct.json").read_text()
    with pytest.raises(ParseError, match="ends before its JSON document closes: was fio killed"):
        parse_text(text[: len(text) // 2], "cut.json")


def test_empty_and_foreign_text():
    with pytest.raises(ParseError, match="empty"):
        parse_text("", "e.json")
    with pytest.raises(ParseError, match="no fio JSON document"):
        parse_text("fio: failed parsing rw=randomread\n", "x.json")
    with pytest.raises(ParseError, match="moved no data"):
        parse_text('{\n"jobs": [{"jobname": "j", "write": {"io_bytes": "lots", "total_ios": [1]}}]\n}\n', "odd")
