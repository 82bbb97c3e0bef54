"""NNBench parser: golden files over real outputs made here (fsbench's runner on HDFS, S3A and JuiceFS's
Hadoop SDK), numbers checked against NNBench's own printed lines, and hostile inputs."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsbench.core.errors import ParseError
from fsbench.core.tidy import METRIC_UNITS, PLAUSIBLE_MAX
from fsbench.tools.nnbench.parse import TOOL, blocks, parse_path, parse_text, runner_lines
from tests.golden.golden import check_golden
from tests.paths import GOLDEN

GOLDEN_DIR = GOLDEN / "nnbench"
INPUTS = GOLDEN_DIR / "inputs"
CASES = sorted(p for p in INPUTS.iterdir() if p.is_dir())


def _parse(folder: Path):
    return parse_path(folder)


def test_inputs_found() -> None:
    assert {p.name.split("__")[0] for p in CASES} == {"hdfs", "s3a", "juicefs"}


@pytest.mark.parametrize("folder", CASES, ids=[p.name for p in CASES])
def test_golden(folder: Path) -> None:
    result = _parse(folder)
    check_golden(result.rows, GOLDEN_DIR / f"{folder.name}.csv")


@pytest.mark.parametrize("folder", CASES, ids=[p.name for p in CASES])
def test_rows_agree_with_nnbenchs_printed_numbers(folder: Path) -> None:
    rows = {(r["operation"], r["metric"]): r for r in _parse(folder).rows if not r["job"]}
    analysed = [r for r in runner_lines((folder / "stdout").read_text()) if r["exit"] in ("0", "-1")]
    assert {op for op, _ in rows} == {r["operation"] for r in analysed if r["role"] == "measured"}
    found = blocks((folder / "NNBench_results.log").read_text())
    assert len(analysed) == len(found)
    for block, run in zip(found, analysed):
        if run["role"] != "measured":
            continue
        op = block.operation
        # NNBench prints its TPS truncated to an integer, and its latencies per part in ms
        (tps,) = [v for k, v in block.fields.items() if k.startswith("TPS")]
        assert int(rows[(op, "rate")]["value"]) == int(tps)
        printed = sum(float(v) for k, v in block.fields.items() if k.startswith("Avg Lat (ms)"))
        assert math.isclose(rows[(op, "latency_mean")]["value"] * 1000, printed, rel_tol=1e-9, abs_tol=1e-9)
        maps, files = int(block.number("Maps to run")), int(block.number("Number of files"))
        assert rows[(op, "ops")]["value"] == maps * files and rows[(op, "exceptions")]["value"] == 0
        assert rows[(op, "late_maps")]["value"] == maps - int(run["on_time"])
        assert rows[(op, "rate")]["maps"] == maps and rows[(op, "rate")]["files_per_map"] == files
    for r in rows.values():
        assert r["unit"] == METRIC_UNITS[r["metric"]]


def test_the_runners_warm_up_line_is_no_run() -> None:
    """The runner's untimed warm-up job (MapReduce's classes loaded before the first run) says so in a line of
    its own; it is neither a run nor a measurement, so the runs and their rows are the same with it."""
    folder = INPUTS / "hdfs__maps-100"
    stdout = (folder / "stdout").read_text()
    warmed = "fsbench-nnbench warmup ms=1877 exit=0\n" + stdout
    assert runner_lines(warmed) == runner_lines(stdout) and len(runner_lines(stdout)) == 5
    log = (folder / "NNBench_results.log").read_text()
    assert parse_text(log, warmed).rows == parse_text(log, stdout).rows


def test_late_maps_are_a_warning() -> None:
    """The runner redoes a late run twice at most; late maps of the measurement it keeps are reported.
    (The 100-map run here had every map on time: its runner line is edited to say 77 were late.)"""
    folder = INPUTS / "hdfs__maps-100"
    stdout = (folder / "stdout").read_text()
    assert [r["on_time"] for r in runner_lines(stdout)] == ["100"] * 5
    result = _parse(folder)
    assert {r["value"] for r in result.rows if r["metric"] == "late_maps"} == {0.0} and not result.warnings
    late = re.sub(r"(operation=open_read .*on_time=)100", r"\g<1>23", stdout, count=1)
    assert "on_time=23" in late
    result = parse_text((folder / "NNBench_results.log").read_text(), late)
    late_maps = {r["operation"]: r["value"] for r in result.rows if r["metric"] == "late_maps"}
    assert late_maps == {"create_write": 0, "open_read": 77, "rename": 0, "delete": 0}
    assert result.warnings == ["open_read: 77 of 100 maps did not wait at the start barrier, so they did not start "
                               "together with the others (raise the workload's barrier_ms)"]


@pytest.mark.parametrize("folder, blocks_made, measured", [
    # a late create_write done again, then open_read, rename, setup, delete
    ("hdfs__maps-1__late-create-done-again", 6, ["create_write", "open_read", "rename", "delete"]),
    # a JVM whose first run (no first barrier) was open_read: done again as it is
    ("hdfs__maps-20__late-open-read-done-again", 5, ["open_read", "rename", "delete"]),
    # ... was rename: its files made again (a setup create_write) before it is done again
    ("hdfs__maps-20__late-rename-done-again", 5, ["rename", "delete"]),
])
def test_setup_and_late_runs_are_not_measurements(folder: str, blocks_made: int, measured: list[str]) -> None:
    path = INPUTS / folder
    stdout = (path / "stdout").read_text()
    assert stdout.count("role=late") == 1
    assert len(blocks((path / "NNBench_results.log").read_text())) == blocks_made
    rows = _parse(path).rows
    rates = [r for r in rows if r["metric"] == "rate" and not r["job"]]
    assert [r["operation"] for r in rates] == measured  # one measurement each: the late one is not kept
    assert {r["value"] for r in rows if r["metric"] == "late_maps"} == {0.0}  # the kept runs were on time


def test_without_the_runners_lines_every_block_counts() -> None:
    folder = INPUTS / "s3a__maps-20"
    result = parse_text((folder / "NNBench_results.log").read_text(), "")
    creates = [r for r in result.rows if r["operation"] == "create_write" and r["metric"] == "rate"]
    assert len(creates) == len([b for b in blocks((folder / "NNBench_results.log").read_text())
                                if b.operation == "create_write"])


def test_failures_are_warnings_and_rows() -> None:
    folder = INPUTS / "s3a__maps-20"
    text = (folder / "NNBench_results.log").read_text()
    first = text.split("-------------- NNBench -------------- :")[1]
    broken = "-------------- NNBench -------------- :" + first.replace("# exceptions: 0", "# exceptions: 7")
    assert "Successful file operations: 100\n" in broken
    result = parse_text(broken.replace("Successful file operations: 100\n", "Successful file operations: 93\n"), "")
    assert result.warnings == ["create_write: 93 of 100 file operations succeeded (7 exceptions)"]
    assert [r["value"] for r in result.rows if r["metric"] == "exceptions"] == [7.0]
    with pytest.raises(ParseError, match="no NNBench result block"):
        parse_text("Exception in thread main", "")
    with pytest.raises(ParseError, match="analysed runs"):
        parse_text(text, "fsbench-nnbench run=1 operation=create_write role=measured maps=1 on_time=1 exit=0\n")


def test_a_latency_under_nnbenchs_millisecond_clock_is_zero_and_says_so() -> None:
    text = (INPUTS / "s3a__maps-20" / "NNBench_results.log").read_text()
    first = "-------------- NNBench -------------- :" + text.split("-------------- NNBench -------------- :")[1]
    fast = re.sub(r"AL Total #(\d): \d+", r"AL Total #\1: 0", first)
    rows = [r for r in parse_text(fast, "").rows if r["metric"] == "latency_mean" and not r["job"]]
    assert [(r["value"], r["warnings"]) for r in rows] == [
        (0.0, "under NNBench's 1 ms clock: each operation took less than 1 ms")]
    measured = [r for r in parse_text(first, "").rows if r["metric"] == "latency_mean" and not r["job"]]
    assert measured[0]["value"] > 0 and "warnings" not in measured[0]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_mutation_gives_rows_or_a_parse_error(data) -> None:
    folder = CASES[0]
    text = (folder / "NNBench_results.log").read_text()
    stdout = (folder / "stdout").read_text()
    cut = data.draw(st.integers(0, len(text)))
    noise = data.draw(st.text(max_size=40))
    where = data.draw(st.integers(0, len(text)))
    mutated = (text[:cut] + text[cut + 1:])[:where] + noise + text[where:]
    try:
        result = parse_text(mutated, data.draw(st.sampled_from([stdout, ""])))
    except ParseError as exc:
        assert exc.tool == TOOL and exc.reason
        return
    for row in result.rows:
        assert isinstance(row["value"], float) and math.isfinite(row["value"])
        assert row["value"] <= PLAUSIBLE_MAX[row["unit"]] or row.get("warnings")
