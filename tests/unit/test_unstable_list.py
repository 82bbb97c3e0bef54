"""The report's list of measurements too uncertain for a conclusion names what its tables show only."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from fsbench.report.summary import shown_metrics, unstable


def _summary() -> pd.DataFrame:
    rows = []
    for workload, tool in (("write", "fio"), ("bench", "juicefs-bench"), ("hidden", "fio")):
        for metric, ci in (("bandwidth", 0.30), ("clat_p99", 0.90), ("iops", 0.02)):
            rows.append({"workload": workload, "tool": tool, "target": "a", "operation": "write", "metric": metric,
                         "stat": "mean", "n": 3, "ci": ci, "cv": ci / 2})
    return pd.DataFrame(rows)


def test_only_the_metrics_a_view_shows_are_listed_and_a_tools_own_table_shows_all():
    fio = SimpleNamespace(primary_metrics=("bandwidth", "iops"))
    specs = [{"view": "table", "workload": "write"},  # fio's primary metrics
             {"view": "table", "workload": "bench", "columns": "metrics"}]  # every metric of its own table
    shown = shown_metrics(specs, {"write": fio, "bench": SimpleNamespace(primary_metrics=("bandwidth",)),
                                  "hidden": fio})
    assert shown == {"write": {"bandwidth", "iops"}, "bench": None}
    listed, _ = unstable(_summary(), 0.10, shown)
    items = {u["workload"]: u["items"] for u in listed}
    assert set(items) == {"write", "bench"}  # no view shows "hidden"
    assert [i.split(" ")[2] for i in items["write"]] == ["bandwidth"]  # iops is within ±10 %, p99 not shown
    assert sorted(i.split(" ")[2] for i in items["bench"]) == ["bandwidth", "clat_p99"]
    everything, _ = unstable(_summary(), 0.10)  # without views: every measurement, as before
    assert sum(u["count"] for u in everything) == 6


def test_each_tables_fix_is_rounds_with_a_budget_from_this_runs_case_times():
    cases = [{"workload": "write", "target": t, "status": "ok", "duration_s": "30"} for t in ("a", "b")]
    listed, _ = unstable(_summary(), 0.10, {"write": {"bandwidth"}}, cases)
    fix = {u["workload"]: u["fix"] for u in listed}["write"]
    # cv 0.15 at n=3: the rounds that bring ±10 %, and what they cost here (a round: 2 targets x 30 s)
    assert fix.startswith("run ") and "rounds instead of 3" in fix and "budget: " in fix
    rounds = int(fix.split("run ")[1].split(" ")[0])
    assert f"max: {rounds}," in fix and f"about {(rounds - 3) * 60 / 60:.0f} min more here" in fix


def test_noise_beyond_any_number_of_rounds_asks_for_longer_cases():
    wide = _summary().assign(cv=3.0, ci=3.0)
    cases = [{"workload": "write", "target": "a", "status": "ok", "duration_s": "12"}]
    listed, _ = unstable(wide, 0.10, None, cases)
    fix = {u["workload"]: u["fix"] for u in listed}["write"]
    assert fix.startswith("lengthen each run (each case ran about 12 s here)")
