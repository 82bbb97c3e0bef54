"""Which way is better: the vocabulary, a plug-in's own declaration, a threshold's own limits."""

from __future__ import annotations

from fsbench.compare.judge import direction, judge
from fsbench.core.thresholds import Threshold


def test_compare_follows_the_tools_declaration():
    # objbench's `functional` (1 pass, 0 not supported, -1 failed) is better big; the vocabulary does not know it
    assert direction("functional", "juicefs-objbench") == "higher"
    assert direction("functional") == "lower"
    assert direction("bandwidth", "fio") == "higher" and direction("clat_p99", "fio") == "lower"
    # nnbench declares `exceptions` as its own metric: a count of problems, smaller is better
    assert direction("exceptions", "nnbench") == "lower"
    fell = judge([1.0, 1.0, 1.0], [-1.0, -1.0, -1.0], "functional", 0.05, 0.05, "juicefs-objbench")
    assert fell["verdict"] == "worse"


def test_a_thresholds_limits_say_which_way_is_better():
    # a metric the vocabulary does not rank: good above poor means bigger is better
    up = Threshold("*", "*", "files_checked", good=100, poor=10)
    assert [up.verdict(v) for v in (150, 50, 5)] == ["good", "fair", "poor"]
    down = Threshold("*", "*", "files_checked", good=10, poor=100)
    assert [down.verdict(v) for v in (5, 50, 150)] == ["good", "fair", "poor"]
    # equal limits: the vocabulary decides (bandwidth is better big)
    flat = Threshold("*", "*", "bandwidth", good=100, poor=100)
    assert [flat.verdict(v) for v in (150, 50)] == ["good", "poor"]


def test_every_metric_a_parser_gives_is_one_its_tool_declares():
    """`measures` is written by hand beside each parser; the golden files (every output the parsers read)
    keep the two together, so a report view is never refused for a metric the tool does give."""
    import csv

    from fsbench.tools import TOOLS
    from tests.paths import GOLDEN

    seen: dict[str, set[str]] = {}
    for path in GOLDEN.glob("*/*.csv"):
        with path.open(newline="") as fh:
            for row in csv.DictReader(fh):
                seen.setdefault(row["tool"], set()).add(row["metric"])
    checked = 0
    for tool, metrics in seen.items():
        if tool not in TOOLS.names():
            continue  # io500 rows, collectors
        plugin = TOOLS.get(tool)
        declared = set(plugin.measures) | set(plugin.metrics)
        assert metrics <= declared, (tool, sorted(metrics - declared))
        checked += 1
    assert checked >= 7
