"""Golden tests of the mdtest parser over every fixture, cross-checked against MANIFEST.json."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fsbench.core.errors import ParseError
from fsbench.core.tidy import snake
from fsbench.tools.mdtest import parse_path, parse_text
from tests.golden.golden import check_golden
from tests.paths import FIXTURES, GOLDEN

MDTEST = FIXTURES / "mdtest"
PUBLIC = FIXTURES / "public" / "mdtest"
GOLDEN_DIR = GOLDEN / "mdtest"

#: fixtures without a usable result: case id -> a substring the ParseError reason must hold
EXPECTED_ERRORS: dict[str, str] = {
    "3.2.1/no_barriers_B1_np2_tmpfs": "Error, stone wall timer does only work with a branch factor <= 1",
    "3.2.1/error_readonly_fs_F_np1": "Unable to create test directory path: Read-only file system",
    "3.2.1/error_B1_with_N1_np2_tmpfs": "Error, stone wall timer does only work",
    "3.2.1/interrupted_timeout_verbose_np1_tmpfs": "no SUMMARY block: the run stopped during iteration 47",
    "3.2.1/help": "help text (mdtest -h)",
    "3.3.0/task_scaling_f2_l4_s2_i2_np4_ext4": "stderr says: [vm:16002] *** An error occurred in MPI_Barrier",
    "3.3.0/error_readonly_fs_np2": "FAILED in mdtest_run, Unable to create test directory path /mnt/fsb-ro",
    "3.3.0/error_B_missing_value_np2_tmpfs": "rejected its command line and printed its usage text",
    "3.3.0/interrupted_timeout_np2_tmpfs": "the run stopped after its header (interrupted?)",
    "3.3.0/help": "help text (mdtest -h)",
    "4.0.0/error_multi_dir_without_u_np2_tmpfs_ext4": "shared directory mode is not compatible",
    "4.0.0/error_stonewall_branch_np2_tmpfs": "FAILED in md_validate_tests, Error, stone wall timer",
    "4.0.0/unsupported_option_U_np2_tmpfs": "usage text instead of running: Error invalid argument: -U",
    "4.0.0/help": "help text (mdtest -h)",
    "main-5fcf0ba/no_barriers_B1_np2_tmpfs": "FAILED in md_validate_tests_rank0",
    "main-5fcf0ba/error_readonly_fs_F_np1": 'ERROR: open64("/mnt/fsb-ro/mdtest/test-dir.0-0/',
    "main-5fcf0ba/error_B1_with_N1_np2_tmpfs": "FAILED in md_validate_tests_rank0",
    "main-5fcf0ba/interrupted_timeout_verbose_np1_tmpfs": "stopped during iteration 11 (interrupted?)",
    "main-5fcf0ba/help": "help text (mdtest -h)",
    "public/hero0906-jiaoben_mdtest-3.4.0_incomplete_header_only": "stopped after its header (interrupted?)",
}


def _case_id(path: Path) -> str:
    folder = "public" if path.parent == PUBLIC else path.parent.name
    stem = path.name.removesuffix(".stdout.txt") if path.name.endswith(".stdout.txt") else path.stem
    return f"{folder}/{stem}"


def _fixtures() -> list[Path]:
    shared = sorted(MDTEST.glob("*/*.stdout.txt")) + sorted(MDTEST.glob("*/help.txt"))
    return shared + sorted(p for p in PUBLIC.iterdir() if p.is_file())


FILES = _fixtures()


def test_fixtures_found() -> None:
    # 85 cases + 4 help texts + the public files; guards against a glob silently matching nothing
    assert len([p for p in FILES if p.name.endswith(".stdout.txt")]) == 85
    assert len(FILES) == 85 + 4 + len([p for p in PUBLIC.iterdir() if p.is_file()])
    assert set(EXPECTED_ERRORS) <= {_case_id(p) for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=[_case_id(p) for p in FILES])
def test_fixture(path: Path) -> None:
    case = _case_id(path)
    if case in EXPECTED_ERRORS:
        with pytest.raises(ParseError) as info:
            parse_path(path)
        assert info.value.tool == "mdtest" and info.value.file == str(path)
        assert EXPECTED_ERRORS[case] in info.value.reason
        return
    result = parse_path(path)
    assert result.rows
    check_golden(result.rows, GOLDEN_DIR / f"{case}.csv")


def _manifest_cases() -> list[dict]:
    return json.loads((MDTEST / "MANIFEST.json").read_text())["cases"]


@pytest.mark.parametrize("case", _manifest_cases(), ids=lambda c: f"{c['version_dir']}/{c['case']}")
def test_matches_manifest(case: dict) -> None:
    """The parser finds exactly the numbers the manifest copied from each file, no more."""
    path = MDTEST / case["stdout"]
    if not case["summary_blocks"]:
        assert case["exit_code"] != 0
        with pytest.raises(ParseError) as info:
            parse_path(path)
        first = (case["error_lines_stdout"] or case["error_lines_stderr"] or [""])[0]
        assert first in info.value.reason
        if case["exit_code"] == 124:  # killed by timeout
            assert "interrupted?" in info.value.reason
        return
    result = parse_path(path)
    meta = result.meta
    assert meta["version"] == f"mdtest-{case['printed_version']}"
    assert (meta["tasks"], meta["nodes"]) == (case["tasks_total"], case["nodes"])
    assert meta["command_line"] == case["command_line_used"]
    rows = {(r["operation"], r["metric"], r["stat"], r["tasks"], r["iterations"]): r for r in result.rows}
    assert len(rows) == len(result.rows), "two rows share one key"
    expected = 0
    for block in case["summary_blocks"]:
        # 4.0.0 shared_file_S prints "2 tasks, 1 file", which the manifest's script did not read
        tasks = block["tasks"] if block["tasks"] is not None else case["tasks_total"]
        for row in block["rows"]:
            for stat in ("max", "min", "mean", "stddev"):
                if row[stat] == "NA":
                    continue
                expected += 1
                got = rows[(snake(row["op"]), block["kind"], stat, tasks, block["iterations"])]
                assert math.isclose(got["value"], float(row[stat]), rel_tol=1e-12, abs_tol=1e-12)
                assert got["unit"] == {"rate": "op/s", "time": "s"}[block["kind"]]
    assert expected == len(result.rows)


def _read(case: str) -> str:
    return (MDTEST / f"{case}.stdout.txt").read_text()


def test_time_block_is_seconds_despite_ms_label() -> None:
    # 1200 directories at a mean 80050 op/s take 0.015 s: what the "(in ms/op)" block prints
    rows = parse_path(MDTEST / "main-5fcf0ba/print_rate_time_P_i3_np4_ext4.stdout.txt").rows
    pick = {(r["operation"], r["metric"], r["stat"]): r for r in rows}
    rate = pick[("directory_creation", "rate", "mean")]["value"]
    time = pick[("directory_creation", "time", "mean")]
    assert time["unit"] == "s" and time["value"] == 0.015
    assert math.isclose(1200 / rate, time["value"], abs_tol=0.0005)


def test_stonewall_na_gives_only_the_mean() -> None:
    rows = parse_path(MDTEST / "3.3.0/stonewall_W1_F_np2_tmpfs.stdout.txt").rows
    stone = [r for r in rows if r["operation"] == "file_create_stonewall"]
    assert [(r["stat"], r["value"]) for r in stone] == [("mean", 375624.013)]


def test_rank_statistics_keep_per_iteration_columns() -> None:
    rows = parse_path(MDTEST / "main-5fcf0ba/show_rank_statistics_i3_np4_tmpfs.stdout.txt").rows
    tree = {r["stat"]: r["value"] for r in rows if r["operation"] == "directory_creation"}
    assert tree == {"max": 565765.698, "min": 459876.542, "mean": 511214.161, "stddev": 53017.688}


def test_task_scaling_cut_after_first_block_keeps_it() -> None:
    # what 3.2.1 with -f 1 does: a complete 1-task block, then the "2 tasks" line, then nothing
    text = _read("4.0.0/task_scaling_f1_l4_s1_np4_tmpfs")
    cut = text[: text.index("2 tasks, 1000 files/directories\n") + len("2 tasks, 1000 files/directories\n")]
    result = parse_text(cut)
    assert len(result.rows) == 40 and {r["tasks"] for r in result.rows} == {1}
    lost = "'2 tasks, 1000 files/directories' is not followed by a SUMMARY block"
    assert any(lost in w for w in result.warnings)
    assert any("-- finished at" in w for w in result.warnings)


def test_output_cut_inside_a_table() -> None:
    text = _read("4.0.0/default_np4_tmpfs")
    at = text.index("   File stat")
    result = parse_text(text[: text.index("\n", at) - 2])  # the File stat row loses its last digits
    assert [r["operation"] for r in result.rows][-1] == "file_creation"
    assert any("ends in the middle of this row" in w for w in result.warnings)
    assert any("ends inside the SUMMARY rate block" in w for w in result.warnings)


def test_interleaved_error_lines_inside_a_table() -> None:
    # 3.2.1 with -P: every rank prints "Error invalid argument: -P" into the rate block and carries on
    text = _read("3.2.1/default_np2_ext4").replace(
        "   File creation", "Error invalid argument: -P\nInvalid options\n   File creation"
    )
    result = parse_text(text)
    assert len(result.rows) == 36
    assert result.warnings == ["mdtest printed an error but also results: Error invalid argument: -P"]


def test_io500_result_lines() -> None:
    result = parse_path(PUBLIC / "io500-app-issue-23_result_invalid_lines_TRUNCATED.txt")
    got = {(r["operation"], r["metric"]): (r["value"], r["unit"], r["valid"]) for r in result.rows}
    assert got[("mdtest_easy_write", "rate")] == (0.0, "op/s", False)
    assert got[("ior_easy_write", "bandwidth")] == (0.0, "B/s", False)
    rows = parse_text("[RESULT]    mdtest-easy-write       12.500000 kIOPS : time 301.000 seconds\n").rows
    got_rows = [(r["metric"], r["value"], r["valid"]) for r in rows]
    assert got_rows == [("rate", 12500.0, True), ("time", 301.0, True)]
    big = parse_path(PUBLIC / "io500-issue-68_result_lines.txt").rows
    assert big[0]["metric"] == "bandwidth" and big[0]["value"] == 2.423454 * 2**30


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the file is empty"),
        ("\x00\x01\x02binary\xff" * 50, "binary data"),
        ("hello world\n", "does not look like mdtest output"),
        ("SUMMARY rate: (of 1 iterations)\n   Operation   Max\n", "no result rows"),
    ],
)
def test_unusable_text(text: str, reason: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_text(text, "x.txt")
    assert reason in info.value.reason and info.value.file == "x.txt"


def test_rank_details_csv_and_missing_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ParseError) as info:
        parse_path(MDTEST / "main-5fcf0ba/save_rank_details_csv_np4_tmpfs.extra.rank-details.csv")
    assert "--saveRankPerformanceDetails" in info.value.reason
    with pytest.raises(ParseError) as info:
        parse_path(tmp_path / "nope.stdout.txt")
    assert "cannot read the file" in info.value.reason
