"""fio JSON beyond fio 3.33's own layout: fio 2.x units, a byte-order mark, one-line JSON, files read
as a stream. Inputs live in tests/golden/fio/inputs: the fio-2.x files are built from the documented
format (output-formats.md, "Older formats met in the wild"; no fio 2.x binary was run), the
fio-3.33 ones are real runs, re-encoded as their names say."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fsbench.core.errors import ParseError
from fsbench.tools.fio import parse_any, parse_json
from fsbench.tools.fio.parsed_jobs import whole_file_io
from tests.golden.golden import check_golden
from tests.paths import FIXTURES, GOLDEN

INPUTS = GOLDEN / "fio" / "inputs"
FIO2_OLD = INPUTS / "fio-2.1_json_constructed_from_docs_randread_psync.json"
FIO2_NEW = INPUTS / "fio-2.16_json_constructed_from_docs_randrw_libaio.json"
BOM = INPUTS / "fio-3.33_json_with_utf8_bom_randread_psync.json"
ONE_LINE = INPUTS / "fio-3.33_json_on_one_line_write_libaio.json"
SHARED = sorted((FIXTURES / "fio").glob("*.json")) + sorted((FIXTURES / "fio").glob("*.txt"))


@pytest.mark.parametrize("path", sorted(INPUTS.iterdir()), ids=lambda p: p.name)
def test_golden(path: Path) -> None:
    result = parse_any(path)
    check_golden(result.rows, GOLDEN / "fio" / f"{path.stem}.csv")
    assert parse_any(path.read_text(encoding="utf-8")).rows == result.rows  # as a string, same rows


def _values(path: Path, op: str) -> dict[str, float]:
    return {r["metric"]: r["value"] for r in parse_any(path).rows if r["operation"] == op}


def test_fio2_units_are_kib_ms_and_usec() -> None:
    got = _values(FIO2_OLD, "read")
    # "io_bytes" : 409600 and "bw" : 40960 are KiB and KiB/s in fio 2.x
    assert got["io_bytes"] == 409600 * 1024 and got["bandwidth"] == 40960 * 1024
    assert got["iops"] == 10240 and got["runtime"] == 10.0
    # clat/lat objects are usec: "mean" : 95.400000, percentile "99.000000" : 175, "99.900000" : 422
    assert got["clat_mean"] == pytest.approx(95.4e-6) and got["clat_min"] == pytest.approx(41e-6)
    assert got["clat_max"] == pytest.approx(8816e-6) and got["clat_stddev"] == pytest.approx(31.62e-6)
    assert got["clat_p50"] == pytest.approx(92e-6) and got["clat_p99"] == pytest.approx(175e-6)
    assert got["clat_p99.9"] == pytest.approx(422e-6) and got["lat_mean"] == pytest.approx(96.11e-6)
    # psync has no submission latency (slat all 0) and fio 2.1 prints no total_ios
    assert "slat_mean" not in got and "ops" not in got
    assert {r["operation"] for r in parse_any(FIO2_OLD).rows} == {"read"}  # write/trim moved nothing


def test_later_fio2_has_total_ios_and_slat() -> None:
    read, write = _values(FIO2_NEW, "read"), _values(FIO2_NEW, "write")
    assert read["io_bytes"] == 560000 * 1024 and read["bandwidth"] == 28000 * 1024
    assert read["ops"] == 140000 and write["ops"] == 60000 and write["iops"] == 3000
    assert read["slat_mean"] == pytest.approx(6.52e-6) and write["slat_mean"] == pytest.approx(7.8e-6)
    assert read["clat_p95"] == pytest.approx(2384e-6) and write["clat_p90"] == pytest.approx(1832e-6)
    assert parse_any(FIO2_NEW).meta["fio_version"] == "fio-2.16"


def test_units_follow_the_keys_not_the_version_string() -> None:
    # a tool that re-serialises fio 2.x JSON may drop "fio version": the keys still tell
    doc = json.loads(FIO2_OLD.read_text())
    del doc["fio version"]
    rows = parse_json.parse_text(json.dumps(doc)).rows
    assert {r["metric"]: r["value"] for r in rows}["io_bytes"] == 409600 * 1024


def test_byte_order_mark_changes_nothing() -> None:
    text = BOM.read_bytes().decode("utf-8")
    assert text.startswith("\ufeff{")
    plain = parse_json.parse_text(text[1:]).rows
    assert plain and parse_any(BOM).rows == plain and parse_json.parse_text(text).rows == plain
    assert parse_any(text).rows == plain  # the format sniffer sees the object behind the mark


def test_one_line_json_equals_fio_layout() -> None:
    text = ONE_LINE.read_text()
    assert text.count("\n") == 1
    pretty = json.dumps(json.loads(text), indent=2)  # `{` alone on the first line, as fio prints it
    assert parse_any(text).rows == parse_json.parse_text(pretty).rows
    assert {r["operation"] for r in parse_any(ONE_LINE).rows} == {"write"}
    # an object on one line after fio's text preamble, as with --output-format=normal,json
    assert parse_any("fio-3.33\nStarting 1 process\n" + text).rows == parse_any(text).rows


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name)
def test_a_file_read_as_a_stream_gives_the_rows_of_its_text(path: Path) -> None:
    try:
        from_text = parse_any(path.read_text(errors="replace"), str(path))
    except ParseError as exc:
        with pytest.raises(ParseError) as info:
            parse_any(path)
        assert info.value.reason == exc.reason
        return
    from_file = parse_any(path)
    assert from_file.rows == from_text.rows and from_file.warnings == from_text.warnings


@pytest.mark.parametrize("name", ["json_status_interval_timebased_randread.json", "json_cs_2clients_write_128k.json",
                                  "jsonnormal_single_randread_128k_libaio.txt"])
@pytest.mark.parametrize("size", [1, 7, 4096])
def test_any_chunking_gives_the_same_rows(name: str, size: int) -> None:
    text = (FIXTURES / "fio" / name).read_text()
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    assert parse_json.parse_chunks(chunks).rows == parse_json.parse_text(text).rows


@pytest.mark.parametrize("path", sorted((FIXTURES / "fio").glob("json*")), ids=lambda p: p.name)
def test_a_short_text_read_from_its_last_object_gives_what_reading_every_object_gives(path: Path) -> None:
    """A text held whole is read from its last object that begins a line when that is a complete result with
    nothing after it (a status-interval output's earlier results are not decoded); the rows, warnings and
    meta are those of reading every object in order, and a text where that does not hold is read in order."""
    text = path.read_text()
    try:
        every = parse_json.parse_chunks([text], streaming=False)
    except ParseError as exc:
        with pytest.raises(ParseError, match=re.escape(str(exc.reason))):
            parse_json.parse_text(text)
        return
    got = parse_json.parse_text(text)
    assert (got.rows, got.warnings, got.meta) == (every.rows, every.warnings, every.meta)
    # the same output cut inside its last object, or followed by another line that starts an object
    for odd in (text[: text.rstrip().rfind("}")], text + "{not json\n"):
        try:
            expected = parse_json.parse_chunks([odd], streaming=False)
        except ParseError:
            with pytest.raises(ParseError):
                parse_json.parse_text(odd)
            continue
        got = parse_json.parse_text(odd)
        assert (got.rows, got.warnings, got.meta) == (expected.rows, expected.warnings, expected.meta)


def test_objects_longer_than_a_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    # read 64 characters at a time: every object needs the buffer to grow, then the rest of the text
    monkeypatch.setattr(parse_json, "CHUNK", 64)
    text = (FIXTURES / "fio" / "json_status_interval_timebased_randread.json").read_text()
    chunks = [text[i:i + 64] for i in range(0, len(text), 64)]
    result, whole = parse_json.parse_chunks(chunks), parse_json.parse_text(text)
    assert result.rows == whole.rows and result.meta == whole.meta == {"fio_version": "fio-3.33", "objects": 3}


def test_unreadable_file_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="cannot read"):
        parse_any(tmp_path / "missing.json")
    with pytest.raises(ParseError, match="cannot read"):
        parse_any(tmp_path)  # a directory


SMALL_FILES = INPUTS / "fio-3.33_json_small_files_bs_equals_filesize_read_psync.json"


def test_whole_file_reads_are_counted_in_files_per_second() -> None:
    # a real run: 2 threads x 20 files of 128k read with bs=128k (bs in the job, filesize in [global])
    rows = [r for r in parse_any(SMALL_FILES).rows if r["metric"] in ("iops", "file_rate", "ops")]
    by_job: dict[int, dict[str, float]] = {}
    for r in rows:
        by_job.setdefault(r["job_index"], {})[r["metric"]] = r["value"]
    assert len(by_job) == 2
    for values in by_job.values():
        assert values["ops"] == 20 and values["file_rate"] == values["iops"] > 0
    assert {r["unit"] for r in parse_any(SMALL_FILES).rows if r["metric"] == "file_rate"} == {"file/s"}


@pytest.mark.parametrize("options, whole", [
    ({"bs": "128k", "filesize": "128k"}, True),
    ({"bs": "131072", "filesize": "128KiB"}, True),
    ({"bs": "4k", "filesize": "128k"}, False),
    ({"bs": "128k", "filesize": "64k-128k"}, False),  # a range is not one size
    ({"bs": "128k,4k", "filesize": "128k"}, False),  # per-direction block sizes
    ({"bs": "128k"}, False),
    ({"bs": "x", "filesize": "x"}, False),
])
def test_whole_file_io(options: dict, whole: bool) -> None:
    assert whole_file_io(options) is whole


def test_other_outputs_have_no_file_rate() -> None:
    assert not [r for r in parse_any(ONE_LINE).rows if r["metric"] == "file_rate"]
