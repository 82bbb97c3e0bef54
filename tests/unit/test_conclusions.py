"""The written conclusions, sentence by sentence: per tool best and last target, ratio ranges kept apart
by direction, significance against the run-to-run spread, one measurement per run, one note about
single runs, and sentences for stats and chart views too."""

from __future__ import annotations

import pytest

from fsbench.report.conclusions import judge, single_run_note, summarise, tool_sentences
from fsbench.report.views import build_view
from tests.unit.reportkit import row, run_view


def _m(values: dict[str, tuple[float, float, int]], up: bool = True, op: str = "read", metric: str = "bandwidth",
       workload: str = "w", point: str = "", base: str = "a") -> dict:
    """A measurement as the views make them: target -> (mean, std, n), ratios to `base`."""
    b = values[base][0]
    return {"tool": "fio", "workload": workload, "job": "", "operation": op, "metric": metric, "point": point,
            "up": up, "key": ("fio", workload, "", op, point),
            "values": {t: {"mean": m, "std": s, "n": n, "ratio": m / b} for t, (m, s, n) in values.items()}}


@pytest.mark.parametrize(("values", "significant"), [
    ({"a": (100.0, 1.0, 3), "b": (103.0, 1.0, 3)}, True),    # 3 apart, spread 2 x 1: beyond it
    ({"a": (100.0, 5.0, 3), "b": (108.0, 5.0, 3)}, False),   # 8 apart, within 2 x 5
    ({"a": (100.0, 0.0, 1), "b": (101.5, 0.0, 1)}, False),   # single runs: within 2 %
    ({"a": (100.0, 0.0, 1), "b": (110.0, 0.0, 1)}, True),    # single runs: 10 % apart
    ({"a": (100.0, 1.0, 3), "b": (96.0, 2.5, 3)}, False),    # the larger spread counts: 4 < 2 x 2.5
])
def test_a_difference_is_significant_beyond_twice_the_spread_and_two_percent(values, significant):
    assert judge(_m(values))["significant"] is significant


def test_best_and_last_follow_the_metrics_direction():
    assert judge(_m({"a": (2.0, 0, 1), "b": (1.0, 0, 1)}, up=False)) == {"best": "b", "last": "a", "significant": True,
                                                                         "best_sure": True, "last_sure": True}
    assert judge(_m({"a": (2.0, 0, 1), "b": (1.0, 0, 1)}, up=True)) == {"best": "a", "last": "b", "significant": True,
                                                                        "best_sure": True, "last_sure": True}


def test_ratio_ranges_keep_higher_and_lower_is_better_apart():
    # b is twice worse on both: half the bandwidth, twice the latency; one range would read 0.50x to 2.00x
    measured = [_m({"a": (100.0, 0, 1), "b": (50.0, 0, 1)}, op="read"),
                _m({"a": (0.001, 0, 1), "b": (0.002, 0, 1)}, up=False, op="read", metric="latency_mean",
                   workload="w2")]
    assert summarise("fio", measured, "a") == [
        "fio: a is best on 2 of 2 measurements; b is last on 2.",
        "Against a (higher is better), b is at 0.50× (read bandwidth (w)).",
        "Against a (lower is better), b is at 2.00× (read latency mean (w2)).",
    ]


def test_ranges_name_both_ends_and_not_significant_ones_are_listed():
    measured = [_m({"a": (100.0, 1, 3), "b": (130.0, 1, 3), "c": (90.0, 1, 3)}, op="read"),
                _m({"a": (100.0, 1, 3), "b": (150.0, 1, 3), "c": (120.0, 1, 3)}, op="write"),
                _m({"a": (100.0, 4, 3), "b": (101.0, 4, 3), "c": (99.0, 4, 3)}, op="trim")]
    assert summarise("fio", measured, "a") == [
        "fio: b is best on 2 of 3 measurements; a and c are last on 1.",
        "Against a (higher is better), the others range from 0.90× (c, read bandwidth) to 1.50× (b, write bandwidth).",
        "No clear difference (not significant at 95%, or within 2%): trim bandwidth.",
    ]


def test_no_target_stands_out_when_every_difference_is_noise():
    measured = [_m({"a": (100.0, 5, 3), "b": (104.0, 5, 3)})]
    assert summarise("fio", measured, "a")[0] == ("fio: no target stands out: the measurement is within the "
                                                  "run-to-run spread (or 2%).")
    measured.append(_m({"a": (100.0, 0, 1), "b": (101.0, 0, 1)}, op="write"))
    assert summarise("fio", measured, "a")[0] == ("fio: no target stands out: all 2 measurements are within the "
                                                  "run-to-run spread (or 2%).")


def test_iops_and_bandwidth_of_one_run_are_one_measurement():
    rows = [row(t, "w", "fio", "write", m, v * f, numjobs=n) for t, f in (("a", 1), ("b", 2)) for n in (1, 4)
            for m, v in (("iops", 1000.0), ("bandwidth", 4e6))]
    rv = run_view(rows, ["a", "b"])
    view = build_view(rv, {"view": "by_value", "workload": "w", "param": "numjobs", "metrics": ["iops", "bandwidth"]})
    assert tool_sentences([view], "a") == [("fio", [
        "fio: b is best on 2 of 2 measurements; a is last on 2.",
        "Against a (higher is better), b is at 2.00× on each of these 2 values.",
    ])]


def test_two_views_of_one_measurement_count_it_once_and_the_single_run_note_comes_once():
    rows = [row(t, "w", "fio", "write", "bandwidth", v) for t, v in (("a", 100.0), ("b", 150.0))]
    rv = run_view(rows, ["a", "b"])
    views = [build_view(rv, {"view": "table", "workload": "w"}), build_view(rv, {"view": "best", "workload": "w"})]
    assert tool_sentences(views, "a")[0][1][0] == "fio: b is best on 1 of 1 measurement; a is last on 1."
    assert single_run_note(views).startswith("Each value comes from a single run, so run-to-run noise cannot")
    rows3 = [row(t, "w", "fio", "write", "bandwidth", v + rep, rep=rep) for t, v in (("a", 100.0), ("b", 150.0))
             for rep in (1, 2, 3)]
    assert single_run_note([build_view(run_view(rows3, ["a", "b"]), {"view": "table", "workload": "w"})]) == ""


def test_mdtest_stats_judge_by_the_tools_own_spread():
    # mdtest's Max / Min / Mean / StdDev over its iterations: a single fsbench run still has a spread
    rows = []
    for t, mean, std in (("a", 1000.0, 10.0), ("b", 1100.0, 10.0), ("c", 1010.0, 100.0)):
        for stat, v in (("mean", mean), ("stddev", std), ("max", mean + std), ("min", mean - std)):
            rows.append(row(t, "md", "mdtest", "file_creation", "rate", v, stat=stat))
    for t, mean, std in (("a", 500.0, 100.0), ("b", 540.0, 100.0), ("c", 520.0, 100.0)):
        for stat, v in (("mean", mean), ("stddev", std)):
            rows.append(row(t, "md", "mdtest", "file_stat", "rate", v, stat=stat))
    view = build_view(run_view(rows, ["a", "b", "c"]), {"view": "stats", "workload": "md"})
    assert tool_sentences([view], "a") == [("mdtest", [
        # b beats a, but not c, whose iterations spread ±100: no winner a rerun would keep
        "mdtest: no target stands out: all 2 measurements are within the run-to-run spread (or 2%).",
        "Against a (higher is better), b is at 1.10× (file creation rate).",
    ])]
    assert single_run_note([view]) == ""  # mdtest's own iterations give the spread


def test_a_chart_view_is_concluded_per_swept_value():
    rows = [row(t, "nn", "nnbench", "rename", "rate", v * m, maps=m) for t, v in (("hdfs", 10.0), ("s3a", 5.0))
            for m in (1, 20, 100)]
    view = build_view(run_view(rows, ["hdfs", "s3a"]), {"view": "chart", "workload": "nn", "param": "maps",
                                                        "per": "operation", "metrics": ["rate"]})
    assert view["charts"] and tool_sentences([view], "hdfs") == [("nnbench", [
        "nnbench: hdfs is best on 3 of 3 measurements; s3a is last on 3.",
        "Against hdfs (higher is better), s3a is at 0.50× on each of these 3 values.",
    ])]


def test_one_target_has_nothing_to_compare():
    view = build_view(run_view([row("a", "w", "fio", "write", "bandwidth", 1.0)], ["a"]),
                      {"view": "table", "workload": "w"})
    assert view["measurements"] == [] and tool_sentences([view], "a") == [] and single_run_note([view]) == ""
