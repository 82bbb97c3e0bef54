"""Adaptive repetitions: the scenario key, the stopping rule, the values it judges, the plan's range."""

from __future__ import annotations

import textwrap

from fsbench.run.plan_range import adaptive_range
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.plan import plan_cases
from fsbench.scenario.repetitions import Repetitions, decide, not_needed, primary_values

SCENARIO = """\
name: a
targets:
  t1: {path: /tmp/fsbench-unit-a}
  t2: {path: /tmp/fsbench-unit-b}
settings:
  repetitions: %s
workloads:
  w: {tool: fio, options: {rw: write, size: 1m, runtime: 2, time_based: 1}}
"""


def _load(reps: str):
    return load_scenario_text(textwrap.dedent(SCENARIO % reps), "s.yaml")


def test_an_integer_stays_a_fixed_count():
    sc = _load("3")
    assert sc.settings.repetitions == 3 and not sc.settings.repetitions.adaptive
    assert len(plan_cases(sc)) == 6 and adaptive_range(sc, plan_cases(sc)) == ""


def test_a_mapping_plans_up_to_max_and_the_plan_shows_the_range():
    sc = _load("{min: 2, max: 5, target_ci: 4%, budget: 1m}")
    spec = sc.settings.repetitions
    assert spec == Repetitions(2, 5, 0.04, 60.0) and spec.adaptive
    cases = plan_cases(sc)
    assert len(cases) == 10
    text = adaptive_range(sc, cases)
    assert "4 to 10 cases" in text and "until ±4% at 95%" in text


def test_wrong_mappings_are_refused_with_their_key():
    from fsbench.core.errors import ScenarioError

    for bad, words in (("{min: 5, max: 3}", "max (3) is less than min (5)"),
                       ("{min: 3, max: 5, target_ci: 150%}", "between 0 and 100%"),
                       ("{min: 3, most: 5}", "most")):
        try:
            _load(bad)
        except ScenarioError as exc:
            assert words in str(exc) and "settings.repetitions" in str(exc)
        else:
            raise AssertionError(f"{bad} was accepted")


def test_decide_stops_when_narrow_at_max_or_before_the_budget_overruns():
    spec = Repetitions(3, 6, 0.05, 100.0)
    assert decide(spec, 2, 10, {"w/write/bandwidth": [1, 2]}).more  # below min: always
    steady = decide(spec, 3, 30, {"w/write/bandwidth": [100.0, 100.5, 99.8]})
    assert not steady.more and steady.stop == "converged" and steady.widest < 0.05
    noisy = {"w/write/bandwidth": [100.0, 150.0, 70.0]}
    assert decide(spec, 3, 30, noisy).more
    assert decide(spec, 3, 80, noisy).stop == "budget"  # 80 s + one more of ~27 s > 100 s
    assert decide(spec, 6, 60, {"w/write/bandwidth": [100.0, 150.0, 70.0, 120, 90, 140]}).stop == "max"


def test_a_warm_up_is_left_out_of_the_decision_only_when_asked():
    spec = Repetitions(4, 8, 0.05)
    values = {"x": [40.0, 100.0, 100.5, 99.8]}
    assert decide(spec, 4, 1, values).more
    assert decide(spec, 4, 1, values, exclude_warmup=True).stop == "converged"


def test_primary_values_take_the_first_primary_metric_and_the_hosts_aggregate():
    rep = [{"job": "j", "operation": "write", "metric": "bandwidth", "host": "all", "value": 10.0},
           {"job": "j", "operation": "write", "metric": "bandwidth", "host": "h1", "value": 4.0},
           {"job": "j", "operation": "write", "metric": "clat_mean", "host": "all", "value": 0.001}]
    assert primary_values([rep, rep], ("bandwidth", "iops", "clat_mean")) == {"j/write/bandwidth": [10.0, 10.0]}


def test_not_needed_cases_are_told_from_skips():
    assert not_needed("skipped", "not needed: ±1.0% at 95% after 3 repetitions")
    assert not not_needed("skipped", "fio is not installed on h1")
