"""juicefs bench parser: golden files over every public output, and numbers checked by eye."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fsbench.api.tools import CheckContext
from fsbench.core.errors import ParseError
from fsbench.tools.juicefs_bench import TOOL, parse_path, parse_text
from tests.golden.golden import check_golden
from tests.paths import FIXTURES, GOLDEN

PUBLIC = FIXTURES / "public" / "juicefs-bench"
GOLDEN_DIR = GOLDEN / "juicefs-bench"
FILES = sorted(p for p in PUBLIC.iterdir() if p.is_file())
#: outputs without a usable result: stem -> a substring of the ParseError reason
EXPECTED_ERRORS = {
    "issue-6211_windows_warnings_progress_TRUNCATED": "ends inside the progress bars",
    # its indented lines read (5 rows), then cut in the FUSE operation row (test_juicefs_bench_cut.py)
    "issue-3681_indented_progress_and_table_TRUNCATED": "the result table is cut off after its 5 rows",
}
MiB = 2**20


def test_fixtures_found() -> None:
    assert len(FILES) == 5
    assert set(EXPECTED_ERRORS) <= {p.stem for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_fixture(path: Path) -> None:
    if path.stem in EXPECTED_ERRORS:
        with pytest.raises(ParseError) as info:
            parse_path(path)
        assert info.value.tool == TOOL and info.value.file == str(path)
        assert EXPECTED_ERRORS[path.stem] in info.value.reason
        return
    result = parse_path(path)
    assert result.rows
    check_golden(result.rows, GOLDEN_DIR / f"{path.stem}.csv")


def _values(name: str) -> dict[tuple[str, str], float]:
    return {(r["operation"], r["metric"]): r["value"] for r in parse_path(PUBLIC / name).rows}


def test_table_numbers() -> None:
    got = _values("issue-4712_table_negative_update_meta.txt")
    assert got[("write_big_file", "bandwidth")] == 612.69 * 1048576
    assert got[("write_big_file", "latency_mean")] == 1.67
    assert got[("read_big_file", "bandwidth")] == 390.55 * MiB
    assert got[("write_small_file", "rate")] == 44.4
    assert math.isclose(got[("write_small_file", "latency_mean")], 22.52e-3)
    assert got[("stat_file", "rate")] == 2170.1
    assert got[("fuse_operation", "ops")] == 17826 and math.isclose(got[("fuse_operation", "latency_mean")], 0.36e-3)
    assert got[("update_meta", "ops")] == -9
    assert got[("put_object", "ops")] == 356 and math.isclose(got[("put_object", "latency_mean")], 91.47e-3)
    assert got[("delete_object", "ops")] == 0
    assert math.isclose(got[("read_from_cache", "latency_mean")], 0.11e-3)
    # 12 items x (value, cost), but "-9 operations | 0.00 ms/op" and "0 operations | 0.00 ms/op"
    # are costs over no operation: not latencies, so no latency_mean row for them
    assert ("update_meta", "latency_mean") not in got and ("delete_object", "latency_mean") not in got
    assert len(got) == 22
    result = parse_path(PUBLIC / "issue-4712_table_negative_update_meta.txt")
    assert [w.split(":")[0] for w in result.warnings] == ["update_meta", "update_meta", "delete_object"]
    assert "negative count -9 kept as printed" in result.warnings[0]
    assert "a cost over 0 operations is not a latency" in result.warnings[2]
    # the negative count is kept, flagged; every other row is fine
    flagged = [(r["operation"], r["metric"]) for r in result.rows if r.get("warnings")]
    assert flagged == [("update_meta", "ops")]


def test_zero_operations_in_the_old_text_format() -> None:
    result = parse_text("FUSE operation: 19333, avg: 0.3 ms\nDelete object: 0, avg: 0.0 ms\n"
                        "Used: 23.4s, CPU: 69.1%, MEM: 147.0 MiB\n")
    got = {(r["operation"], r["metric"]): r["value"] for r in result.rows if r["operation"] != "total"}
    assert got == {("fuse_operation", "ops"): 19333, ("fuse_operation", "latency_mean"): 0.3e-3,
                   ("delete_object", "ops"): 0}
    assert result.warnings == ["delete_object: a cost over 0 operations is not a latency; no latency_mean row"]


def test_old_text_format() -> None:
    got = _values("juicedata-juicefs_README_2021_old_text_format.txt")
    assert got[("write_big_file", "bandwidth")] == 113.67 * MiB
    assert got[("read_big_file", "bandwidth")] == 127.12 * MiB
    assert got[("write_small_file", "rate")] == 151.7 and got[("write_small_file", "latency_mean")] == 0.0066
    assert got[("stat_file", "rate")] == 584.2 and got[("stat_file", "latency_mean")] == 0.0017
    assert got[("fuse_operation", "ops")] == 19333 and got[("fuse_operation", "latency_mean")] == 0.0003
    assert got[("get_object_first_byte", "ops")] == 308
    assert got[("total", "runtime")] == 23.4 and got[("total", "cpu_usage")] == 69.1
    assert got[("total", "memory_peak")] == 147.0 * MiB
    meta = parse_path(PUBLIC / "juicedata-juicefs_README_2021_old_text_format.txt").meta
    assert meta["BigFileSize"] == 1024 * MiB and meta["SmallFileCount"] == 100


def test_colours_progress_warnings_and_newer_parameter_line() -> None:
    table = (PUBLIC / "issue-4712_table_negative_update_meta.txt").read_text()
    coloured = table.replace("612.69 MiB/s", "\x1b[1;32m612.69 MiB/s\x1b[0m").replace(
        "-9 operations", "\x1b[0;31m-9 operations\x1b[0m")
    text = (
        "Cleaning kernel cache, may ask for root privilege...\n"
        "2025/06/26 16:30:42.830014 juicefs[1184] <WARNING>: Clear cache operation has been skipped [bench.go:355]\n"
        "  Write big blocks count: 12 / 1024 [==>      ]\r  Write big blocks count: 1024 / 1024 [=====]  done\n"
        "2025/06/26 16:31:09.244616 juicefs[1184] <WARNING>: Clear cache operation has been skipped [bench.go:355]\n"
        "Benchmark finished!\n"
        "BlockSize: 1.0 MiB, BigFileSize: 1.0 GiB, SmallFileSize: 128 KiB, SmallFileCount: 100, NumThreads: 4\n"
        "Time used: 30.2 s, CPU: 103.5%, Memory: 1364.5 MiB\n" + coloured
    )
    result = parse_text(text, "coloured")
    plain = parse_text(table, "plain")
    judged = {(r["operation"], r["metric"]): r.pop("verdict") for r in result.rows if "verdict" in r}
    assert judged == {("write_big_file", "bandwidth"): "good", ("update_meta", "ops"): "poor"}
    assert [r for r in result.rows if r["operation"] != "total"] == plain.rows
    assert result.meta["BigFileSize"] == 2**30 and result.meta["NumThreads"] == 4
    assert ("Clear cache operation has been skipped (2 times)" in " ".join(result.warnings))
    total = {r["metric"]: r["value"] for r in result.rows if r["operation"] == "total"}
    assert total == {"runtime": 30.2, "cpu_usage": 103.5, "memory_peak": 1364.5 * MiB}


@pytest.mark.parametrize("text, reason", [
    ("", "the output is empty"),
    ("Usage: juicefs bench [options] PATH\n", "no juicefs bench result"),
    ("|   Write big file |     612.69 MiB/s", "no juicefs bench result"),
])
def test_no_result(text: str, reason: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_text(text, "x")
    assert reason in info.value.reason and info.value.tool == "juicefs-bench"


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="cannot read"):
        parse_path(tmp_path / "missing.txt")


PTY = GOLDEN_DIR / "inputs" / "juicefs-1.4.2_bench_p2_pty_colours.txt"


def test_the_tools_own_colours_become_verdicts() -> None:
    # a real `juicefs bench -p 2` run under a pseudo-terminal (`script`), as fsbench runs it: every VALUE
    # and COST is coloured; FUSE operation's cost was yellow (0.55 ms/op), everything else green
    result = parse_path(PTY)
    check_golden(result.rows, GOLDEN_DIR / f"{PTY.stem}.csv")
    verdicts = {(r["operation"], r["metric"]): r.get("verdict") for r in result.rows}
    assert verdicts[("fuse_operation", "latency_mean")] == "fair"
    assert verdicts[("write_big_file", "bandwidth")] == "good" and verdicts[("stat_file", "latency_mean")] == "good"
    assert verdicts[("fuse_operation", "ops")] == "good"
    assert "verdict" not in {k for r in result.rows if r["operation"] == "total" for k in r}
    assert result.meta["NumThreads"] == 2


def test_plain_output_has_no_verdicts() -> None:
    rows = parse_path(PUBLIC / "pr-352_internal_metrics_lines.txt").rows
    assert rows and not any("verdict" in r for r in rows)


def test_it_runs_under_a_pseudo_terminal_unless_told_not_to() -> None:
    from fsbench.scenario.plan import Case
    from fsbench.tools.juicefs_bench.adapter import PLUGIN

    case = Case("c", 1, "t", "w", TOOL, 1, {}, {"threads": 2}, {}, None, ("local",), 1.0, 60.0)
    inv = PLUGIN.build(case, "/mnt/jfs/x")
    assert inv.argv[:2] == ["script", "-qfec"] and inv.argv[2] == "juicefs bench --threads 2 /mnt/jfs/x"
    assert inv.env["TERM"].startswith("xterm")
    plain = PLUGIN.build(Case("c", 1, "t", "w", TOOL, 1, {}, {"verdicts": False}, {}, None, ("local",), 1.0, 60.0),
                         "/mnt/jfs/x")
    assert plain.argv == ["juicefs", "bench", "/mnt/jfs/x"]
    assert [i.path for i in PLUGIN.check_options({"verdicts": "yes"}, None, {}, CheckContext())] == ["verdicts"]
