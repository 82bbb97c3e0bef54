"""mdtest 1.x (LLNL 1.8/1.9.x, the mdtest-1.9.3 of old IO500 bundles): `SUMMARY: (of N iterations)`.

The inputs in tests/golden/mdtest/inputs are built from the documented layout (output-formats.md,
"Older formats met in the wild"); no mdtest 1.x binary was run. Their numbers are consistent: Mean
and Std Dev are the mean and population deviation of the iterations listed when they were built.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fsbench.tools.mdtest import parse_path, parse_text
from tests.golden.golden import check_golden
from tests.paths import GOLDEN

INPUTS = GOLDEN / "mdtest" / "inputs"
V193 = INPUTS / "mdtest-1.9.3_summary_of_2_iterations_constructed_from_docs.txt"
V184 = INPUTS / "mdtest-1.8.4_summary_of_3_iterations_batch_trailer_constructed_from_docs.txt"


@pytest.mark.parametrize("path", sorted(INPUTS.iterdir()), ids=lambda p: p.name)
def test_golden(path: Path) -> None:
    result = parse_path(path)
    check_golden(result.rows, GOLDEN / "mdtest" / f"{path.stem}.csv")
    assert parse_text(path.read_text()).rows == result.rows
    # a complete run: nothing is called interrupted, and nothing else is wrong
    assert result.warnings == []


def test_rates_of_the_1x_block() -> None:
    result = parse_path(V193)
    rows = {(r["operation"], r["stat"]): r for r in result.rows}
    assert len(result.rows) == 9 * 4 and {r["metric"] for r in result.rows} == {"rate"}
    assert {r["unit"] for r in result.rows} == {"op/s"}
    # "   File creation     :       9120.500       8801.250       8960.875        159.625"
    assert [rows[("file_creation", s)]["value"] for s in ("max", "min", "mean", "stddev")] == [
        9120.5, 8801.25, 8960.875, 159.625]
    assert rows[("tree_removal", "mean")]["value"] == 12.15
    assert {(r["tasks"], r["iterations"]) for r in result.rows} == {(16, 2)}
    assert result.meta["version"] == "mdtest-1.9.3" and (result.meta["tasks"], result.meta["nodes"]) == (16, 2)


def test_files_only_run_with_a_batch_trailer() -> None:
    result = parse_path(V184)
    assert {r["operation"] for r in result.rows} == {
        "file_creation", "file_stat", "file_read", "file_removal", "tree_creation", "tree_removal"}
    assert {(r["tasks"], r["iterations"]) for r in result.rows} == {(32, 3)}
    # the trailer's "    CPU time :   412.33 sec." is not a SUMMARY row
    assert not any("cpu" in r["operation"] for r in result.rows)


def test_1x_block_cut_short_keeps_its_complete_rows() -> None:
    text = V193.read_text()
    cut = text[: text.index("   File stat")]
    result = parse_text(cut)
    assert {r["operation"] for r in result.rows} == {
        "directory_creation", "directory_stat", "directory_removal", "file_creation"}
    assert any("later rows are missing" in w for w in result.warnings)
