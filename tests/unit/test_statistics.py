"""fsbench.core.stats against values computed once with scipy 1.17.1 (kept here as fixtures)."""

from __future__ import annotations

import math

import pytest

from fsbench.core.stats import (
    LogSummary,
    is_warmup,
    log_ratio,
    mean_ci,
    relative_half_width,
    repetitions_for,
    t_quantile,
    welch,
)

# scipy.stats.t.ppf(0.975, df)
T_975 = {1: 12.706204736174694, 2: 4.302652729749462, 4: 2.7764451051977934, 9: 2.262157162798205,
         29: 2.045229642132703, 7.3: 2.345066736547703}


@pytest.mark.parametrize("df", list(T_975))
def test_student_t_quantile_matches_scipy(df: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(T_975[df], rel=1e-9)


def test_welch_matches_scipy_on_the_textbook_sample() -> None:
    # the two 15-value samples of the Welch's t-test article; scipy.stats.ttest_ind(equal_var=False)
    a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
    b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]
    w = welch(b, a)  # fsbench's t is mean(second) - mean(first)
    assert w.t == pytest.approx(-2.455356398286006, rel=1e-9)
    assert w.df == pytest.approx(24.988529290231416, rel=1e-9)
    assert w.p == pytest.approx(0.021378001462866992, rel=1e-7)


def test_t_interval_of_a_mean_matches_scipy() -> None:
    ci = mean_ci([102.0, 98.5, 101.2, 99.8])  # scipy.stats.ttest_1samp(...).confidence_interval(0.95)
    assert ci.low == pytest.approx(97.91545760601853, rel=1e-9)
    assert ci.high == pytest.approx(102.83454239398147, rel=1e-9)
    assert ci.relative == pytest.approx((102.83454239398147 - 97.91545760601853) / 2 / 100.375, rel=1e-9)


def test_one_value_has_no_interval() -> None:
    assert math.isinf(mean_ci([5.0]).half)
    assert math.isnan(mean_ci([]).mean)


def test_ratio_interval_on_logs_matches_scipy() -> None:
    # scipy.stats.ttest_ind(log b, log a, equal_var=False): p, and exp() of its confidence interval
    r = log_ratio(LogSummary.of([100, 110, 95, 105.0]), LogSummary.of([130, 120, 140, 125.0]))
    assert r.ratio == pytest.approx(1.2559266163958172, rel=1e-9)
    assert r.low == pytest.approx(1.1234870257631548, rel=1e-7)
    assert r.high == pytest.approx(1.4039785325513598, rel=1e-7)
    assert r.p == pytest.approx(0.0024499025068748913, rel=1e-6)
    assert r.significant()


def test_overlapping_noisy_sides_are_not_significant() -> None:
    r = log_ratio(LogSummary.of([100, 140, 80]), LogSummary.of([120, 90, 150]))
    assert not r.significant() and r.low < 1 < r.high


def test_no_logarithm_of_a_zero() -> None:
    assert LogSummary.of([0.0, 1.0]) is None


def test_repetitions_needed_shrink_the_interval_to_the_target() -> None:
    n = repetitions_for(0.05, 0.05)  # 5 % spread, ±5 % wanted: t(n-1)/sqrt(n) <= 1 first at n = 7
    assert n == 7
    assert relative_half_width(n, 0.05) <= 0.05 < relative_half_width(n - 1, 0.05)
    assert repetitions_for(2.0, 0.01, most=50) is None


def test_a_far_first_repetition_is_a_warm_up_and_a_close_one_is_not() -> None:
    assert is_warmup([50.0, 100.0, 102.0, 99.0, 101.0])
    assert not is_warmup([98.0, 100.0, 102.0, 99.0, 101.0])
    assert not is_warmup([50.0, 100.0, 102.0])  # too few others to tell
    assert not is_warmup([100.0, 100.0, 100.0, 100.0])
