"""A cut `juicefs bench` output (a full disk, an output cap, a killed pipe) is refused with a ParseError that
names the file and what is missing, never ingested as the few rows before the cut; the complete outputs it
was cut from still parse as before.

The complete outputs are real: juicefs 1.4.2 runs made here on a JuiceFS volume (SQLite metadata, a local
file store) with the default table, with big files off (`--big-file-size 0`), with small files off
(`--small-file-count 0`), on a directory that is no JuiceFS mount (no client counters: no `Time used` line
and no FUSE / object rows), the pseudo-terminal run with colours, and a public table.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fsbench.core.errors import CommandResult, ParseError
from fsbench.run.case_outcome import ended
from fsbench.scenario.plan import Case
from fsbench.tools.juicefs_bench import TOOL, parse_path, parse_text
from fsbench.tools.juicefs_bench.adapter import PLUGIN
from tests.conftest import run_cli
from tests.golden.golden import check_golden
from tests.paths import FIXTURES, GOLDEN

GOLDEN_DIR = GOLDEN / "juicefs-bench"
INPUTS = GOLDEN_DIR / "inputs"
PUBLIC = FIXTURES / "public" / "juicefs-bench"
FULL = INPUTS / "juicefs-1.4.2_bench_p1_sqlite_file_store.txt"
NO_BIG = INPUTS / "juicefs-1.4.2_bench_p2_big_file_size_0.txt"
NO_SMALL = INPUTS / "juicefs-1.4.2_bench_p1_small_file_count_0.txt"
NOT_A_MOUNT = INPUTS / "juicefs-1.4.2_bench_p1_not_a_juicefs_mount.txt"
PTY = INPUTS / "juicefs-1.4.2_bench_p2_pty_colours.txt"
TABLE_ONLY = PUBLIC / "issue-4712_table_negative_update_meta.txt"
OLD_TEXT = PUBLIC / "juicedata-juicefs_README_2021_old_text_format.txt"
#: complete outputs in the table format of juicefs >= 1.0
TABLES = [FULL, NO_BIG, NO_SMALL, NOT_A_MOUNT, PTY, TABLE_ONLY]
STATS_ROWS = ("FUSE operation", "Update meta", "Put object", "Get object", "Delete object")


def _closing_border(text: str) -> int:
    """Where the table's closing border line starts (its last line that is not blank)."""
    end = len(text.rstrip())
    return text.rfind("\n", 0, end) + 1


def _refused(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse_text(text, "cut.txt")
    assert info.value.tool == TOOL and info.value.file == "cut.txt"
    return info.value


def _operations(text: str) -> list[str]:
    return list(dict.fromkeys(r["operation"] for r in parse_text(text).rows))


@pytest.mark.parametrize("path", [FULL, NO_BIG, NO_SMALL, NOT_A_MOUNT], ids=lambda p: p.stem)
def test_complete_real_outputs_match_their_golden_files(path: Path) -> None:
    result = parse_path(path)
    check_golden(result.rows, GOLDEN_DIR / f"{path.stem}.csv")
    # the only warnings: an object operation of 0 operations, whose printed cost is no latency
    assert all("a cost over 0 operations is not a latency" in w for w in result.warnings)


def test_the_rows_follow_the_options() -> None:
    big, small = ["write_big_file", "read_big_file"], ["write_small_file", "read_small_file", "stat_file"]
    stats = ["fuse_operation", "update_meta", "put_object", "get_object", "delete_object", "write_into_cache",
             "read_from_cache"]
    assert _operations(FULL.read_text()) == ["total", *big, *small, *stats]
    assert _operations(NO_BIG.read_text()) == ["total", *small, *stats]
    assert _operations(NO_SMALL.read_text()) == ["total", *big, *stats]
    assert _operations(NOT_A_MOUNT.read_text()) == [*big, *small]


def test_the_issues_300_bytes_are_refused() -> None:
    # the start of a real output: its parameter and `Time used` lines, then the table's top border and
    # header, cut inside the border under the header: once ingested as the 3 rows of `total`
    cut = FULL.read_text()[:300]
    assert cut.splitlines()[-2].startswith("|       ITEM")
    error = _refused(cut)
    assert "the output ends before the rows of its result table" in error.reason
    assert "Write big file, Read big file, Write small file" in error.reason


@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.stem)
def test_every_cut_before_the_end_of_the_closing_border_is_refused(path: Path) -> None:
    text = path.read_text()
    end = _closing_border(text) + len(text.rstrip()[_closing_border(text):])
    accepted = [n for n in range(end) if _accepts(text[:n])]
    assert accepted == [], f"{path.name}: cuts at {accepted[:5]}... parsed as complete"
    assert parse_text(text[:end]).rows == parse_text(text).rows  # without its last line end: complete


def _accepts(text: str) -> bool:
    try:
        parse_text(text, "cut.txt")
    except ParseError:
        return False
    return True


def test_a_cut_without_the_closing_border_says_so() -> None:
    text = FULL.read_text()
    error = _refused(text[:_closing_border(text)])
    assert "cut off after its 12 rows" in error.reason and "no closing border" in error.reason


def test_a_row_cut_mid_line_names_what_is_missing() -> None:
    text = TABLE_ONLY.read_text()
    at = text.index("|       Put object |") + 30
    error = _refused(text[:at])
    assert "cut off after its 7 rows" in error.reason
    assert repr(text[text.index("|       Put object |"):at]) in error.reason  # the line it ends on
    assert "Put object, Get object, Delete object" in error.reason


def test_the_indented_public_output_cut_in_its_fuse_row_is_refused() -> None:
    path = PUBLIC / "issue-3681_indented_progress_and_table_TRUNCATED.txt"
    with pytest.raises(ParseError) as info:
        parse_path(path)
    assert info.value.file == str(path) and "cut off after its 5 rows" in info.value.reason
    assert ", ".join(STATS_ROWS) in info.value.reason


@pytest.mark.parametrize("path, row", [(FULL, "Write big file"), (NO_BIG, "Stat file"),
                                       (NO_SMALL, "Update meta"), (NOT_A_MOUNT, "Read small file")],
                         ids=["big-file-row", "small-file-row", "counter-row", "not-a-mount"])
def test_a_closed_table_without_a_row_its_options_print_is_refused(path: Path, row: str) -> None:
    text = "".join(line for line in path.read_text().splitlines(keepends=True) if f" {row} |" not in line)
    error = _refused(text)
    assert f"no row {row}" in error.reason


def test_a_closing_border_cut_short_is_no_closing_border() -> None:
    text = NO_SMALL.read_text().rstrip()
    error = _refused(text[:-10])
    assert "no closing border" in error.reason


def test_rows_that_are_no_table_row_in_a_closed_table_are_refused() -> None:
    text = FULL.read_text().replace("|        Stat file |  737.8 files/s | 1.36 ms/file |",
                                    "|        Stat file |  737.8 files/s")
    error = _refused(text)
    assert "'|        Stat file |  737.8 files/s'" in error.reason


def test_old_text_format_cuts() -> None:
    text = OLD_TEXT.read_text()
    assert parse_text(text).rows  # complete: it ends with its `Used:` line
    error = _refused(text[:text.index("Used:")])
    assert "no 'Used:' line" in error.reason
    at = text.index("Stated 100 files")
    error = _refused(text[:at + 30])
    assert "its last result line is cut off" in error.reason and repr(text[at:at + 30]) in error.reason
    error = _refused(text[:text.index("Read 100 small files")])
    assert "no Read small file, Stat file" in error.reason
    # cut just before its client counters, it reads as a run on a directory that is no JuiceFS mount,
    # which prints no counters: the one cut of this format that cannot be told from a whole output
    assert parse_text(text[:text.index("FUSE operation")]).rows


# --- how a cut output reaches the user: `fsbench ingest` and a run's failed case ----------------------

def test_ingest_refuses_a_cut_output_by_name_and_keeps_the_complete_one(tmp_path: Path) -> None:
    cut = tmp_path / "cut.txt"
    cut.write_bytes(FULL.read_bytes()[:300])
    out = tmp_path / "out.parquet"
    proc = run_cli("ingest", "juicefs-bench", str(cut), str(NO_BIG), "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    assert f"error: juicefs-bench output {cut}: the output ends before the rows of its result table" in proc.stderr
    assert set(pd.read_parquet(out)["source"]) == {str(NO_BIG)}
    proc = run_cli("ingest", "juicefs-bench", str(cut), "-o", str(out))
    assert proc.returncode == 1 and f"error: juicefs-bench output {cut}:" in proc.stderr
    assert pd.read_parquet(out).empty


def test_a_run_whose_output_is_cut_is_a_failed_case_with_the_reason(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    text = FULL.read_text()
    (raw / "stdout").write_text(text[:_closing_border(text)])
    case = Case("c", 1, "t", "w", TOOL, 1, {}, {}, {}, None, ("local",), 1.0, 60.0)
    outcome, rows = ended(case, CommandResult("local", ["juicefs", "bench"], 0), 1.0,
                          lambda: PLUGIN.parse_outputs(raw), raw)
    assert outcome.status == "failed" and rows is None
    assert outcome.reason.startswith(f"unusable output: juicefs-bench output {raw / 'stdout'}: ")
    assert "no closing border" in outcome.reason
