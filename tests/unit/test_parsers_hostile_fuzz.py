"""Hostile inputs for every parser and for `fsbench ingest`: non-finite numbers, integers longer than
Python's int() accepts (4,300 digits), JSON nested 100,000 levels, huge lines, binary junk.

Whatever the input, a parser returns rows or raises its ParseError (never another exception, and
never its "internal parser error" fallback), and every row it returns obeys tidy.check_row: a
finite value in the metric's unit, flagged in a `warnings` column when it is negative or beyond
physical sense. Real fixtures are read in place and damaged in memory; files go to tmp_path.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsbench.core.errors import ParseError
from fsbench.core.tidy import METRIC_UNITS, PLAUSIBLE_MAX, STATS, ParseResult, check_row
from fsbench.ingest import ingest_files
from fsbench.tools import juicefs_bench, mdtest, metabench
from fsbench.tools.fio import parse_any, parse_json, parse_normal, parse_terse
from fsbench.tools.nnbench import parse as nnbench_parse
from tests.paths import FIXTURES, GOLDEN

FIO = FIXTURES / "fio"
SAMPLES = {
    "fio-json": FIO / "json_numjobs4_nogroup_randrw70_4k_libaio.json",
    "fio-json-cs": FIO / "json_cs_2clients_write_128k.json",
    "fio-normal": FIO / "normal_single_randrw70_4k_psync.txt",
    "fio-terse": FIO / "terse_single_read_1m_psync.txt",
    "mdtest": FIXTURES / "mdtest" / "3.3.0" / "iter3_np4_ext4.stdout.txt",
    "juicefs-bench": FIXTURES / "public" / "juicefs-bench" / "issue-4712_table_negative_update_meta.txt",
    "vdbench": FIXTURES / "public" / "vdbench" / "masakioui-vdb_nvme" / "50407_fs_1host_read" / "totals.html",
    "metabench": GOLDEN / "metabench" / "inputs" / "calls_tmpfs_200_iterations.json",  # made here, real
    "nnbench": GOLDEN / "nnbench" / "inputs" / "s3a__maps-20" / "NNBench_results.log",
}
TEXTS = {k: p.read_text(errors="replace") for k, p in SAMPLES.items()}


def _vdbench_text(text: str, source: str) -> ParseResult:
    # vdbench parses files: the text becomes a one-file output directory
    import tempfile

    from fsbench.tools.vdbench import parse_path

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "totals.html").write_text(text, encoding="utf-8", errors="surrogatepass")
        return parse_path(Path(tmp))


PARSERS: dict[str, Callable[[str, str], ParseResult]] = {
    "fio-json": parse_json.parse_text,
    "fio-json-cs": parse_json.parse_text,
    "fio-any": parse_any,
    "fio-normal": parse_normal.parse_text,
    "fio-terse": parse_terse.parse_text,
    "mdtest": mdtest.parse_text,
    "juicefs-bench": juicefs_bench.parse_text,
    "vdbench": _vdbench_text,
    "metabench": metabench.parse_text,
    "nnbench": lambda text, source: nnbench_parse.parse_text(text, "", source),
}
SAMPLE_OF = {**{k: k for k in PARSERS}, "fio-any": "fio-json"}
INTERNAL = ("internal parser error", "unexpected parser failure")


def check(parse: Callable[[str, str], ParseResult], text: str) -> ParseResult | None:
    """Parse; assert the contract; the result (None for a ParseError)."""
    try:
        result = parse(text, "hostile")
    except ParseError as exc:
        assert exc.reason and not exc.reason.startswith(INTERNAL), exc.reason
        return None
    for row in result.rows:
        value = row["value"]
        assert isinstance(value, float) and math.isfinite(value), row
        assert row["unit"] == METRIC_UNITS[row["metric"]] and row["stat"] in STATS, row
        bad = value < 0 or value > PLAUSIBLE_MAX[row["unit"]]
        assert bool(row.get("warnings")) == bad or (not bad and row.get("warnings")), row
        assert check_row(row) is None or row.get("warnings"), row
    assert all(isinstance(w, str) for w in result.warnings)
    return result


# --- the families ----------------------------------------------------------------------------------

BIG_INT = "9" * 4400  # int("9" * 4400) raises ValueError in Python 3.11+
DEEP_JSON = '{"a":' * 100_000 + "1" + "}" * 100_000
DEEP_LIST = "[" * 100_000 + "]" * 100_000
NON_FINITE_JSON = ("NaN", "Infinity", "-Infinity", "1e999", "-1e999")
NON_FINITE_TEXT = ("nan", "inf", "-inf", "NaN", "Infinity", "-nan", "1e999")
_JSON_NUMBER = re.compile(r'(?<=: )-?\d+(?:\.\d+)?(?=,?\n)')
_TEXT_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def replace_numbers(text: str, pattern: re.Pattern, tokens: tuple[str, ...], rnd: random.Random,
                    share: float) -> str:
    """Replace a share of the numbers in a text by hostile tokens."""
    return pattern.sub(lambda m: rnd.choice(tokens) if rnd.random() < share else m.group(), text)


def crafted(which: str) -> list[str]:
    """Hand-made hostile variants of a sample text (about 20 per parser)."""
    text = TEXTS[SAMPLE_OF[which]]
    pattern = _JSON_NUMBER if which.startswith("fio-json") or which == "fio-any" else _TEXT_NUMBER
    rnd = random.Random(which)
    out = [
        replace_numbers(text, pattern, NON_FINITE_JSON if pattern is _JSON_NUMBER else NON_FINITE_TEXT, rnd, 1.0),
        replace_numbers(text, pattern, NON_FINITE_JSON if pattern is _JSON_NUMBER else NON_FINITE_TEXT, rnd, 0.3),
        replace_numbers(text, pattern, (BIG_INT, "-" + BIG_INT), rnd, 1.0),
        replace_numbers(text, pattern, (BIG_INT,), rnd, 0.2),
        replace_numbers(text, pattern, ("-5", "-0.001", "1e300", "1e16"), rnd, 0.5),
        text[: len(text) // 2] + DEEP_JSON + text[len(text) // 2:],
        DEEP_JSON, DEEP_LIST, "{\n" + DEEP_LIST[:20_000] + "\n",
        '{\n"jobs": ' + DEEP_LIST + "\n}\n",  # decodes as far as Python's recursion limit
        "x" * 3_000_000,  # one huge line without a line end
        text + "y" * 3_000_000,
        text.replace("\n", " ", 50),  # lines glued together
        "\ufeff" + text,
        bytes(rnd.getrandbits(8) for _ in range(20_000)).decode("utf-8", "replace"),
        text[:1000] + "\x00" * 5000 + text[1000:],
        "",
        "\n" * 1000,
        text.replace("1", BIG_INT, 3),
    ]
    if pattern is _JSON_NUMBER:
        start = 0 if text.startswith("{") else text.index("\n{\n") + 1  # client/server: text first
        doc = json.JSONDecoder().raw_decode(text, start)[0]
        out += [json.dumps(doc), json.dumps(doc).replace('"jobs"', '"jobs"' * 2, 1),
                text.replace('"groupid" : 0', f'"groupid" : {BIG_INT}'),
                text.replace('"error" : 0', '"error" : Infinity'),
                text.replace('"50.000000"', f'"{BIG_INT}"'),
                text.replace('"jobname"', '"jobname" : {"x": 1}, "ignored"', 1)]
    return out


@pytest.mark.parametrize("which", sorted(PARSERS))
def test_crafted_inputs(which: str) -> None:
    for i, text in enumerate(crafted(which)):
        try:
            check(PARSERS[which], text)
        except AssertionError as exc:
            raise AssertionError(f"{which}: crafted input #{i}: {exc}") from None


# --- property tests over the same families ---------------------------------------------------------

FUZZ = settings(max_examples=60, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
HOSTILE = st.sampled_from([*NON_FINITE_JSON, *NON_FINITE_TEXT, BIG_INT, "-" + BIG_INT, "-1", "1e300",
                           DEEP_LIST[:4000], '{"a":' * 2000, "\x00\xff\ufffd", "\ufeff{", "{\n", "}\n"])


@pytest.mark.parametrize("which", sorted(PARSERS))
@FUZZ
@given(seed=st.integers(0, 2**32), share=st.floats(0.0, 1.0), cut=st.floats(0.0, 1.0))
def test_hostile_numbers(which: str, seed: int, share: float, cut: float) -> None:
    text = TEXTS[SAMPLE_OF[which]]
    json_like = which.startswith("fio-json") or which == "fio-any"
    pattern = _JSON_NUMBER if json_like else _TEXT_NUMBER
    rnd = random.Random(seed)
    tokens = (*NON_FINITE_JSON, BIG_INT, "-7", "1e300") if json_like else (*NON_FINITE_TEXT, BIG_INT, "-7", "1e300")
    damaged = replace_numbers(text, pattern, tokens, rnd, share)
    check(PARSERS[which], damaged[: max(1, int(len(damaged) * (0.5 + cut / 2)))])


@pytest.mark.parametrize("which", sorted(PARSERS))
@FUZZ
@given(edits=st.lists(st.tuples(st.floats(0.0, 1.0), HOSTILE | st.binary(max_size=200).map(
    lambda b: b.decode("utf-8", "replace"))), min_size=1, max_size=6))
def test_hostile_splices(which: str, edits: list[tuple[float, str]]) -> None:
    text = TEXTS[SAMPLE_OF[which]]
    for where, piece in edits:
        at = int(len(text) * where)
        text = text[:at] + piece + text[at:]
    check(PARSERS[which], text)


# --- implausible values are flagged, not silently accepted or dropped --------------------------------


def test_fio_json_flags_negative_and_huge_and_drops_non_finite() -> None:
    doc = json.loads(TEXTS["fio-json"])
    read = doc["jobs"][0]["read"]  # numjobs=4 without group_reporting: job_index 0 is the first
    read["bw_bytes"], read["iops"], read["clat_ns"]["mean"] = -4096, 1e300, float("nan")
    result = parse_json.parse_text(json.dumps(doc))
    job0 = {r["metric"]: r for r in result.rows if r["job_index"] == 0 and r["operation"] == "read"}
    assert job0["bandwidth"]["value"] == -4096 and "negative bandwidth" in job0["bandwidth"]["warnings"]
    assert "beyond physical sense" in job0["iops"]["warnings"]
    assert "clat_mean" not in job0 and "warnings" not in job0["clat_max"]
    assert any("clat_mean: value nan is not a finite number; left out" in w for w in result.warnings)
    assert any("negative bandwidth" in w and "flagged" in w for w in result.warnings)


def test_fio_json_integers_too_long_for_a_float_or_for_int_are_left_out_with_a_warning() -> None:
    """JSON's integers are read as ints: one of 400 digits does not fit a float, one of 4,400 is refused
    by int() itself (the object is then decoded again with every integer a float). Either is left out
    with a warning; the rest of the job is kept."""
    doc = json.loads(TEXTS["fio-json"])
    text = json.dumps(doc).replace('"total_ios": ', '"total_ios": ' + "9" * 400, 1)
    text = text.replace('"io_bytes": ', '"io_bytes": ' + BIG_INT, 1)
    result = parse_json.parse_text(text)
    job0 = {r["metric"]: r for r in result.rows if r["job_index"] == 0 and r["operation"] == "read"}
    assert "ops" not in job0 and "io_bytes" not in job0 and job0["bandwidth"]["value"] > 0
    assert any("read ops: value inf is not a finite number; left out" in w for w in result.warnings)
    assert any("read io_bytes: value inf is not a finite number; left out" in w for w in result.warnings)


def test_text_parsers_flag_negative_values() -> None:
    # "   Directory creation        :      -1416.582 ..." : a rate cannot be negative
    negative = mdtest.parse_text(re.sub(r"(Directory creation\s+:\s+)(\d)", r"\1-\2", TEXTS["mdtest"], count=1))
    flagged = [r for r in negative.rows if r.get("warnings")]
    assert [(r["operation"], r["stat"]) for r in flagged] == [("directory_creation", "max")]
    assert flagged[0]["value"] < 0 and flagged[0]["warnings"].startswith("negative rate")
    assert any("directory_creation: negative rate" in w for w in negative.warnings)
    vdb = _vdbench_text(TEXTS["vdbench"].replace(" 1871049  0.003", " -1871049  0.003", 1), "x")
    assert [r["metric"] for r in vdb.rows if r.get("warnings")] == ["rate"]


def test_non_finite_latency_in_fio_text_is_a_warning() -> None:
    text = TEXTS["fio-normal"]
    line = next(x for x in text.splitlines() if x.lstrip().startswith("clat (usec)"))
    result = parse_normal.parse_text(text.replace(line, "    clat (usec): min=inf, max=nan, avg=inf, stdev=nan", 1))
    read = {r["metric"] for r in result.rows if r["operation"] == "read"}
    assert "clat_mean" not in read and "clat_p50" in read and "lat_mean" in read  # the rest of the block
    assert any("unreadable latency line" in w for w in result.warnings)


def test_huge_numbers_do_not_escape_as_value_errors() -> None:
    # `groupid=<4,400 digits>` once made int() raise ValueError inside the normal-text parser
    text = TEXTS["fio-normal"].replace("(groupid=0,", f"(groupid={BIG_INT},")
    with pytest.raises(ParseError):
        parse_normal.parse_text(text)
    assert check(parse_terse.parse_text, TEXTS["fio-terse"].replace(";0;0;", f";{BIG_INT};0;", 1)) is None


# --- `fsbench ingest`: the same families as files ----------------------------------------------------

INGEST_TOOL = {"fio-json": "fio", "fio-normal": "fio", "fio-terse": "fio", "mdtest": "mdtest",
               "juicefs-bench": "juicefs-bench", "vdbench": "vdbench", "metabench": "metabench", "nnbench": "nnbench"}


@pytest.mark.parametrize("which", sorted(INGEST_TOOL))
def test_ingest_never_raises(which: str, tmp_path: Path) -> None:
    files = []
    for i, text in enumerate(crafted(which)):
        f = tmp_path / f"input{i}.html"
        f.write_text(text, encoding="utf-8", errors="surrogatepass")
        files.append(str(f))
    junk = tmp_path / "junk.bin"
    junk.write_bytes(random.Random(1).randbytes(200_000))
    rows, errors = ingest_files(INGEST_TOOL[which], [*files, str(junk), str(tmp_path / "missing")])
    assert all(isinstance(e, ParseError) and not e.reason.startswith(INTERNAL) for e in errors), errors
    assert str(tmp_path / "missing") in {e.file for e in errors}
    for row in rows:
        assert isinstance(row["value"], float) and math.isfinite(row["value"])


# --- a run's parse (parse_outputs over a case's raw folder): the same families as its outputs ---------------

#: which -> (tool, where the run keeps the output in its raw folder)
RUN_OUTPUT = {"fio-json": ("fio", "fio.json"), "fio-normal": ("fio", "stdout"), "fio-terse": ("fio", "stdout"),
              "mdtest": ("mdtest", "stdout"), "juicefs-bench": ("juicefs-bench", "stdout"),
              "vdbench": ("vdbench", "output/totals.html"), "metabench": ("metabench", "metabench.json"),
              "nnbench": ("nnbench", "NNBench_results.log")}


@pytest.mark.parametrize("which", sorted(RUN_OUTPUT))
def test_a_runs_parse_never_raises(which: str, tmp_path: Path) -> None:
    from fsbench.tools import get_tool

    tool, name = RUN_OUTPUT[which]
    for i, text in enumerate(crafted(which)):
        raw = tmp_path / f"raw{i}"
        (raw / name).parent.mkdir(parents=True)
        (raw / name).write_text(text, encoding="utf-8", errors="surrogatepass")
        (raw / "stderr").write_text(text[:5000], encoding="utf-8", errors="surrogatepass")
        check(lambda _text, _source, raw=raw: get_tool(tool).parse_outputs(raw), text)
    junk = tmp_path / "junk"
    (junk / name).parent.mkdir(parents=True)
    (junk / name).write_bytes(random.Random(2).randbytes(200_000))
    check(lambda _text, _source: get_tool(tool).parse_outputs(junk), "")
    empty = tmp_path / "empty"
    empty.mkdir()
    check(lambda _text, _source: get_tool(tool).parse_outputs(empty), "")
