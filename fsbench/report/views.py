"""The report's views, in the seeds' own shapes, from the summary of a run (numbers here, text in cells).

A view is a dict of the scenario's `report.views` (or a tool's default): `table` (operations x
targets, each value with its ratio to the baseline: seed 000; or with `columns: metrics`, a column per
metric of each target, as juicefs bench prints ITEM | VALUE | COST; where that is wider than the page, the
tool's main figure per row with every target side by side, then a table per other column, as seed 000's
JuiceFS Bench table and never the targets split into parts), `by_value` (per swept value,
targets x metrics with client CPU and peak memory: seeds 001 and 004), `chart` (a metric against a
swept value, one chart per target or per operation: seed 002), `at` (the values at one swept value:
seed 002's latency at 20 and throughput at 100); `stats`, `best` and `checks` are in tool_views.py.

Rows are per (job, operation): a tool's jobs (vdbench's run definitions, fio's job sections) are told
apart, and a view may pick them (`jobs:`). Every builder also returns its `measurements`, the numbers
the written conclusions compare (fsbench.report.conclusions).
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from fsbench.api.tools import declarations
from fsbench.core.tidy import OUTCOME_UNIT
from fsbench.report import figures
from fsbench.report.layout import fits
from fsbench.report.rows import (
    EMPTY,
    RunView,
    by_metric_target,
    column_groups,
    job_text,
    key_label,
    main_stat,
    measurement,
    metric_text,
    of_key,
    op_label,
    ordered_operations,
    point_text,
    points,
    primary_metric,
    row_keys,
    shown,
    shows_jobs,
    up,
    view_dict,
    workloads_of,
)
from fsbench.report.tables import cell
from fsbench.report.tool_views import best_view, checks_view, stats_view

RESOURCES = (("cpu_usage", "mean", "client CPU"), ("memory_peak", "max", "client peak memory"))


# -- table: operations x targets ----------------------------------------------------------------------

def table_view(rv: RunView, spec: dict) -> dict:
    """Operations x targets, value (ratio to the baseline); one block per workload; per sweep point."""
    workloads = workloads_of(spec)
    df = main_stat(rv.rows(workloads, spec.get("tool")))
    targets = rv.present(df)
    single = len(targets) == 1
    by_metric = spec.get("columns") == "metrics"
    fixed = tuple(spec.get("_point") or ())  # an `at` view's point, which its rows no longer vary in
    tables, measures = [], []
    for pkey, pdf in points(df):
        rows: list[dict] = []
        headers: list[str] = []
        more: dict[str, list[dict]] = {}  # a column per table where all of them side by side would not fit
        for w in workloads:
            tool = rv.tool_of(w, spec)
            wdf = shown(pdf[pdf["workload"] == w], tool, spec)
            if wdf.empty:
                continue
            if len(workloads) > 1:
                rows.append({"section": (rv.descriptions.get(w) or w), "labels": [], "cells": []})
            block = _Block(rv, spec, w, tool, targets, fixed + pkey)
            groups = column_groups(tool, list(spec.get("metrics") or []), set(wdf["metric"])) if by_metric else []
            apart = by_metric and not fits(len(targets), len(groups))
            if by_metric and not apart:
                headers = headers or [h for h, _ in groups]
                rows += block.metric_columns(wdf, groups)
            else:
                rows += block.metric_rows(wdf)
            measures += block.measures
            if spec.get("resources", True):
                rows += _resource_rows(rv, w, pkey, targets, single, len(headers) or 1)
            if apart:  # the other columns as tables of their own below, every target still side by side
                for header, ms in groups[1:]:
                    aside = _Block(rv, spec, w, tool, targets, fixed + pkey)  # its measures are the first table's
                    more.setdefault(header, []).extend(
                        ([{"section": (rv.descriptions.get(w) or w), "labels": [], "cells": []}]
                         if len(workloads) > 1 else []) + aside.metric_columns(wdf, [(header, ms)]))
        if rows:
            table = {"kind": "compare", "title": point_text(pkey), "targets": targets, "rows": rows,
                     "single": single, "head": ["", *targets]}
            if headers:
                table.update(head=["", *(headers * len(targets))], per_target=max(1, len(headers)),
                             groups=targets if not single else [])
            tables.append(table)
        for header, extra in more.items():
            at = point_text(pkey)
            tables.append({"kind": "compare", "title": header + (f" · {at}" if at else ""), "targets": targets,
                           "rows": extra, "single": single, "head": ["", *targets]})
    charts = _bar_charts(rv, spec, df) if spec.get("chart") else []
    return view_dict("table", spec, rv, tables=tables, charts=charts, measures=measures)


class _Block:
    """The rows of one workload in a table view, and what they measure."""

    def __init__(self, rv: RunView, spec: dict, workload: str, tool: object, targets: list[str], pkey: tuple):
        self.rv, self.spec, self.w, self.tool, self.targets, self.pkey = rv, spec, workload, tool, targets, pkey
        self.measures: list[dict | None] = []
        self.time_unit = str(spec.get("time_unit") or "")

    def cells(self, index: dict[tuple[str, str], dict], metric: str, targets: list[str]) -> list[dict]:
        return _cells(index, metric, targets, self.rv, self.w, self.tool, ratio=len(self.targets) > 1,
                      time_unit=self.time_unit)

    def metric_rows(self, wdf: pd.DataFrame) -> list[dict]:
        """A row per (job, operation) by its primary metric, or per metric where the view lists several."""
        wanted = list(self.spec.get("metrics") or [])
        keys = row_keys(wdf, self.tool, self.spec)
        with_job = shows_jobs(keys)
        rows = []
        for job, op in keys:
            kdf = of_key(wdf, job, op)
            have = set(kdf["metric"])
            picked = [m for m in wanted if m in have] if len(wanted) > 1 else [primary_metric(kdf, self.tool, wanted)]
            metrics = [str(m) for m in picked if m]
            index = by_metric_target(kdf)
            for metric in metrics:
                label = key_label(job, op, with_job) + (f" · {metric_text(metric)}" if len(metrics) > 1 else "")
                rows.append({"labels": [label], "operation": op, "job": job, "metric": metric, "workload": self.w,
                             "cells": self.cells(index, metric, self.targets)})
            if metrics:
                self.measures.append(measurement(self.rv, self.spec, self.w, job, op, metrics[0], self.pkey, kdf))
        return rows

    def metric_columns(self, wdf: pd.DataFrame, groups: list[tuple[str, tuple[str, ...]]]) -> list[dict]:
        """A row per (job, operation), a column per metric (group) of each target."""
        keys = row_keys(wdf, self.tool, self.spec)
        with_job = shows_jobs(keys)
        rows: list[dict] = []
        for job, op in keys:
            kdf = of_key(wdf, job, op)
            have = set(kdf["metric"])
            picked = [next((m for m in ms if m in have), ms[0]) for _, ms in groups]
            index = by_metric_target(kdf)
            # each target its group's first metric it has (objbench: a store that cannot do an item has only
            # `supported`, shown as `not supported` where the others have their figures)
            cells = [c for t in self.targets for (_, ms), metric in zip(groups, picked)
                     for c in self.cells(index, next((m for m in ms if (m, t) in index), metric), [t])]
            # outcomes (objbench's `not supported`) are each item's own, however alike the row above
            if rows and rows[-1]["job"] == job and _repeats(cells, rows[-1]["cells"]) \
                    and not (kdf["unit"] == OUTCOME_UNIT).all():
                continue  # vdbench's Write of a write-only run: All's figures again, nothing of its own
            rows.append({"labels": [key_label(job, op, with_job)], "operation": op, "job": job, "workload": self.w,
                         "cells": cells})
            first = next((m for m in picked if m in have), "")
            if first:
                self.measures.append(measurement(self.rv, self.spec, self.w, job, op, first, self.pkey, kdf))
        if with_job and {r["operation"] for r in rows} == {"all"}:  # "rd1 · All" on every row: the job says it
            for r in rows:
                r["labels"] = [job_text(r["job"])]
        return rows


def _repeats(cells: list[dict], above: list[dict]) -> bool:
    """Whether a row's figures are all the row above's (same column, as the reader sees them) and it has
    no other."""
    shown = [(c, a) for c, a in zip(cells, above) if c.get("value") != ""]
    return bool(shown) and all((c["text"], c["ratio"]) == (a.get("text"), a.get("ratio")) for c, a in shown)


def _bar_charts(rv: RunView, spec: dict, df: pd.DataFrame, most: int = 2) -> list[dict]:
    """Bars of each row's primary value per target (a chart per metric, the first `most`)."""
    picked = []
    for w in workloads_of(spec):
        tool = rv.tool_of(w, spec)
        wdf = shown(df[df["workload"] == w], tool, spec)
        keys = row_keys(wdf, tool, spec)
        with_job = shows_jobs(keys)
        for job, op in keys:
            kdf = of_key(wdf, job, op)
            metric = primary_metric(kdf, tool, list(spec.get("metrics") or []))
            picked.append(kdf[kdf["metric"] == metric].assign(label=key_label(job, op, with_job)))
    if not picked:
        return []
    data = pd.concat(picked)
    pcols = [c for c in data.columns if c.startswith("param_") and data[c].astype(str).nunique() > 1]
    if pcols:  # one bar group per sweep point and row
        data = data.assign(point=[f"{lab} {point_text({c: r[c] for c in pcols})}"
                                  for lab, (_, r) in zip(data["label"], data.iterrows())])
    else:
        data = data.assign(point=data["label"])
    charts = []
    for metric, m in list(data.groupby("metric", sort=False))[:most]:
        if m["point"].nunique() * m["target"].nunique() > 60:
            continue  # unreadable as bars: the table carries the numbers
        title = metric_text(str(metric))
        charts.append({"metric": metric, "title": title,
                       "svg": figures.bar_chart(m, title, str(m["unit"].iloc[0]), "point", "target")})
    return charts


def _cells(index: dict[tuple[str, str], dict], metric: str, targets: list[str], rv: RunView, workload: str,
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


def _resource_rows(rv: RunView, workload: str, pkey: tuple, targets: list[str], single: bool,
                   per: int = 1) -> list[dict]:
    """Client CPU (100 % = one core) and peak memory of each target's client process, as rows (in the
    first of each target's `per` columns)."""
    res = _resources(rv, workload, pkey)
    if res.empty:
        return []
    rows = []
    for metric, stat, label in RESOURCES:
        sub = res[(res["metric"] == metric) & (res["stat"] == stat)]
        if sub.empty:
            continue
        cells = []
        for t in targets:
            cells += [_resource_cell(rv, sub, t, metric, workload, single)] + [dict(EMPTY)] * (per - 1)
        names = sorted({rv.clients[t] for t in targets if t in rv.clients})
        rows.append({"labels": [f"{label} ({', '.join(names)})"], "operation": "client", "metric": metric,
                     "workload": workload, "cells": cells, "resource": True})
    return rows


def _resource_cell(rv: RunView, sub: pd.DataFrame, target: str, metric: str, workload: str, single: bool) -> dict:
    r = sub[sub["target"] == target]
    if r.empty:
        return dict(EMPTY)
    row = r.iloc[0].copy()
    if single:
        row["ratio"] = float("nan")
    c = cell(row, metric, target == rv.baseline, rv.style, workload, whole_percent=True)
    c["cls"] = ""  # using less CPU is not "worse": resources are shown, not judged
    return c


def _resources(rv: RunView, workload: str, pkey: tuple) -> pd.DataFrame:
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


# -- by_value: per swept value, targets x metrics -------------------------------------------------------

def by_value_view(rv: RunView, spec: dict) -> dict:
    """Per value of the swept parameter (or once, when none is given): targets x metrics, resources last."""
    workloads = workloads_of(spec)
    df = main_stat(rv.rows(workloads, spec.get("tool")))
    targets = rv.present(df)
    param = f"param_{spec['param']}" if spec.get("param") else ""
    tables, measures = [], []
    groups = [((), df)] if not param or param not in df else \
        sorted(((((param, v),), sub) for v, sub in df.groupby(param, sort=False)),
               key=lambda p: _num(p[0][0][1]))
    for w in workloads:
        tool = rv.tool_of(w, spec)
        for pkey, pdf in groups:
            wdf = shown(pdf[pdf["workload"] == w], tool, spec)
            if wdf.empty:
                continue
            columns = _by_value_columns(wdf, tool, spec)
            res = _resources(rv, w, pkey) if spec.get("resources", True) else pd.DataFrame()
            res_cols = [(m, s, label) for m, s, label in RESOURCES
                        if not res.empty and not res[(res["metric"] == m) & (res["stat"] == s)].empty]
            keyed = {(job, op): of_key(wdf, job, op) for job, op, _ in columns}
            indexed = {k: by_metric_target(kdf) for k, kdf in keyed.items()}
            rows = []
            for t in targets:
                cells = []
                for job, op, metric in columns:
                    cells += _cells(indexed[(job, op)], metric, [t], rv, w, tool, ratio=len(targets) > 1,
                                    time_unit=spec.get("time_unit") or "")
                for metric, stat, _ in res_cols:
                    cells.append(_resource_cell(rv, res[(res["metric"] == metric) & (res["stat"] == stat)], t,
                                                metric, w, len(targets) == 1))
                rows.append({"labels": [t], "target": t, "cells": cells})
            firsts: dict[tuple[str, str], str] = {}
            for job, op, metric in columns:
                firsts.setdefault((job, op), metric)
            for (job, op), metric in firsts.items():
                measures.append(measurement(rv, spec, w, job, op, metric, pkey, keyed[(job, op)]))
            keys = list(firsts)
            with_job = shows_jobs(keys)
            named = len(keys) > 1
            head = ["", *[(f"{key_label(job, op, with_job).lower()} " if named else "") + metric_text(m)
                          for job, op, m in columns], *[label for _, _, label in res_cols]]
            title = " · ".join(x for x in ((rv.descriptions.get(w) or w) if len(workloads) > 1 else "",
                                           point_text(pkey)) if x)
            tables.append({"kind": "by_value", "title": title, "head": head, "targets": targets, "rows": rows})
    return view_dict("by_value", spec, rv, tables=tables, measures=measures)


def _by_value_columns(df: pd.DataFrame, tool: object, spec: dict) -> list[tuple[str, str, str]]:
    wanted = list(spec.get("metrics") or [])
    metrics = wanted or [m for m in declarations(tool).primary_metrics if m in set(df["metric"])][:2]
    have = set(zip(df["job"].astype(str), df["operation"].astype(str), df["metric"].astype(str)))
    return [(job, op, m) for job, op in row_keys(df, tool, spec) for m in metrics if (job, op, m) in have]


def _num(v: object) -> tuple:
    try:
        return (0, float(str(v)), "")
    except ValueError:
        return (1, 0.0, str(v))


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
            kdf = of_key(m, job, op)
            for v, sub in kdf.groupby(param, sort=False):
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


__all__ = ["EMPTY", "RunView", "build_view", "op_label", "ordered_operations"]
