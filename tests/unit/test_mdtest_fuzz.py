"""Property test: damaged mdtest output gives clean rows or a ParseError, never another exception."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsbench.core.errors import ParseError
from fsbench.core.tidy import METRIC_UNITS, STATS
from fsbench.tools.mdtest import parse_text
from tests.paths import FIXTURES

MDTEST = FIXTURES / "mdtest"
#: one of each shape: NA row, -v, -P (rate + time), task scaling, rank statistics, interleaved
#: WARNING, an error run, and IO500 result lines
SAMPLE = [
    MDTEST / "3.3.0/stonewall_W1_F_np2_tmpfs.stdout.txt",
    MDTEST / "3.2.1/verbose_v_i2_np2_tmpfs.stdout.txt",
    MDTEST / "main-5fcf0ba/print_rate_time_P_i3_np4_ext4.stdout.txt",
    MDTEST / "4.0.0/task_scaling_f1_l4_s1_np4_tmpfs.stdout.txt",
    MDTEST / "main-5fcf0ba/show_rank_statistics_i3_np4_tmpfs.stdout.txt",
    MDTEST / "4.0.0/dummy_api_np2.stdout.txt",
    MDTEST / "main-5fcf0ba/error_readonly_fs_F_np1.stdout.txt",
    FIXTURES / "public/mdtest/io500-app-issue-23_result_invalid_lines_TRUNCATED.txt",
]
TEXTS = [p.read_text(errors="replace") for p in SAMPLE]
# 4 tests x 50 examples; no example database, so nothing is written into the repository
FUZZ = settings(
    max_examples=50, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def _check(text: str) -> None:
    try:
        result = parse_text(text, "fuzz")
    except ParseError as exc:
        assert not exc.reason.startswith("internal parser error"), exc.reason
        return
    assert result.rows
    for row in result.rows:
        assert isinstance(row["value"], float) and math.isfinite(row["value"]), row
        assert row["stat"] in STATS and row["unit"] == METRIC_UNITS[row["metric"]], row
        assert row["operation"] and row["tool"] in ("mdtest", "io500"), row


@FUZZ
@given(st.sampled_from(TEXTS), st.floats(0.0, 1.0))
def test_truncated(text: str, where: float) -> None:
    _check(text[: int(len(text) * where)])


@FUZZ
@given(st.sampled_from(TEXTS), st.lists(st.tuples(st.booleans(), st.floats(0.0, 1.0)), max_size=12))
def test_lines_deleted_or_duplicated(text: str, edits: list[tuple[bool, float]]) -> None:
    lines = text.split("\n")
    for duplicate, where in edits:
        if not lines:
            break
        i = min(int(len(lines) * where), len(lines) - 1)
        if duplicate:
            lines.insert(i, lines[i])
        else:
            del lines[i]
    _check("\n".join(lines))


@FUZZ
@given(st.sampled_from(TEXTS), st.floats(0.0, 1.0), st.binary(max_size=64))
def test_random_bytes_spliced_in(text: str, where: float, junk: bytes) -> None:
    data = text.encode()
    i = int(len(data) * where)
    _check((data[:i] + junk + data[i:]).decode("utf-8", errors="replace"))


@FUZZ
@given(st.one_of(st.binary(max_size=512).map(lambda b: b.decode("utf-8", "replace")), st.text(max_size=512)))
def test_random_input(text: str) -> None:
    _check(text)
