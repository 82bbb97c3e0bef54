"""When two targets differ: the paired t-test against a textbook result, drift cancelled by pairing rounds,
Welch where rounds do not pair, and the practical floors (min_effect, time_floor) on top of significance."""

from __future__ import annotations

import math

import pytest

from fsbench.analysis.difference import NONE, PAIRED, WELCH, beyond_floors, compare, paired_t, stated
from fsbench.core.stats import LogSummary
from fsbench.core.stats_settings import Floors

# Student's sleep data (Cushny and Peebles, 1905): extra sleep of 10 patients with two drugs; R's
# t.test(group2, group1, paired = TRUE) gives t = 4.0621, df = 9, p = 0.002833, 95 % CI 0.7001142 to 2.4598858
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


def test_paired_t_matches_the_textbook_sleep_data():
    m, low, high, p, df = paired_t([b - a for a, b in zip(SLEEP_1, SLEEP_2)])
    assert m == pytest.approx(1.58)
    assert (low, high) == (pytest.approx(0.7001142, abs=1e-6), pytest.approx(2.4598858, abs=1e-6))
    assert p == pytest.approx(0.002833, abs=2e-6) and df == 9


def _side(reps: list[float]) -> dict:
    logs = LogSummary.of(reps)
    assert logs is not None
    return {"mean": sum(reps) / len(reps), "n": len(reps), "std": 0.0, "reps": tuple(enumerate(reps, 1)),
            "log_mean": logs.mean, "log_var": logs.var}


def test_pairing_by_round_cancels_drift_that_hides_the_difference_from_welch():
    # the machine got busier round by round; b is 20 % faster than a in every round
    a = [100.0, 150.0, 210.0, 120.0]
    b = [x * f for x, f in zip(a, (1.19, 1.21, 1.20, 1.20))]
    d = compare(_side(a), _side(b))
    assert d.method == PAIRED and d.significant and d.ratio == pytest.approx(1.2, rel=0.01)
    assert d.low > 1.15 and d.high < 1.25
    unpaired = compare({**_side(a), "reps": ()}, {**_side(b), "reps": ()})
    assert unpaired.method == WELCH and not unpaired.significant


def test_rounds_pair_only_where_both_sides_ran_three_rounds_or_more():
    a, b = _side([100.0, 101.0, 99.0]), _side([130.0, 131.0])
    assert compare(a, b).method == WELCH


def test_a_single_run_has_no_spread_and_is_never_significant():
    d = compare({"mean": 1.0, "n": 1}, {"mean": 3.0, "n": 1})
    assert d.method == NONE and not d.significant and d.ratio == 3.0


def test_floors_keep_small_and_sub_floor_latency_differences_unsaid():
    floors = Floors()
    assert floors.min_effect == 0.10 and floors.time_floor_s == pytest.approx(20e-6)
    assert not beyond_floors(100.0, 108.0, floors, is_time=False)   # 8 %: under min_effect
    assert beyond_floors(100.0, 115.0, floors, is_time=False)
    assert not beyond_floors(30e-6, 45e-6, floors, is_time=True)     # 50 % but 15 µs: under the time floor
    assert beyond_floors(300e-6, 450e-6, floors, is_time=True)
    # significant (steady rounds) but 5 % apart: not stated; 30 % apart: stated
    a = _side([100.0, 100.5, 99.5, 100.2])
    assert compare(a, _side([105.0, 105.5, 104.5, 105.2])).significant
    assert not stated(a, _side([105.0, 105.5, 104.5, 105.2]), floors, False)
    assert stated(a, _side([130.0, 130.5, 129.5, 130.2]), floors, False)
    assert stated(a, _side([105.0, 105.5, 104.5, 105.2]), Floors(min_effect=0.02), False)


def test_floors_read_from_a_scenarios_settings():
    assert Floors.of({"min_effect": "5%", "time_floor": "50us"}) == Floors(0.05, pytest.approx(50e-6))
    assert Floors.of(None) == Floors()
    assert math.isclose(Floors.of({"min_effect": 0.2}).min_effect, 0.2)
