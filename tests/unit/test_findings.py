"""A study's findings checked on a run (fsbench.analysis.findings): holds, does not hold, not decided."""

from __future__ import annotations

import math

import pandas as pd

from fsbench.analysis.findings import FAILS, HOLDS, OPEN, check
from fsbench.core.stats import LogSummary
from fsbench.core.stats_settings import Floors


def row(target: str, values: list[float], *, maps: str = "20", op: str = "rename", metric: str = "rate",
        unit: str = "ops/s", flagged: str = "") -> dict:
    logs = LogSummary.of(values)
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 if len(values) > 1 else 0.0
    return {"target": target, "workload": "nnbench", "tool": "nnbench", "job": "", "operation": op,
            "metric": metric, "unit": unit, "stat": "value", "param_maps": maps, "mean": mean, "std": std,
            "n": len(values), "log_mean": logs.mean if logs else math.nan, "log_var": logs.var if logs else math.nan,
            "reps": tuple(enumerate(values, 1)), "validity": "flagged" if flagged else "",
            "validity_detail": flagged}


def spec(expect: str, **more) -> dict:
    return {"claim": "S3A renames far slower than HDFS", "workload": "nnbench", "operation": "rename",
            "metric": "rate", "at": {"maps": 20}, "target": "s3a", "versus": "hdfs", "expect": expect, **more}


def frame(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


HDFS = [1000.0, 1100.0, 950.0]
S3A = [180.0, 200.0, 170.0]


def test_a_stated_difference_in_the_seeds_direction_holds_with_the_paired_interval():
    f = check(frame(row("hdfs", HDFS), row("s3a", S3A)), spec("lower", by=2), Floors())
    assert f.verdict == HOLDS
    assert f.method == "paired by round" and f.n == 3
    assert f.low <= f.ratio <= f.high < 1 / 2  # the interval printed is the test's, and it holds the ratio
    assert "0.18" in f.reason and "paired by round over 3 rounds" in f.reason


def test_the_other_way_does_not_hold_and_says_so_with_numbers():
    f = check(frame(row("hdfs", S3A), row("s3a", HDFS)), spec("lower"), Floors())
    assert f.verdict == FAILS
    assert "the other way" in f.reason and f.ratio > 5


def test_the_seeds_direction_but_short_of_its_factor_does_not_hold():
    f = check(frame(row("hdfs", HDFS), row("s3a", [700.0, 760.0, 660.0])), spec("lower", by=5), Floors())
    assert f.verdict == FAILS
    assert "less than its 5×" in f.reason and f.low > 1 / 5


def test_equal_values_within_the_floor_refute_a_difference_and_confirm_sameness():
    same = frame(row("hdfs", HDFS), row("s3a", [1010.0, 1090.0, 960.0]))
    assert check(same, spec("lower"), Floors()).verdict == FAILS
    assert check(same, spec("same"), Floors()).verdict == HOLDS


def test_a_single_run_decides_nothing_and_says_what_would():
    f = check(frame(row("hdfs", [1000.0]), row("s3a", [180.0])), spec("lower"), Floors())
    assert f.verdict == OPEN and "one run per target" in f.reason
    assert math.isnan(f.low)
    same = check(frame(row("hdfs", [1000.0]), row("s3a", [1190.0])), spec("same"), Floors())
    assert same.verdict == OPEN and "one run per target" in same.reason and "interval" not in same.reason


def test_noise_wider_than_the_floor_leaves_sameness_open():
    f = check(frame(row("hdfs", HDFS), row("s3a", [600.0, 1500.0, 1000.0])), spec("same"), Floors())
    assert f.verdict == OPEN and "interval" in f.reason


def test_a_flagged_value_or_a_missing_point_decides_nothing():
    flagged = check(frame(row("hdfs", HDFS), row("s3a", S3A, flagged="read served from cache: 3%")),
                    spec("lower"), Floors())
    assert flagged.verdict == OPEN and "read served from cache" in flagged.reason
    missing = check(frame(row("hdfs", HDFS, maps="100"), row("s3a", S3A, maps="100")), spec("lower"), Floors())
    assert missing.verdict == OPEN and "not measured" in missing.reason


def test_a_latency_difference_under_the_time_floor_is_no_difference():
    us = [0.000100, 0.000101, 0.000099]
    f = check(frame(row("hdfs", us, metric="latency_mean", unit="s"),
                    row("s3a", [v * 1.05 for v in us], metric="latency_mean", unit="s")),
              {**spec("higher"), "metric": "latency_mean"}, Floors())
    assert f.verdict == FAILS and "floor" in f.reason


def test_an_open_finding_says_how_many_rounds_would_decide_it_at_the_observed_spread():
    from fsbench.analysis.findings import rounds_to_decide

    f = check(frame(row("hdfs", [1000.0, 1000.0, 1000.0]), row("s3a", [700.0, 1000.0, 850.0])), spec("lower"),
              Floors())
    assert f.verdict == OPEN and "rounds at this spread would decide it" in f.reason
    k = int(f.reason.split("about ")[1].split(" ")[0])
    assert k > 3
    d = check(frame(row("hdfs", [1000.0] * 3), row("s3a", [700.0, 1000.0, 850.0])), spec("lower"), Floors())
    assert rounds_to_decide(_difference(d), Floors()) == k


def _difference(f):
    from fsbench.analysis.difference import Difference

    return Difference(f.ratio, f.low, f.high, 0.5, f.method, f.n)
