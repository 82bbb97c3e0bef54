"""The report as a stakeholder reads it: numbers as the seeds write them, axes whose labels stay apart,
rows that say something new, the scenario's own words as written, and a view's tables side by side."""

from __future__ import annotations

import re

import pytest

from fsbench.report.context import paragraphs, yaml_text
from fsbench.report.figures import line_chart, log_axis
from fsbench.report.html import write_report
from fsbench.report.tables import percent, ratio_text
from fsbench.report.views import build_view
from tests.unit.reportkit import row, run_view
from tests.unit.test_markdown_report import make_run


@pytest.mark.parametrize(("value", "text"), [(207.0, "207%"), (1187.4, "1187%"), (41.44, "41.4%"), (5.0, "5%"),
                                             (0.25, "0.25%")])
def test_a_cpu_figure_reads_as_the_seed_writes_it(value, text):
    assert percent(value) == text


@pytest.mark.parametrize(("ratio", "text"), [(1.1, "1.10"), (0.912, "0.91"), (41.4, "41.4"), (144.47, "144")])
def test_a_big_ratio_drops_decimals_nobody_reads(ratio, text):
    assert ratio_text(ratio) == text


def test_client_cpu_in_a_view_is_whole_percent_and_its_ratio_short():
    rows = [row(t, "w", "fio", "write", "bandwidth", bw) for t, bw in (("one", 1e8), ("two", 2e8))]
    rows += [row(t, "w", "monitor", "process", "cpu_usage", cpu, job=proc, stat="mean")
             for t, proc, cpu in (("one", "c1", 5.0), ("two", "c2", 207.0))]
    rv = run_view(rows, ["one", "two"], clients={"one": "c1", "two": "c2"})
    table = build_view(rv, {"view": "by_value", "workload": "w"})["tables"][0]
    assert table["head"][-1] == "client CPU"
    assert [(r["cells"][-1]["text"], r["cells"][-1]["ratio"]) for r in table["rows"]] == [("5%", "(1.00)"),
                                                                                         ("207%", "(41.4)")]


def test_a_log_axis_only_for_values_that_grow_by_a_factor():
    assert log_axis([1, 2, 4, 8, 16, 32, 64])
    assert log_axis([1, 4, 16, 64])
    # seed 002's concurrency levels: 80 and 100 side by side on a log axis read as "80100"
    assert not log_axis([1, 10, 20, 50, 80, 100])
    assert not log_axis([1, 2, 4, 8])  # a narrow range reads well on a linear one
    assert not log_axis(list(range(1, 26)))


def _tick_labels(svg: str) -> list[str]:
    """The x axis's tick labels of a chart (matplotlib names their groups xtick_N)."""
    return re.findall(r'<g id="xtick_\d+">.*?<text[^>]*>([^<]*)</text>', svg, flags=re.S)


def test_a_long_sweep_labels_every_few_values():
    import pandas as pd

    data = pd.DataFrame([{"param_numjobs": str(n), "mean": 1e6 * n, "std": 0.0, "series": "a"}
                         for n in range(1, 26)])
    labels = _tick_labels(line_chart(data, "bandwidth", "B/s", "param_numjobs", "series"))
    assert labels[0] == "1" and labels[-1] == "25" and 5 <= len(labels) <= 12


def _vdbench_rows(target: str, factor: float) -> list[dict]:
    """vdbench's rows of two write-only runs and one mixed run: each run's total ('all') and per direction."""
    out = []
    for job, ops in (("seq_write", {"all": (100.0, 2e-3), "write": (None, 2e-3)}),
                     ("ran_write", {"all": (50.0, 4e-3), "write": (None, 4e-3)}),
                     ("mixed", {"all": (80.0, 3e-3), "read": (56.0, 2e-3), "write": (24.0, 5e-3)})):
        for op, (rate, lat) in ops.items():
            if rate is not None:
                out.append(row(target, "v", "vdbench", op, "rate", rate * factor, job=job, stat="mean"))
            out.append(row(target, "v", "vdbench", op, "latency_mean", lat, job=job, stat="mean"))
    return out


def test_a_row_that_repeats_the_row_above_is_not_shown():
    rv = run_view(_vdbench_rows("a", 1.0), ["a"])
    view = build_view(rv, {"view": "table", "workload": "v", "metrics": ["rate", "latency_mean"],
                           "columns": "metrics"})
    labels = [r["labels"][0] for r in view["tables"][0]["rows"]]
    # a write-only run's Write has All's latency and nothing else; the mixed run's directions differ
    assert labels == ["seq write · All", "ran write · All", "mixed · All", "mixed · Read", "mixed · Write"]
    only_totals = build_view(rv, {"view": "table", "workload": "v", "metrics": ["rate", "latency_mean"],
                                  "columns": "metrics", "jobs": ["seq_write", "ran_write"]})
    # every row a run's total: the run's name says it
    assert [r["labels"][0] for r in only_totals["tables"][0]["rows"]] == ["seq write", "ran write"]
    # two targets: a row stays when any target's figure differs from the row above's
    two = run_view(_vdbench_rows("a", 1.0) + _vdbench_rows("b", 2.0), ["a", "b"])
    rows = build_view(two, {"view": "table", "workload": "v", "metrics": ["rate", "latency_mean"],
                            "columns": "metrics"})["tables"][0]["rows"]
    assert len(rows) == 5 and len(build_view(two, {"view": "table", "workload": "v", "columns": "metrics",
                                                   "metrics": ["rate", "latency_mean"]})["measurements"]) == 5


def test_the_scenarios_own_conclusions_keep_paragraphs_and_lists_not_the_yaml_wrapping():
    text = "The seed's questions: which variant\nsuits which load.\n\nRead the tables:\n- metadata first\n- then I/O\n"
    assert paragraphs(text) == ["The seed's questions: which variant suits which load.",
                                "Read the tables:\n- metadata first\n- then I/O"]
    assert paragraphs("") == []


@pytest.mark.parametrize(("value", "text"), [(True, "true"), (None, "null"), ([1, 4, 16], "[1, 4, 16]"),
                                             ({"client1": {}}, "{client1: {}}"), ("8g", "8g"), (60, "60")])
def test_a_variable_reads_as_the_scenario_writes_it(value, text):
    assert yaml_text(value) == text


def test_a_views_tables_sit_side_by_side_and_block_headings_keep_their_case(tmp_path):
    html = write_report(make_run(tmp_path)).read_text()
    assert '<div class="parts">' in html and html.count('<div class="part">') >= 2
    css = html[html.index("<style>"):html.index("</style>")]
    assert "uppercase;" not in css.replace("::first-letter { text-transform: uppercase;", "")
