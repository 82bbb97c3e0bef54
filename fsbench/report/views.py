"""The report's views, in the seeds' own shapes, from the summary of a run (numbers here, text in cells).

A view is a dict of the scenario's `report.views` (or a tool's default): `table` (operations x
targets, each value with its ratio to the baseline: seed 000), `by_value` (per swept value, targets x
metrics with client CPU and peak memory: seeds 001 and 004), `stats` (per target Max/Min/Mean/StdDev
per operation: seed 004), `best` (per operation, % of the best: seed 004), `chart` (a metric against a
swept value, one chart per target or per operation: seed 002) and `at` (the values at one swept value:
seed 002's latency at 20 and throughput at 100), `checks` (functional checks, pass / not supported /
failed per target: juicefs objbench, seed 003).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pandas as pd

from fsbench.report import figures
from fsbench.report.tables import Style, cell
from fsbench.tidy import HIGHER_IS_BETTER
from fsbench.units import format_value

STATS = ("max", "min", "mean", "stddev")
RESOURCE_METRICS = ("cpu_usage", "memory_peak")
EMPTY = {"text": "–", "ratio": "", "cls": "", "cv": "", "unstable": False, "value": "", "verdict": ""}


@dataclass
class RunView:
    """What every view needs of the run: its summary, targets, baseline, tools and client processes."""

    summary: pd.DataFrame
    targets: list[str]
    baseline: str
    style: Style
    tools: dict[str, object]  # workload -> its tool plug-in
    tool_names: dict[str, str]  # workload -> tool name
    descriptions: dict[str, str] = field(default_factory=dict)
    clients: dict[str, str] = field(default_factory=dict)  # target -> its client process name
    #: rows of other tools beside a workload's own (collectors: juicefs-stats, juicefs-profile) -> plug-in
    side_tools: dict[str, object] = field(default_factory=dict)

    def rows(self, workloads: list[str], tool: str | None = None) -> pd.DataFrame:
        """The summary rows of these workloads: its tools' own (not the monitor's or a collector's), or
        those of `tool` (a view's `tool:`, e.g. a collector's)."""
        s = self.summary
        if s.empty:
            return s
        s = s[s["workload"].isin(workloads)]
        if tool:
            return s[s["tool"] == tool]
        return s[(s["tool"] != "monitor") & ~s["tool"].isin(list(self.side_tools))]

    def tool_of(self, workload: str, spec: dict) -> object:
        """The plug-in whose declarations (operation order, primary metrics) the view follows."""
        return self.side_tools.get(str(spec.get("tool"))) if spec.get("tool") else self.tools.get(workload)

    def present(self, df: pd.DataFrame) -> list[str]:
        """Targets with results, in the scenario's order."""
        have = set(df["target"]) if not df.empty else set()
        return [t for t in self.targets if t in have]


def params_of(df: pd.DataFrame) -> list[str]:
    """Swept parameters with more than one value in df."""
    return [c for c in df.columns
            if c.startswith("param_") and df[c].astype(str).replace("", pd.NA).dropna().nunique() > 1]


def ordered_operations(df: pd.DataFrame, tool: object, wanted: list[str]) -> list[str]:
    """The operations to show: the view's list, else the tool's natural order, then any others by name."""
    have = list(dict.fromkeys(str(o) for o in df["operation"]))
    if wanted:
        return [o for o in wanted if o in have]
    order_by = getattr(tool, "order_by", "")
    if order_by:  # the biggest first, as the tool itself lists them (juicefs profile: total time)
        totals = df[df["metric"] == order_by].groupby("operation")["mean"].sum()
        return sorted(have, key=lambda o: -float(totals.get(o, 0.0)))
    natural = list(getattr(tool, "operations", ()) or ())
    if natural and any(o in have for o in natural):
        return [o for o in natural if o in have]  # the others (a tool's internals) go to "All measurements"
    return sorted(have)


def primary_metric(df: pd.DataFrame, tool: object, operation: str, wanted: list[str]) -> str | None:
    """The metric an operation is shown by: the first of the view's (or the tool's primary) it has."""
    have = set(df.loc[df["operation"] == operation, "metric"])
    for m in list(wanted) + list(getattr(tool, "primary_metrics", ()) or ()):
        if m in have:
            return m
    return None


def _main_stat(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["stat"].isin(["value", "mean"])]


def _label(op: str) -> str:
    return op.replace("_", " ").capitalize()


def _point(row_params: dict) -> str:
    return " ".join(f"{k.removeprefix('param_')}={v}" for k, v in row_params.items() if str(v) != "")


# -- table: operations x targets ----------------------------------------------------------------------

def table_view(rv: RunView, spec: dict) -> dict:
    """Operations x targets, value (ratio to the baseline); one block per workload; per sweep point."""
    workloads = _workloads(spec)
    df = _main_stat(rv.rows(workloads, spec.get("tool")))
    targets = rv.present(df)
    single = len(targets) == 1
    tables = []
    points = _points(df)
    for pkey, pdf in points:
        head = ["", *targets]
        rows: list[dict] = []
        for w in workloads:
            wdf = pdf[pdf["workload"] == w]
            if wdf.empty:
                continue
            tool = rv.tool_of(w, spec)
            if len(workloads) > 1:
                rows.append({"section": (rv.descriptions.get(w) or w), "labels": [], "cells": []})
            for op in ordered_operations(wdf, tool, spec.get("operations") or []):
                metrics = spec.get("metrics") or []
                have = set(wdf.loc[wdf["operation"] == op, "metric"])
                shown = [m for m in metrics if m in have] if len(metrics) > 1 else \
                    [primary_metric(wdf, tool, op, metrics)]
                for metric in [m for m in shown if m]:
                    rows.append({"labels": [_label(op) + (f" · {metric.replace('_', ' ')}" if len(shown) > 1 else "")],
                                 "operation": op, "metric": metric, "workload": w,
                                 "cells": _cells(wdf, op, metric, targets, rv, w, ratio=not single,
                                                 time_unit=spec.get("time_unit") or "")})
            if spec.get("resources", True):
                rows += _resource_rows(rv, w, pkey, targets, single)
        if rows:
            title = _point({k: v for k, v in pkey}) if pkey else ""
            tables.append({"kind": "compare", "title": title, "head": head, "targets": targets, "rows": rows,
                           "single": single})
    return _view("table", spec, rv, tables=tables, charts=_bar_charts(rv, spec, df) if spec.get("chart") else [])


def _bar_charts(rv: RunView, spec: dict, df: pd.DataFrame, most: int = 2) -> list[dict]:
    """Bars of each operation's primary value per target (a chart per metric, the first `most`)."""
    picked = []
    for w in _workloads(spec):
        wdf = df[df["workload"] == w]
        tool = rv.tool_of(w, spec)
        for op in ordered_operations(wdf, tool, spec.get("operations") or []):
            metric = primary_metric(wdf, tool, op, spec.get("metrics") or [])
            picked.append(wdf[(wdf["operation"] == op) & (wdf["metric"] == metric)])
    if not picked:
        return []
    data = pd.concat(picked)
    if params_of(data):  # one bar group per sweep point and operation
        label = data.apply(lambda r: f"{_label(str(r['operation']))} " + _point(
            {c: r[c] for c in params_of(data)}), axis=1)
    else:
        label = data["operation"].map(lambda o: _label(str(o)))
    data = data.assign(point=label)
    charts = []
    for metric, m in list(data.groupby("metric", sort=False))[:most]:
        if m["point"].nunique() * m["target"].nunique() > 60:
            continue  # unreadable as bars: the table carries the numbers
        title = str(metric).replace("_", " ")
        charts.append({"metric": metric, "title": title,
                       "svg": figures.bar_chart(m, title, str(m["unit"].iloc[0]), "point", "target")})
    return charts


def _cells(df: pd.DataFrame, op: str, metric: str, targets: list[str], rv: RunView, workload: str,
           ratio: bool = True, time_unit: str = "") -> list[dict]:
    out = []
    for t in targets:
        r = df[(df["operation"] == op) & (df["metric"] == metric) & (df["target"] == t)]
        if r.empty:
            out.append(dict(EMPTY))
            continue
        row = r.iloc[0].copy()
        if not ratio:
            row["ratio"] = float("nan")
        out.append(cell(row, metric, t == rv.baseline, rv.style, workload, time_unit))
    return out


def _resource_rows(rv: RunView, workload: str, pkey: tuple, targets: list[str], single: bool) -> list[dict]:
    """Client CPU (100 % = one core) and peak memory of each target's client process, as rows."""
    res = _resources(rv, workload, pkey)
    if res.empty:
        return []
    rows = []
    for metric, stat, label in (("cpu_usage", "mean", "client CPU"), ("memory_peak", "max", "client peak memory")):
        sub = res[(res["metric"] == metric) & (res["stat"] == stat)]
        if sub.empty:
            continue
        cells = []
        for t in targets:
            r = sub[sub["target"] == t]
            if r.empty:
                cells.append(dict(EMPTY))
                continue
            row = r.iloc[0].copy()
            if single:
                row["ratio"] = float("nan")
            c = cell(row, metric, t == rv.baseline, rv.style, workload)
            c["cls"] = ""  # using less CPU is not "worse": resources are shown, not judged
            cells.append(c)
        names = sorted({rv.clients[t] for t in targets if t in rv.clients})
        rows.append({"labels": [f"{label} ({', '.join(names)})"], "operation": "client", "metric": metric,
                     "workload": workload, "cells": cells, "resource": True})
    return rows


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


def _points(df: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """(((param, value), ...), rows) per sweep point (one empty key when nothing is swept)."""
    pcols = params_of(df)
    if not pcols or df.empty:
        return [((), df)]
    out = []
    for values, sub in df.groupby(pcols, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        out.append((tuple(zip(pcols, values)), sub))
    return sorted(out, key=lambda p: tuple(_num(v) for _, v in p[0]))


def _num(v: object) -> tuple:
    try:
        return (0, float(str(v)), "")
    except ValueError:
        return (1, 0.0, str(v))


# -- by_value: per swept value, targets x metrics -------------------------------------------------------

def by_value_view(rv: RunView, spec: dict) -> dict:
    """Per value of the swept parameter (or once, when none is given): targets x metrics, resources last."""
    workloads = _workloads(spec)
    df = _main_stat(rv.rows(workloads, spec.get("tool")))
    targets = rv.present(df)
    param = f"param_{spec['param']}" if spec.get("param") else ""
    tables = []
    groups = [((), df)] if not param or param not in df else \
        sorted(((((param, v),), sub) for v, sub in df.groupby(param, sort=False)), key=lambda p: _num(p[0][0][1]))
    for w in workloads:
        tool = rv.tool_of(w, spec)
        for pkey, pdf in groups:
            wdf = pdf[pdf["workload"] == w]
            if wdf.empty:
                continue
            columns = _by_value_columns(wdf, tool, spec.get("metrics") or [])
            res = _resources(rv, w, pkey) if spec.get("resources", True) else pd.DataFrame()
            res_cols = [(m, s, label) for m, s, label in (("cpu_usage", "mean", "client CPU"),
                                                         ("memory_peak", "max", "client peak memory"))
                        if not res.empty and not res[(res["metric"] == m) & (res["stat"] == s)].empty]
            rows = []
            for t in targets:
                cells = []
                for op, metric in columns:
                    cells += _cells(wdf, op, metric, [t], rv, w, ratio=len(targets) > 1,
                                    time_unit=spec.get("time_unit") or "")
                for metric, stat, _ in res_cols:
                    r = res[(res["metric"] == metric) & (res["stat"] == stat) & (res["target"] == t)]
                    c = cell(r.iloc[0].copy(), metric, t == rv.baseline, rv.style, w) if not r.empty else dict(EMPTY)
                    c["cls"] = ""
                    cells.append(c)
                rows.append({"labels": [t], "target": t, "cells": cells})
            ops = {op for op, _ in columns}
            head = ["", *[(f"{op} " if len(ops) > 1 else "") + m.replace("_", " ") for op, m in columns],
                    *[label for _, _, label in res_cols]]
            title = " · ".join(x for x in ((rv.descriptions.get(w) or w) if len(workloads) > 1 else "",
                                           _point(dict(pkey))) if x)
            tables.append({"kind": "by_value", "title": title, "head": head, "targets": targets, "rows": rows})
    return _view("by_value", spec, rv, tables=tables)


def _by_value_columns(df: pd.DataFrame, tool: object, wanted: list[str]) -> list[tuple[str, str]]:
    ops = ordered_operations(df, tool, [])
    metrics = wanted or [m for m in (getattr(tool, "primary_metrics", ()) or ()) if m in set(df["metric"])][:2]
    return [(op, m) for op in ops for m in metrics if not df[(df["operation"] == op) & (df["metric"] == m)].empty]


# -- stats: per target, Max / Min / Mean / StdDev --------------------------------------------------------

def stats_view(rv: RunView, spec: dict) -> dict:
    """Per target: each operation's Max / Min / Mean / StdDev as the tool reported them (seed 004)."""
    workloads = _workloads(spec)
    s = rv.rows(workloads, spec.get("tool"))
    s = s[s["stat"].isin(STATS)] if not s.empty else s
    tables = []
    for w in workloads:
        wdf = s[s["workload"] == w] if not s.empty else s
        if wdf.empty or not set(wdf["stat"]) & {"max", "min", "stddev"}:
            continue
        tool = rv.tool_of(w, spec)
        metric = (spec.get("metrics") or [None])[0] or next(
            (m for m in getattr(tool, "primary_metrics", ()) if m in set(wdf["metric"])), str(wdf["metric"].iloc[0]))
        unit_word = {"rate": "IOPS", "iops": "IOPS", "bandwidth": "bandwidth"}.get(metric, metric)
        for t in rv.present(wdf):
            tdf = wdf[(wdf["target"] == t) & (wdf["metric"] == metric)]
            rows = []
            for op in ordered_operations(tdf, tool, spec.get("operations") or []):
                odf = tdf[tdf["operation"] == op]
                by = {str(st): (float(v), str(u)) for st, v, u in zip(odf["stat"], odf["mean"], odf["unit"])}
                rows.append({"labels": [_label(op)], "cells": [
                    {**EMPTY, "text": format_value(*by[st]), "value": by[st][0]} if st in by else dict(EMPTY)
                    for st in STATS]})
            if rows:
                title = t + (f" · {rv.descriptions.get(w) or w}" if len(workloads) > 1 else "")
                tables.append({"kind": "stats", "title": title, "target": t,
                               "head": ["Operation", f"Max {unit_word}", f"Min {unit_word}", f"Mean {unit_word}",
                                        "Std Dev"], "targets": [], "rows": rows})
    return _view("stats", spec, rv, tables=tables)


# -- best: per operation, % of the best --------------------------------------------------------------

def best_view(rv: RunView, spec: dict) -> dict:
    """Per operation: each target's value and its percentage of the best one (seed 004's Compare)."""
    workloads = _workloads(spec)
    df = _main_stat(rv.rows(workloads, spec.get("tool")))
    tables = []
    for w in workloads:
        wdf = df[df["workload"] == w]
        tool = rv.tool_of(w, spec)
        for op in ordered_operations(wdf, tool, spec.get("operations") or []):
            metric = primary_metric(wdf, tool, op, spec.get("metrics") or [])
            sub = wdf[(wdf["operation"] == op) & (wdf["metric"] == metric)]
            if _points(sub)[0][0]:  # swept: one table per point would drown the reader; the first point only
                sub = _points(sub)[0][1]
            vals = {str(t): float(v) for t, v in zip(sub["target"], sub["mean"]) if float(v) > 0}
            if len(vals) < 2 or metric is None:
                continue
            up = metric in HIGHER_IS_BETTER
            best = max(vals.values()) if up else min(vals.values())
            unit = str(sub["unit"].iloc[0])
            rows = []
            for t in rv.present(sub):
                if t not in vals:
                    continue
                pct = 100 * (vals[t] / best if up else best / vals[t])
                rows.append({"labels": [t], "cells": [
                    {**EMPTY, "text": format_value(vals[t], unit), "value": vals[t]},
                    {**EMPTY, "text": f"{pct:.0f}%", "value": pct, "cls": "better" if pct >= 99.95 else ""}]})
            word = {"rate": "IOPS", "iops": "IOPS"}.get(metric, metric.replace("_", " "))
            tables.append({"kind": "best", "title": _label(op), "head": ["Name", word, "%"], "targets": [],
                           "rows": rows})
    return _view("best", spec, rv, tables=tables)


# -- chart: a metric against a swept value ----------------------------------------------------------------

def chart_view(rv: RunView, spec: dict) -> dict:
    """One line chart per target (a line per operation) or per operation (a line per target) (seed 002)."""
    workloads = _workloads(spec)
    df = _main_stat(rv.rows(workloads, spec.get("tool")))
    param = f"param_{spec['param']}"
    charts: list[dict] = []
    if df.empty or param not in df:
        return _view("chart", spec, rv, charts=charts)
    for w in workloads:
        wdf = df[df["workload"] == w]
        tool = rv.tool_of(w, spec)
        metric = (spec.get("metrics") or [None])[0] or next(
            (m for m in getattr(tool, "primary_metrics", ()) if m in set(wdf["metric"])), None)
        if metric is None:
            continue
        m = wdf[wdf["metric"] == metric]
        m = m[m["operation"].isin(ordered_operations(m, tool, spec.get("operations") or []))]
        unit = str(m["unit"].iloc[0]) if not m.empty else ""
        groups = rv.present(m) if spec.get("per", "target") == "target" else ordered_operations(m, tool, [])
        key, series = ("target", "operation") if spec.get("per", "target") == "target" else ("operation", "target")
        for g in groups:
            gm = m[m[key] == g]
            if gm[param].nunique() < 2:
                continue
            title = f"{g if key == 'target' else _label(g)}: {metric.replace('_', ' ')} by {spec['param']}"
            charts.append({"metric": metric, "title": title,
                           "svg": figures.line_chart(gm.assign(series=gm[series].map(str)), title, unit, param,
                                                     "series")})
    return _view("chart", spec, rv, charts=charts)


# -- at: the values at one swept value -------------------------------------------------------------------

def at_view(rv: RunView, spec: dict) -> dict:
    """The table view restricted to one value of a swept parameter, with a bar chart (seed 002)."""
    param, value = f"param_{spec['param']}", str(spec["value"])
    workloads = _workloads(spec)
    df = _main_stat(rv.rows(workloads, spec.get("tool")))
    if df.empty or param not in df:
        return _view("at", spec, rv)
    picked = df[df[param].astype(str) == value]
    sub = dataclasses.replace(rv, summary=rv.summary[(rv.summary.get(param, pd.Series(dtype=str)).astype(str)
                                                       == value)] if param in rv.summary else rv.summary.iloc[0:0])
    inner = table_view(sub, {**spec, "resources": spec.get("resources", False)})
    charts = []
    for w in workloads:
        wdf = picked[picked["workload"] == w]
        tool = rv.tool_of(w, spec)
        metric = (spec.get("metrics") or [None])[0] or next(
            (m for m in getattr(tool, "primary_metrics", ()) if m in set(wdf["metric"])), None)
        m = wdf[wdf["metric"] == metric]
        m = m[m["operation"].isin(ordered_operations(m, tool, spec.get("operations") or []))]
        if m.empty or metric is None:
            continue
        unit = str(m["unit"].iloc[0])
        title = f"{metric.replace('_', ' ')} at {spec['param']}={value}"
        charts.append({"metric": metric, "title": title,
                       "svg": figures.bar_chart(m.assign(point=m["operation"].map(_label)), title, unit, "point",
                                                "target")})
    return _view("at", spec, rv, tables=inner["tables"], charts=charts)


# -- checks: functional checks x targets ------------------------------------------------------------

#: a functional check's outcome (the metric `functional`, unit `result`) as a cell
OUTCOMES = {1.0: ("pass", "better"), 0.0: ("not supported", ""), -1.0: ("failed", "worse")}


def checks_view(rv: RunView, spec: dict) -> dict:
    """Functional checks (rows, grouped by category) x targets: pass, not supported or failed (seed 003's
    objbench table). A check whose repetitions disagree says `varies`."""
    workloads = _workloads(spec)
    df = rv.rows(workloads, spec.get("tool"))
    df = df[df["metric"] == "functional"] if not df.empty else df
    targets = rv.present(df)
    tables = []
    for w in workloads:
        wdf = df[df["workload"] == w]
        if wdf.empty:
            continue
        rows: list[dict] = []
        for category in dict.fromkeys(wdf["job"].astype(str)):
            cdf = wdf[wdf["job"].astype(str) == category]
            if category:
                rows.append({"section": category, "labels": [], "cells": []})
            for op in dict.fromkeys(cdf["operation"].astype(str)):
                cells = []
                for t in targets:
                    r = cdf[(cdf["operation"] == op) & (cdf["target"] == t)]
                    if r.empty:
                        cells.append(dict(EMPTY))
                        continue
                    text, cls = OUTCOMES.get(float(r["mean"].iloc[0]), ("varies", ""))
                    cells.append({**EMPTY, "text": text, "cls": cls, "value": text})
                rows.append({"labels": [_label(op)], "operation": op, "metric": "functional", "workload": w,
                             "cells": cells, "check": True})
        title = rv.descriptions.get(w) or w if len(workloads) > 1 else ""
        tables.append({"kind": "compare", "title": title, "head": ["", *targets], "targets": targets, "rows": rows,
                       "single": len(targets) == 1})
    return _view("checks", spec, rv, tables=tables)


BUILDERS = {"table": table_view, "by_value": by_value_view, "stats": stats_view, "best": best_view,
            "chart": chart_view, "at": at_view, "checks": checks_view}


def build_view(rv: RunView, spec: dict) -> dict:
    """One view of the report."""
    return BUILDERS[spec["view"]](rv, spec)


def _workloads(spec: dict) -> list[str]:
    return list(spec.get("workloads") or [spec["workload"]])


def _view(kind: str, spec: dict, rv: RunView, *, tables: list | None = None, charts: list | None = None) -> dict:
    workloads = _workloads(spec)
    names = {str(spec["tool"])} if spec.get("tool") else {rv.tool_names.get(w, "") for w in workloads}
    suffix = {"stats": " · Max / Min / Mean / StdDev per target", "best": " · % of the best, per operation",
              "checks": " · functional checks",
              "by_value": f" · per {spec.get('param')}" if spec.get("param") else "",
              "chart": f" · by {spec.get('param')}", "at": f" · at {spec.get('param')}={spec.get('value')}"}
    title = spec.get("title") or ((workloads[0] if len(workloads) == 1 else ", ".join(workloads))
                                  + suffix.get(kind, ""))
    return {"kind": kind, "title": title, "workloads": workloads, "tool": ", ".join(sorted(n for n in names if n)),
            "description": rv.descriptions.get(workloads[0], "") if len(workloads) == 1 else "",
            "anchor": "view-" + "-".join(workloads) + f"-{kind}" + (f"-{spec['tool']}" if spec.get("tool") else ""),
            "tables": tables or [], "charts": charts or [],
            "spec": spec}
