"""The cells every view's tables share: a target's value of one measurement, and the client process's CPU
and peak memory beside it (the monitor's rows, shown, not judged)."""

from __future__ import annotations

import pandas as pd

from fsbench.report.rows import EMPTY, RunView, up
from fsbench.report.tables import cell

RESOURCES = (("cpu_usage", "mean", "client CPU"), ("memory_peak", "max", "client peak memory"))


def target_cells(index: dict[tuple[str, str], dict], metric: str, targets: list[str], rv: RunView, workload: str,
                 tool: object, ratio: bool = True, time_unit: str = "") -> list[dict]:
    """One cell per target of one (job, operation)'s metric (its rows by_metric_target)."""
    out = []
    for t in targets:
        found = index.get((metric, t))
        if found is None:
            out.append(dict(EMPTY))
            continue
        row = dict(found)
        if not ratio:
            row["ratio"] = float("nan")
        out.append(cell(row, metric, t == rv.baseline, rv.style, workload, time_unit, up=up(metric, tool),
                        whole_percent=True))
    return out


def resource_rows(rv: RunView, workload: str, pkey: tuple, targets: list[str], single: bool,
                  per: int = 1) -> list[dict]:
    """Client CPU (100 % = one core) and peak memory of each target's client process, as rows (in the
    first of each target's `per` columns)."""
    res = resources(rv, workload, pkey)
    if res.empty:
        return []
    rows = []
    for metric, stat, label in RESOURCES:
        sub = res[(res["metric"] == metric) & (res["stat"] == stat)]
        if sub.empty:
            continue
        cells = []
        for t in targets:
            cells += [resource_cell(rv, sub, t, metric, workload, single)] + [dict(EMPTY)] * (per - 1)
        names = sorted({rv.clients[t] for t in targets if t in rv.clients})
        rows.append({"labels": [f"{label} ({', '.join(names)})"], "operation": "client", "metric": metric,
                     "workload": workload, "cells": cells, "resource": True})
    return rows


def resource_cell(rv: RunView, sub: pd.DataFrame, target: str, metric: str, workload: str, single: bool) -> dict:
    """One target's cell of a resource row (no better or worse: using less CPU is not a verdict)."""
    r = sub[sub["target"] == target]
    if r.empty:
        return dict(EMPTY)
    row = r.iloc[0].copy()
    if single:
        row["ratio"] = float("nan")
    c = cell(row, metric, target == rv.baseline, rv.style, workload, whole_percent=True)
    c["cls"] = ""  # using less CPU is not "worse": resources are shown, not judged
    return c


def resources(rv: RunView, workload: str, pkey: tuple) -> pd.DataFrame:
    """The monitor's rows of each target's client process for one workload point, with ratios."""
    s = rv.summary
    if s.empty or not rv.clients:
        return s.iloc[0:0]
    sub = s[(s["workload"] == workload) & (s["tool"] == "monitor") & (s["operation"] == "process")]
    sub = sub[[rv.clients.get(str(t)) == str(j) for t, j in zip(sub["target"], sub["job"])]]
    for k, v in pkey:
        if k not in sub:
            return sub.iloc[0:0]
        sub = sub[sub[k].astype(str) == str(v)]
    if sub.empty:
        return sub
    base = sub[sub["target"] == rv.baseline].set_index(["metric", "stat"])["mean"]
    ratios = [r["mean"] / base.get((r["metric"], r["stat"]), float("nan")) if base.get((r["metric"], r["stat"]))
              else float("nan") for _, r in sub.iterrows()]
    return sub.assign(ratio=ratios)
