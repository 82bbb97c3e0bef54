"""The report's column-wise ratio intervals (fsbench.analysis.ratios) give what fsbench.core.stats gives one
ratio at a time, so the report and `fsbench compare` mean the same by a difference."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd

from fsbench.analysis.ratios import log_ratios, t_quantiles
from fsbench.analysis.summarise import with_baseline
from fsbench.core import stats


def _scalar(n, lm, lv, bn, blm, blv) -> tuple[float, float, float]:
    if not all(x == x for x in (n, lm, lv, bn, blm, blv)) or n < 2 or bn < 2:
        return math.nan, math.nan, math.nan
    r = stats.log_ratio(stats.LogSummary(int(bn), blm, blv), stats.LogSummary(int(n), lm, lv))
    return r.low, r.high, r.p


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


def test_every_ratio_agrees_with_the_scalar_statistics():
    rng = random.Random(25)
    rows: list[tuple[float, ...]] = []
    for _ in range(3000):
        n, bn = rng.choice([1, 2, 3, 4, 5, 8, 30]), rng.choice([1, 2, 3, 4, 5, 8, 30])
        lv = rng.choice([0.0, 1e-12, rng.random() * 1e-3, rng.random(), rng.random() * 50])
        blv = rng.choice([0.0, 1e-12, rng.random() * 1e-3, rng.random(), rng.random() * 50])
        rows.append((n, rng.gauss(0, 3), lv, bn, rng.gauss(0, 3), blv))
    # the special cases: missing figures, equal constant sides, one constant side, huge t
    rows += [(3, math.nan, 0.1, 3, 0.0, 0.1), (3, 1.0, 0.0, 3, 1.0, 0.0), (3, 1.0, 0.0, 3, 2.0, 0.0),
             (4, 1.0, 0.0, 4, 2.0, 0.3), (4, 50.0, 1e-30, 4, 0.0, 1e-30), (math.nan, 1.0, 0.1, 3, 1.0, 0.1)]
    cols = [np.array(c, dtype=float) for c in zip(*rows)]
    low, high, p = log_ratios(cols[0], cols[1], cols[2], cols[3], cols[4], cols[5])
    for i, r in enumerate(rows):
        want = _scalar(*r)
        got = (float(low[i]), float(high[i]), float(p[i]))
        assert all(_close(g, w) for g, w in zip(got, want)), (r, got, want)


def test_quantiles_agree_from_tiny_to_huge_degrees_of_freedom():
    df = np.array([0.3, 0.9, 1.0, 1.5, 2.0, 2.7, 3.0, 7.3, 29.9, 120.0, 1e4, 1e7])
    got = t_quantiles(0.975, df)
    for d, g in zip(df.tolist(), got.tolist()):
        assert math.isclose(g, stats.t_quantile(0.975, d), rel_tol=1e-12), d


def test_with_baseline_gives_each_row_its_interval():
    summary = pd.DataFrame({
        "target": ["a", "b", "c"], "workload": "w", "tool": "fio", "job": "j", "operation": "read",
        "metric": "bandwidth", "unit": "B/s", "stat": "value", "mean": [100.0, 120.0, 130.0], "n": [3, 3, 1],
        "log_mean": [math.log(100), math.log(120), math.log(130)], "log_var": [0.01, 0.02, 0.0]})
    out = with_baseline(summary, "a")
    want = stats.log_ratio(stats.LogSummary(3, math.log(100), 0.01), stats.LogSummary(3, math.log(120), 0.02))
    b = out[out["target"] == "b"].iloc[0]
    assert math.isclose(b["ratio_low"], want.low, rel_tol=1e-12)
    assert math.isclose(b["ratio_high"], want.high, rel_tol=1e-12)
    assert math.isclose(b["ratio_p"], want.p, rel_tol=1e-12)
    assert math.isclose(b["ratio"], 1.2)
    c = out[out["target"] == "c"].iloc[0]  # one repetition: a ratio, but no interval
    assert math.isclose(c["ratio"], 1.3) and math.isnan(c["ratio_low"]) and math.isnan(c["ratio_p"])
