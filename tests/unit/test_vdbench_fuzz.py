"""Property test: whatever vdbench-like text is on disk, parse_path gives finite rows or ParseError.

Inputs are real fixture texts (read in place) truncated or mutated in memory, synthetic texts
built from vdbench's own vocabulary, and random text; they are written to a temporary directory
outside the project.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsbench.core.errors import ParseError
from fsbench.core.tidy import METRIC_UNITS
from fsbench.tools.vdbench import parse_path
from tests.paths import FIXTURES

VDB = FIXTURES / "public" / "vdbench"
_SOURCES = {
    "flatfile.html": [
        "hero0906-jiaoben/50406_fs_2host_interrupted/flatfile.html",
        "masakioui-vdb/50407_fs_8host_random_read/flatfile.html",
        "tiger7z-vdbench_for_mac_m1/50407_sd_localhost_macos/flatfile.html",
    ],
    "summary.html": [
        "hero0906-jiaoben/50406_fs_2host_interrupted/summary.html",
        "tiger7z-vdbench_for_mac_m1/50407_sd_localhost_macos/summary.html",
        "masakioui-vdb/50407_fs_8host_random_read/n1.html",
    ],
    "totals.html": [
        "TheOtherOtherOperation-vdbconvert/50401_sd_2host_3rds/totals.html",
        "masakioui-vdb/50407_sd_7host_random_write/totals.html",
    ],
    "logfile.html": [
        "hero0906-jiaoben/50406_fs_parmfile_eof_error/logfile.html",
        "lnsyyj-sttdv/50407_fs_3host_console/863.log",
    ],
}
TEXTS = {name: [(VDB / rel).read_text(errors="replace") for rel in rels] for name, rels in _SOURCES.items()}

# tokens vdbench prints, plus hostile ones (nan, inf, overflow, negative, tags, n/a)
_VOCAB = [
    "Run", "Interval", "rate", "resp", "MB/sec", "MB_read", "Read_rate", "Open_rate", "cpu_used", "read%",
    "tod", "interval", ".Interval.", ".ReqstdOps...", "...cpu%...", "read", "write", "i/o", "pct", "total",
    "mb/sec", "sys+u", "rd1", "format_for_rd1", "1", "2", "avg_2-3", "avg_2-1", "avg_9-2", "n/a", "nan", "inf",
    "-inf", "1e999", "1e308", "-5", "0", "0.000", "3127.0", "12:00:01.123", "Starting", "RD=rd1;",
    "Starting RD=rd1; For loops: threads=2", "For loops: threads=4", "*", "<pre>", "<a name=\"_1\">",
    "</a>", "<i><b>", "HREF=\"n1.html\">", "Link to HOST reports:", "java.lang.RuntimeException: boom",
    "Vdbench distribution: vdbench50407", "Vdbench execution completed successfully", "\t", "\r",
]


@st.composite
def mutated(draw) -> dict[str, str]:
    """One or two report files: real text cut, with lines dropped, duplicated or overwritten."""
    names = draw(st.lists(st.sampled_from(sorted(TEXTS)), min_size=1, max_size=2, unique=True))
    files = {}
    for name in names:
        lines = draw(st.sampled_from(TEXTS[name])).splitlines(keepends=True)
        for _ in range(draw(st.integers(0, 4))):
            if not lines:
                break
            i = draw(st.integers(0, len(lines) - 1))
            action = draw(st.sampled_from(["drop", "dup", "token", "junk"]))
            if action == "drop":
                del lines[i]
            elif action == "dup":
                lines.insert(i, lines[i])
            elif action == "token":
                words = lines[i].split(" ")
                j = draw(st.integers(0, len(words) - 1))
                words[j] = draw(st.sampled_from(_VOCAB))
                lines[i] = " ".join(words)
            else:
                lines[i] = draw(st.text(max_size=60)) + "\n"
        text = "".join(lines)
        files[name] = text[: draw(st.integers(0, len(text)))]
    return files


_synthetic_line = st.lists(st.sampled_from(_VOCAB), max_size=14).map(" ".join)
synthetic = st.fixed_dictionaries(
    {},
    optional={
        "flatfile.html": st.lists(_synthetic_line, max_size=12).map("\n".join),
        "summary.html": st.lists(_synthetic_line, max_size=12).map("\n".join),
        "n1.html": st.lists(_synthetic_line, max_size=6).map("\n".join),
    },
)
random_text = st.dictionaries(
    st.sampled_from(["flatfile.html", "summary.html", "totals.html", "console.log"]), st.text(max_size=300)
)


def _check(files: dict[str, str], intervals: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, text in files.items():
            (d / name).write_text(text, encoding="utf-8", errors="surrogatepass")
        targets = [d] + [d / n for n in files]
        for target in targets:
            try:
                result = parse_path(target, intervals=intervals)
            except ParseError as exc:
                assert exc.tool == "vdbench" and exc.reason
                assert not exc.reason.startswith("unexpected parser failure"), exc.reason
                continue
            assert result.rows
            for row in result.rows:
                assert isinstance(row["value"], float) and math.isfinite(row["value"]), row
                assert row["unit"] == METRIC_UNITS[row["metric"]]
                assert row["stat"] in ("mean", "value")
                assert row["tool"] == "vdbench" and isinstance(row["job"], str) and row["job"]


_FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FAST
@given(files=mutated(), intervals=st.booleans())
def test_mutated_fixture_texts(files: dict[str, str], intervals: bool):
    _check(files, intervals)


@_FAST
@given(files=synthetic, intervals=st.booleans())
def test_synthetic_vocabulary(files: dict[str, str], intervals: bool):
    _check(files, intervals)


@_FAST
@given(files=random_text, intervals=st.booleans())
def test_random_text(files: dict[str, str], intervals: bool):
    _check(files, intervals)
