"""Property test: damaged fio normal/terse and juicefs bench text gives rows with finite values or a
ParseError, never another exception."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsbench.core.errors import ParseError
from fsbench.core.tidy import METRIC_UNITS, ParseResult
from fsbench.tools import juicefs_bench
from fsbench.tools.fio import parse_normal, parse_terse
from tests.paths import FIXTURES

FIO = FIXTURES / "fio"
#: shapes: read+write, numjobs, client/server with All clients, error, cut off, an older fio
NORMAL = [FIO / f"{n}.txt" for n in (
    "normal_single_randrw70_4k_psync", "normal_numjobs4_nogroup_randread_4k_psync",
    "normal_cs_2clients_randread_4k", "normal_error_enospc_partial", "normal_truncated_by_pipe_head_1500",
)] + [FIXTURES / "public/fio-public/hero0906-jiaoben_fio-3.7_fio_4Kread1.log"]
TERSE = [FIO / "terse_single_read_1m_psync.txt"]
JUICEFS = sorted((FIXTURES / "public/juicefs-bench").iterdir())
PARSERS: dict[str, tuple[Callable[[str, str], ParseResult], list[str]]] = {
    "fio-normal": (parse_normal.parse_text, [p.read_text(errors="replace") for p in NORMAL]),
    "fio-terse": (parse_terse.parse_text, [p.read_text(errors="replace") for p in TERSE]),
    "juicefs-bench": (juicefs_bench.parse_text, [p.read_text(errors="replace") for p in JUICEFS]),
}
# no example database, so nothing is written into the repository
FUZZ = settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
#: pieces that matter to these formats, so random edits hit separators, suffixes and units often
TOKENS = list("0123456789.;|:=,()[]%kMGKiB/s -\n\r\te\x00") + ["\x1b[0m", "msec", "usec", "MiB/s", "read: ", "9" * 400]


def _tokens(max_size: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(TOKENS), max_size=max_size).map("".join)


def _check(parse: Callable[[str, str], ParseResult], text: str) -> None:
    try:
        result = parse(text, "fuzz")
    except ParseError as exc:
        assert exc.reason
        return
    for row in result.rows:
        assert isinstance(row["value"], float) and math.isfinite(row["value"]), row
        assert row["unit"] == METRIC_UNITS[row["metric"]] and row["stat"] == "value", row
    assert all(isinstance(w, str) for w in result.warnings)


each_parser = pytest.mark.parametrize("which", sorted(PARSERS))


@each_parser
@FUZZ
@given(st.data(), st.floats(0.0, 1.0))
def test_truncated(which: str, data: st.DataObject, where: float) -> None:
    parse, texts = PARSERS[which]
    text = data.draw(st.sampled_from(texts))
    _check(parse, text[: int(len(text) * where)])


@each_parser
@FUZZ
@given(st.data(), st.lists(st.tuples(st.floats(0.0, 1.0), _tokens(8)), max_size=10))
def test_mutated(which: str, data: st.DataObject, edits: list[tuple[float, str]]) -> None:
    parse, texts = PARSERS[which]
    text = data.draw(st.sampled_from(texts))
    for where, insert in edits:
        at = int(len(text) * where)
        text = text[:at] + insert + text[at + len(insert) // 2:]  # replace some characters, insert others
    _check(parse, text)


@each_parser
@FUZZ
@given(st.data(), st.lists(st.tuples(st.booleans(), st.floats(0.0, 1.0)), max_size=12))
def test_lines_deleted_or_duplicated(which: str, data: st.DataObject, edits: list[tuple[bool, float]]) -> None:
    parse, texts = PARSERS[which]
    lines = data.draw(st.sampled_from(texts)).split("\n")
    for duplicate, where in edits:
        if not lines:
            break
        i = min(int(len(lines) * where), len(lines) - 1)
        lines[i:i + 1] = [lines[i], lines[i]] if duplicate else []
    _check(parse, "\n".join(lines))


@each_parser
@FUZZ
@given(st.text(max_size=400) | _tokens(200))
def test_random_text(which: str, text: str) -> None:
    _check(PARSERS[which][0], text)
