"""Report tables shaped like the seeds': targets side by side with ratios, per swept value, stats, % of best."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import pandas as pd

from fsbench.api.tools import better_big
from fsbench.core.thresholds import Threshold, verdict_for
from fsbench.core.tidy import METRIC_UNITS, higher_is_better
from fsbench.core.units import format_value
from fsbench.report.frames import grouped, records

METRIC_ORDER = list(METRIC_UNITS)


@dataclass
class Style:
    """How cells are judged: the band around the baseline, the CV mark, thresholds."""

    same_band: float = 0.05
    cv_threshold: float = 0.10
    thresholds: list[Threshold] = field(default_factory=list)


#: better_big's answers: the report asks per cell, and each answer reads the plug-in's declarations anew
#: (13 runtime Protocol checks, 0.3 ms: 3 s of the 10,000-case report); the plug-in is kept with its answer
#: so that an id is never taken for another plug-in's
_BETTER: dict[tuple[str, int], tuple[object, bool]] = {}


def better(metric: str, tool: object = None) -> bool:
    """Whether a bigger value of this metric is better for this plug-in (api.tools.better_big, remembered)."""
    hit = _BETTER.get((metric, id(tool)))
    if hit is None or hit[0] is not tool:
        hit = _BETTER[(metric, id(tool))] = (tool, better_big(metric, tool))
    return hit[1]


def _finite(x: object) -> bool:
    return x is not None and x == x


def cell(r: pd.Series | dict | None, metric: str, is_base: bool, style: Style, workload: str = "",
         time_unit: str = "", up: bool | None = None, whole_percent: bool = False) -> dict:
    """One value with its ratio to the baseline, its spread and its verdict (times in time_unit when given);
    `up`: whether bigger is better (default: the vocabulary's direction of the metric); `whole_percent`:
    207% as the seeds write a CPU figure, not the engineers' 207.0%."""
    if r is None:
        return {"text": "–", "ratio": "", "cls": "", "cv": "", "unstable": False, "value": "", "verdict": ""}
    ratio = r.get("ratio")
    cls = ""
    p = r.get("ratio_p")
    # a difference is called only where Welch's test says so (p < 0.05); a single run has no test: the band
    p_value = float(p) if isinstance(p, numbers.Real) and _finite(p) else None
    # a flagged number (fsbench.validity) is no evidence either way: never coloured better or worse
    flagged = _text(r.get("validity")) == "flagged"
    if ratio is not None and _finite(ratio) and not is_base and not flagged \
            and (p_value is None or p_value < ALPHA):
        up = higher_is_better(metric) if up is None else up
        if (ratio > 1 + style.same_band) if up else (ratio < 1 - style.same_band):
            cls = "better"
        elif (ratio < 1 - style.same_band) if up else (ratio > 1 + style.same_band):
            cls = "worse"
    cv = float(r.get("cv", 0) or 0)
    ci = r.get("ci")
    ci = float(ci) if ci is not None and _finite(ci) else None
    n = int(r.get("n", 1) or 1)
    value = float(r["mean"])
    return {
        "text": percent(value) if whole_percent and str(r["unit"]) == "%"
        else format_value(value, str(r["unit"]), time_unit),
        "ratio": f"({ratio_text(ratio)})" if ratio is not None and _finite(ratio) else "",
        # the ratio's 95 % interval on a line of its own under it: a cell no wider than its value
        "interval": _interval(r).strip() if ratio is not None and _finite(ratio) and not is_base else "",
        "cls": cls,
        # the 95 % interval's half-width (t, over the repetitions), else the spread
        "cv": (f"±{ci * 100:.1f}%" if ci is not None else f"±{cv * 100:.0f}%") if n > 1 else "",
        "unstable": (ci if ci is not None else cv) > style.cv_threshold,
        "significant": p_value is not None and p_value < ALPHA if not is_base else None,
        "value": value,
        # the scenario's thresholds first (your requirement), else the tool's own verdict (juicefs bench)
        "verdict": verdict_for(style.thresholds, workload, str(r["operation"]), metric, value)
        or _tool_verdict(r),
        "n": int(r.get("n", 1) or 1),
        "spread": cv,
        # fsbench.validity's verdict of the number: ok, flagged, or '' (not checked), and its words
        "validity": _text(r.get("validity")),
        "validity_detail": _text(r.get("validity_detail")),
    }


#: the significance level of every difference the report calls (intervals are 95 %)
ALPHA = 0.05


def _interval(r: pd.Series | dict) -> str:
    """' [1.10–1.37]': the ratio's 95 % interval, where there is one."""
    lo, hi = r.get("ratio_low"), r.get("ratio_high")
    if lo is None or hi is None or not (_finite(lo) and _finite(hi)):
        return ""
    return f" [{ratio_text(float(lo))}–{ratio_text(float(hi))}]"


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def percent(value: float) -> str:
    """CPU and other percentages as the seeds write them: 207%, 41.4%, 5%."""
    if value != value:
        return "–"
    return f"{value:.0f}%" if abs(value) >= 100 else f"{value:.3g}%"


def ratio_text(ratio: float) -> str:
    """A ratio to the baseline: two decimals where they matter (1.10), fewer on big ones (41.4, 144)."""
    return f"{ratio:.2f}" if abs(ratio) < 10 else f"{ratio:.1f}" if abs(ratio) < 100 else f"{ratio:.0f}"


def _tool_verdict(r: pd.Series | dict) -> str:
    v = r.get("tool_verdict")
    return str(v) if isinstance(v, str) and v in ("good", "fair", "poor") else ""


def row_order(df: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(job, operation, metric) in a stable reading order."""
    keys = {(str(j), str(o), str(m)) for j, o, m in zip(df["job"], df["operation"], df["metric"])}
    return sorted(keys, key=lambda k: (k[1], k[0], METRIC_ORDER.index(k[2]) if k[2] in METRIC_ORDER else 99))


def _label(job: str, op: str, show_job: bool) -> str:
    if op == "host" and job == "host":  # the monitor's whole-host figures
        return "host (all processes)"
    if op == "process":  # the monitor's figures of one watched process
        return f"process {job}"
    return f"{op} ({job})" if show_job and job else op


def _show_job(df: pd.DataFrame) -> bool:
    """Whether job names tell rows apart (several jobs of the tool itself, not the monitor's scopes)."""
    own = df[df["tool"] != "monitor"] if "tool" in df else df
    return own["job"].nunique() > 1


def compare_table(df: pd.DataFrame, targets: list[str], baseline: str, style: Style, workload: str,
                  title: str = "", tool: object = None) -> dict:
    """Rows = operation x metric, columns = targets, each cell a value and its ratio (seed 000)."""
    keyed = {(str(r["job"]), str(r["operation"]), str(r["metric"]), str(r["target"])): r for r in records(df)}
    show_job = _show_job(df)
    rows = []
    for job, op, metric in row_order(df):
        cells = []
        up = better(metric, tool)
        for t in targets:
            cells.append(cell(keyed.get((job, op, metric, t)), metric, t == baseline, style, workload, up=up))
        rows.append({"labels": [_label(job, op, show_job), metric], "operation": _label(job, op, show_job),
                     "metric": metric, "cells": cells})
    return {"kind": "compare", "title": title, "point": title, "head": ["operation", "metric", *targets],
            "targets": targets, "rows": rows}


def pivot_tables(df: pd.DataFrame, param: str, targets: list[str], baseline: str, style: Style,
                 workload: str, metrics: list[str], tool: object = None) -> list[dict]:
    """Per operation and metric: rows = values of the swept parameter, columns = targets (seed 004)."""
    out = []
    name = param.removeprefix("param_")
    values = sorted(df[param].astype(str).unique(), key=_numeric_key)
    show_job = _show_job(df)
    by_row = grouped(records(df[df["metric"].isin(metrics)]), "job", "operation", "metric")
    for job, op, metric in row_order(df):
        if metric not in metrics:
            continue
        keyed = {(str(r[param]), str(r["target"])): r for r in by_row.get((job, op, metric), [])}
        up = better(metric, tool)
        rows = [{"labels": [v], "cells": [cell(keyed.get((v, t)), metric, t == baseline, style, workload, up=up)
                                          for t in targets]}
                for v in values]
        out.append({"kind": "pivot", "title": f"{_label(job, op, show_job)} · {metric} by {name}",
                    "head": [name, *targets], "targets": targets, "rows": rows})
    return out


def stats_table(df: pd.DataFrame, target: str) -> dict:
    """Max / Min / Mean / StdDev per operation, as the tool itself reported them (seed 004, mdtest)."""
    sub = df[df["target"] == target]
    stats = ["max", "min", "mean", "stddev"]
    rows = []
    for (op, metric), g in sub.groupby(["operation", "metric"], sort=True):
        by = dict(zip(g["stat"], zip(g["mean"], g["unit"])))
        rows.append({"labels": [op, metric], "cells": [
            {"text": format_value(by[s][0], by[s][1]) if s in by else "–", "ratio": "", "cls": "", "cv": "",
             "unstable": False, "value": by[s][0] if s in by else "", "verdict": ""} for s in stats]})
    return {"kind": "stats", "title": f"{target}: as reported by the tool", "head": ["operation", "metric",
            "Max", "Min", "Mean", "StdDev"], "targets": [], "rows": rows}


def best_table(df: pd.DataFrame, targets: list[str], title: str = "", tool: object = None) -> dict:
    """Each target as a percentage of the best one per operation (seed 004's comparison)."""
    rows = []
    by_row = grouped(records(df[["job", "operation", "metric", "target", "mean"]]), "job", "operation", "metric")
    for job, op, metric in row_order(df):
        sub = by_row.get((job, op, metric), [])
        vals = {str(r["target"]): float(r["mean"]) for r in sub if float(r["mean"]) > 0}
        if len(vals) < 2:
            continue
        up = better(metric, tool)
        best = max(vals.values()) if up else min(vals.values())
        cells = []
        for t in targets:
            if t not in vals:
                cells.append({"text": "–", "ratio": "", "cls": "", "cv": "", "unstable": False, "value": "",
                              "verdict": ""})
                continue
            pct = 100 * (vals[t] / best if up else best / vals[t])
            cells.append({"text": f"{pct:.0f}%", "ratio": "", "cls": "better" if pct >= 99.95 else "",
                          "cv": "", "unstable": False, "value": pct, "verdict": ""})
        rows.append({"labels": [op, metric], "cells": cells})
    return {"kind": "best", "title": title or "% of the best target", "head": ["operation", "metric", *targets],
            "targets": targets, "rows": rows}


def _numeric_key(v: str) -> tuple:
    try:
        return (0, float(v), v)
    except ValueError:
        return (1, 0.0, v)


def command_line(script: str) -> str:
    """The line of a client's script that a reader looks for (its mount command): the first one that is not
    blank, a comment or a shell option (`set -e`); the script itself when it is one line."""
    lines = [ln.strip() for ln in script.strip().splitlines()]
    return next((ln for ln in lines if ln and not ln.startswith("#") and not ln.startswith("set ")),
                lines[0] if lines else "")
