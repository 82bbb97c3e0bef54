"""Views shaped like a tool's own output: `stats` (per target, Max / Min / Mean / StdDev as mdtest reports
them: seed 004), `best` (per operation, each target as a % of the best or of a `reference:` target, capped at
100 and rounded down: seed 004's Compare) and `checks`
(functional checks, pass / not supported / failed per target: juicefs objbench, seed 003)."""

from __future__ import annotations

import math

from fsbench.api.tools import declarations
from fsbench.core.units import format_value
from fsbench.report.rows import (
    EMPTY,
    RunView,
    key_label,
    main_stat,
    measurement,
    metric_text,
    of_key,
    op_label,
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

STATS = ("max", "min", "mean", "stddev")
#: a metric's name in a tool's own header (mdtest says IOPS for its rates)
WORDS = {"rate": "IOPS", "iops": "IOPS", "bandwidth": "bandwidth"}


def stats_view(rv: RunView, spec: dict) -> dict:
    """Per target: each operation's Max / Min / Mean / StdDev as the tool reported them (seed 004)."""
    workloads = workloads_of(spec)
    s = rv.rows(workloads, spec.get("tool"))
    s = s[s["stat"].isin(STATS)] if not s.empty else s
    tables, measures = [], []
    for w in workloads:
        wdf = s[s["workload"] == w] if not s.empty else s
        if wdf.empty or not set(wdf["stat"]) & {"max", "min", "stddev"}:
            continue
        tool = rv.tool_of(w, spec)
        metric = (spec.get("metrics") or [None])[0] or next(
            (m for m in declarations(tool).primary_metrics if m in set(wdf["metric"])), str(wdf["metric"].iloc[0]))
        mdf = wdf[wdf["metric"] == metric]
        keys = row_keys(mdf, tool, spec)
        with_job = shows_jobs(keys)
        word = WORDS.get(metric, metric_text(metric))
        for t in rv.present(mdf):
            tdf = mdf[mdf["target"] == t]
            rows = []
            for job, op in keys:
                odf = of_key(tdf, job, op)
                by = {str(st): (float(v), str(u)) for st, v, u in zip(odf["stat"], odf["mean"], odf["unit"])}
                if by:
                    rows.append({"labels": [key_label(job, op, with_job)], "cells": [
                        {**EMPTY, "text": format_value(*by[st]), "value": by[st][0]} if st in by else dict(EMPTY)
                        for st in STATS]})
            if rows:
                title = t + (f" · {rv.descriptions.get(w) or w}" if len(workloads) > 1 else "")
                tables.append({"kind": "stats", "title": title, "target": t,
                               "head": ["Operation", f"Max {word}", f"Min {word}", f"Mean {word}", "Std Dev"],
                               "targets": [], "rows": rows})
        for job, op in keys:
            kdf = of_key(mdf, job, op)
            measures.append(measurement(rv, spec, w, job, op, metric, (), kdf[kdf["stat"] == "mean"],
                                        spread=kdf[kdf["stat"] == "stddev"]))
    return view_dict("stats", spec, rv, tables=tables, measures=measures)


def best_view(rv: RunView, spec: dict) -> dict:
    """Per operation (and per swept value): each target's value and its percentage of the best one, or of
    the view's `reference:` target (seed 004's Compare: % of RBD-SSD)."""
    workloads = workloads_of(spec)
    ref = reference_of(rv, spec)
    df = main_stat(rv.rows(workloads, spec.get("tool")))
    tables, measures = [], []
    for w in workloads:
        tool = rv.tool_of(w, spec)
        wdf = shown(df[df["workload"] == w], tool, spec)
        keys = row_keys(wdf, tool, spec)
        with_job = shows_jobs(keys)
        for job, op in keys:
            kdf = of_key(wdf, job, op)
            metric = primary_metric(kdf, tool, list(spec.get("metrics") or []))
            if metric is None:
                continue
            for pkey, sub in points(kdf[kdf["metric"] == metric]):
                table = _best_table(rv, sub, metric, up(metric, tool), ref)
                if table is None:
                    continue
                at = point_text(pkey)  # a swept workload: one table per value, each says which
                table["title"] = key_label(job, op, with_job) + (f" · {at}" if at else "")
                tables.append(table)
                measures.append(measurement(rv, spec, w, job, op, metric, pkey, sub))
    return view_dict("best", spec, rv, tables=tables, measures=measures)


def reference_of(rv: RunView, spec: dict) -> str:
    """The target a `best` view's percentages are of: `reference:` names one, `baseline` is the report's
    baseline target; '' (the default, `best`) is the best target of each table."""
    ref = str(spec.get("reference") or "best")
    return "" if ref == "best" else rv.baseline if ref == "baseline" else ref


def _best_table(rv: RunView, sub, metric: str, higher: bool, ref: str = "") -> dict | None:
    vals = {str(t): float(v) for t, v in zip(sub["target"], sub["mean"]) if float(v) > 0}
    if len(vals) < 2:
        return None
    # the reference's own value where it has one; else the best, and the head says so
    of = ref if ref in vals else ""
    best = vals[of] if of else max(vals.values()) if higher else min(vals.values())
    unit = str(sub["unit"].iloc[0])
    rows = []
    for t in rv.present(sub):
        if t not in vals:
            continue
        pct = min(100.0, 100 * (vals[t] / best if higher else best / vals[t]))
        rows.append({"labels": [t], "cells": [
            {**EMPTY, "text": format_value(vals[t], unit), "value": vals[t]},
            {**EMPTY, "text": percent_text(pct), "value": pct, "cls": "better" if pct >= 100 else ""}]})
    head = "%" if of or not ref else f"% of the best ({ref}: no value)"
    return {"kind": "best", "title": "", "head": ["Name", WORDS.get(metric, metric_text(metric)), head],
            "targets": [], "rows": rows}


def percent_text(pct: float) -> str:
    """A share as seed 004 writes it: whole percent rounded down (99.97 % is 99 %), a system that worked
    never 0 % (`<1%`)."""
    whole = math.floor(pct + 1e-9)  # 100 * (x / x) may land a hair under 100
    return "<1%" if whole < 1 and pct > 0 else f"{whole}%"


#: a functional check's outcome (the metric `functional`, unit `result`) as a cell
OUTCOMES = {1.0: ("pass", "better"), 0.0: ("not supported", ""), -1.0: ("failed", "worse")}


def checks_view(rv: RunView, spec: dict) -> dict:
    """Functional checks (rows, grouped by category) x targets: pass, not supported or failed (seed 003's
    objbench table), a failure with the tool's reason beside it. A check whose repetitions disagree says
    `varies`."""
    workloads = workloads_of(spec)
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
                    cells.append({**EMPTY, "text": text, "cls": cls, "value": text, "ratio": _why(r, text)})
                rows.append({"labels": [op_label(op)], "operation": op, "metric": "functional", "workload": w,
                             "cells": cells, "check": True})
        title = rv.descriptions.get(w) or w if len(workloads) > 1 else ""
        tables.append({"kind": "compare", "title": title, "head": ["", *targets], "targets": targets, "rows": rows,
                       "single": len(targets) == 1})
    return view_dict("checks", spec, rv, tables=tables)


def _why(row, text: str) -> str:
    """What the tool printed for a check that failed (or varies), in parentheses: the cell's second line,
    where other views put the ratio; '' for the others."""
    if text not in ("failed", "varies") or "result" not in row:
        return ""
    said = row["result"].iloc[0]
    said = said.strip() if isinstance(said, str) else ""  # NaN where the tool printed nothing
    return f"({said})" if said else ""
