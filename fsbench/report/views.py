"""The report's views, in the seeds' own shapes, from the summary of a run (numbers here, text in cells).

A view is a dict of the scenario's `report.views` (or a tool's default): `table` (operations x targets,
each value with its ratio to the baseline: seed 000; table_view.py), `by_value` (per swept value, targets x
metrics with client CPU and peak memory: seeds 001 and 004; by_value.py), `chart` (a metric against a
swept value, one chart per target or per operation: seed 002), `at` (the values at one swept value:
seed 002's latency at 20 and throughput at 100); `stats`, `best` and `checks` are in tool_views.py.

Rows are per (job, operation): a tool's jobs (vdbench's run definitions, fio's job sections) are told
apart, and a view may pick them (`jobs:`). Every builder also returns its `measurements`, the numbers
the written conclusions compare (fsbench.report.conclusions).
"""

from __future__ import annotations

import dataclasses

from fsbench.api.tools import declarations
from fsbench.report import figures
from fsbench.report.by_value import by_value_view
from fsbench.report.rows import (
    EMPTY,
    RunView,
    key_label,
    main_stat,
    measurement,
    metric_text,
    of_key,
    op_label,
    ordered_operations,
    records,
    row_keys,
    shows_jobs,
    view_dict,
    workloads_of,
)
from fsbench.report.table_view import table_view
from fsbench.report.tool_views import best_view, checks_view, stats_view

# -- chart: a metric against a swept value ----------------------------------------------------------------

def chart_view(rv: RunView, spec: dict) -> dict:
    """One line chart per target (a line per operation) or per operation (a line per target) (seed 002)."""
    workloads = workloads_of(spec)
    df = main_stat(rv.rows(workloads, spec.get("tool")))
    param = f"param_{spec['param']}"
    charts: list[dict] = []
    measures: list[dict | None] = []
    if df.empty or param not in df:
        return view_dict("chart", spec, rv, charts=charts)
    per_target = spec.get("per", "target") == "target"
    for w in workloads:
        wdf = df[df["workload"] == w]
        tool = rv.tool_of(w, spec)
        metric = (spec.get("metrics") or [None])[0] or next(
            (m for m in declarations(tool).primary_metrics if m in set(wdf["metric"])), None)
        if metric is None:
            continue
        m = wdf[wdf["metric"] == metric]
        keys = row_keys(m, tool, spec)
        with_job = shows_jobs(keys)
        label = {k: key_label(*k, with_job) for k in keys}
        m = m[[(str(j), str(o)) in label for j, o in zip(m["job"], m["operation"])]]
        m = m.assign(series_key=[label[(str(j), str(o))] for j, o in zip(m["job"], m["operation"])])
        unit = str(m["unit"].iloc[0]) if not m.empty else ""
        groups = rv.present(m) if per_target else [label[k] for k in keys]
        key, series = ("target", "series_key") if per_target else ("series_key", "target")
        for g in groups:
            gm = m[m[key] == g]
            if gm[param].nunique() < 2:
                continue
            title = f"{g}: {metric_text(metric)} by {spec['param']}"
            charts.append({"metric": metric, "title": title,
                           "svg": figures.line_chart(gm.assign(series=gm[series].map(str)), title, unit, param,
                                                     "series", scale_from=m["mean"])})  # one unit per view
        for job, op in keys:
            at: dict[object, list[dict]] = {}  # the rows of each swept value, in the order groupby gives
            for r in records(of_key(m, job, op)):
                if r[param] is not None and r[param] == r[param]:  # no value (NaN): as groupby, left out
                    at.setdefault(r[param], []).append(r)
            for v, sub in at.items():
                measures.append(measurement(rv, spec, w, job, op, metric, ((param, v),), sub))
    return view_dict("chart", spec, rv, charts=charts, measures=measures)


# -- at: the values at one swept value -------------------------------------------------------------------

def at_view(rv: RunView, spec: dict) -> dict:
    """The table view restricted to one value of a swept parameter, with a bar chart (seed 002)."""
    param, value = f"param_{spec['param']}", str(spec["value"])
    workloads = workloads_of(spec)
    df = main_stat(rv.rows(workloads, spec.get("tool")))
    if df.empty or param not in df:
        return view_dict("at", spec, rv)
    picked = df[df[param].astype(str) == value]
    sub = dataclasses.replace(rv, summary=rv.summary[rv.summary[param].astype(str) == value]
                              if param in rv.summary else rv.summary.iloc[0:0])
    inner = table_view(sub, {**spec, "resources": spec.get("resources", False), "_point": ((param, value),)})
    charts = []
    for w in workloads:
        wdf = picked[picked["workload"] == w]
        tool = rv.tool_of(w, spec)
        metric = (spec.get("metrics") or [None])[0] or next(
            (m for m in declarations(tool).primary_metrics if m in set(wdf["metric"])), None)
        m = wdf[wdf["metric"] == metric]
        keys = row_keys(m, tool, spec)
        if m.empty or metric is None or not keys:
            continue
        with_job = shows_jobs(keys)
        label = {k: key_label(*k, with_job) for k in keys}
        m = m[[(str(j), str(o)) in label for j, o in zip(m["job"], m["operation"])]]
        unit = str(m["unit"].iloc[0])
        title = f"{metric_text(metric)} at {spec['param']}={value}"
        charts.append({"metric": metric, "title": title, "svg": figures.bar_chart(
            m.assign(point=[label[(str(j), str(o))] for j, o in zip(m["job"], m["operation"])]), title, unit,
            "point", "target")})
    return view_dict("at", spec, rv, tables=inner["tables"], charts=charts, measures=inner["measurements"])


BUILDERS = {"table": table_view, "by_value": by_value_view, "stats": stats_view, "best": best_view,
            "chart": chart_view, "at": at_view, "checks": checks_view}


def build_view(rv: RunView, spec: dict) -> dict:
    """One view of the report."""
    return BUILDERS[spec["view"]](rv, spec)


__all__ = ["EMPTY", "RunView", "build_view", "op_label", "ordered_operations", "table_view"]
