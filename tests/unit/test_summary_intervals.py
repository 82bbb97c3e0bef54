"""The summary's interval is the one of the test that decided (issue 34): paired by round where the targets
ran the same rounds, so a starred difference never prints an interval that holds 1."""

from __future__ import annotations

import math

from fsbench.analysis.difference import PAIRED, compare
from fsbench.core.stats import LogSummary, log_ratio
from fsbench.core.stats_settings import Floors
from fsbench.report.summary_page import answers, ratio_text


def value(values: list[float]) -> dict:
    logs = LogSummary.of(values)
    assert logs is not None
    mean = sum(values) / len(values)
    return {"mean": mean, "std": 0.0, "n": len(values), "log_mean": logs.mean, "log_var": logs.var,
            "reps": tuple(enumerate(values, 1))}


def test_a_round_paired_difference_prints_the_paired_interval_not_welchs():
    # drift moves both targets together round by round: Welch sees noise, the pairing a steady 0.73x
    base = [100.0, 160.0, 260.0, 130.0]
    other = [b * r for b, r in zip(base, (0.72, 0.74, 0.73, 0.725))]
    a, b = value(base), value(other)
    welch = log_ratio(LogSummary(4, a["log_mean"], a["log_var"]), LogSummary(4, b["log_mean"], b["log_var"]))
    assert welch.low < 1 < welch.high  # the interval the summary used to print beside a star
    b.update(ratio=sum(other) / sum(base), ratio_low=welch.low, ratio_high=welch.high)
    view = {"title": "Write", "measurements": [{"key": ("fio", "w", "", "write", ""), "tool": "fio", "workload": "w",
                                                "job": "", "operation": "write", "metric": "bandwidth", "unit": "B/s",
                                                "point": "", "up": True, "values": {"base": a, "other": b}}]}
    items, _ = answers([view], "base", Floors())
    r = items[0]["ratios"][0]
    d = compare(a, b)
    assert d.method == PAIRED and r["method"] == PAIRED and r["stated"]
    assert (r["low"], r["high"]) == (d.low, d.high) and r["high"] < 1
    assert r["low"] <= r["ratio"] <= r["high"]  # the ratio printed lies in its interval
    assert not r["better"]
    text = ratio_text(r)
    assert text == f"{r['ratio']:.3g}× [{r['low']:.3g}–{r['high']:.3g}]" and math.isfinite(r["low"])


def test_table_cells_get_the_paired_ratio_and_interval_where_the_targets_ran_in_rounds():
    import pandas as pd

    from fsbench.analysis.summarise import with_baseline

    base, other = [100.0, 160.0, 260.0, 130.0], [72.0, 118.4, 189.8, 94.25]
    rows = [{"target": t, "workload": "w", "tool": "fio", "job": "", "operation": "write", "metric": "bandwidth",
             "unit": "B/s", "stat": "value", "mean": sum(v) / 4, "n": 4, "log_mean": LogSummary.of(v).mean,
             "log_var": LogSummary.of(v).var, "reps": tuple(enumerate(v, 1))}
            for t, v in (("base", base), ("other", other))]
    welch = with_baseline(pd.DataFrame(rows), "base").set_index("target").loc["other"]
    paired = with_baseline(pd.DataFrame(rows), "base", paired=True).set_index("target").loc["other"]
    assert welch["ratio_low"] < 1 < welch["ratio_high"]  # Welch: drift between rounds hides the difference
    assert paired["ratio_low"] <= paired["ratio"] <= paired["ratio_high"] < 1 and paired["ratio_p"] < 0.05
