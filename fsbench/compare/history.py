"""History over N runs of one scenario: per measurement, the run where its level changed, if any.

Each measurement's runs are split once at every place between two runs; the split whose before and after
differ most (Welch's t on the logarithms of all their repetitions) is its candidate change point. Its p is
multiplied by the number of places tried (Bonferroni: the best of n-1 splits is not one test), then
Benjamini-Hochberg runs over the measurements, as `fsbench compare` does over one pair. A change is stated
when q < alpha and the levels before and after differ beyond the band and the floors. Only points that ran
the same thing in every run (no option, tool or version difference with the first) take part.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from fsbench.analysis.difference import beyond_floors
from fsbench.compare.judge import direction, is_time, significance
from fsbench.compare.match import _points, differences
from fsbench.compare.runs import RunData, load_run
from fsbench.compare.tolerance import parse_metrics, tolerance_for
from fsbench.core.stats import bh_adjust
from fsbench.core.stats_settings import Floors

COLUMNS = ["target", "workload", "point", "job", "operation", "metric", "stat", "unit", "runs", "levels",
           "change_at", "before", "after", "ratio", "p_value", "q_value", "verdict"]


def history(runs: Iterable[str | Path | RunData], *, metrics: Iterable[str] | str | None = None,
            alpha: float = 0.05, floors: Floors | None = None, tolerance: float = 0.05) -> pd.DataFrame:
    """One row per measurement present in every run (oldest first): its geometric mean per run, the run
    its level changed at (or ''), before / after levels, p, q and a verdict (better, worse, same)."""
    data = [r if isinstance(r, RunData) else load_run(r) for r in runs]
    if len(data) < 3:
        raise ValueError("a history needs at least three runs; compare two with compare_runs")
    floors = floors or data[0].floors
    selection = parse_metrics(metrics)
    points = [_points(r, selection) for r in data]
    rows = []
    for key, first in points[0].items():
        others = [p.get(key) for p in points[1:]]
        if any(o is None or differences(data[0], first, data[i + 1], o, key[1]) for i, o in enumerate(others)):
            continue
        for m, values in first.measures.items():
            series = [values, *(o.measures.get(m, []) for o in others if o is not None)]
            if len(series) == len(data) and all(len(s) >= 2 and min(s) > 0 for s in series):
                rows.append(_row(key, m, first.tool, series, [r.label for r in data]))
    for row, q in zip(rows, bh_adjust([r["p_value"] for r in rows])):
        row["q_value"] = q
        row["verdict"] = _verdict(row, q, alpha, floors, tolerance_for(row["metric"], {"*": tolerance}))
    return pd.DataFrame(rows, columns=COLUMNS)


def _row(key: tuple, m: tuple, tool: str, series: list[list[float]], labels: list[str]) -> dict:
    best_p, best_k = math.inf, 0
    for k in range(1, len(series)):
        p = significance([x for s in series[:k] for x in s], [x for s in series[k:] for x in s])
        if p < best_p:
            best_p, best_k = p, k
    before = _geomean([x for s in series[:best_k] for x in s])
    after = _geomean([x for s in series[best_k:] for x in s])
    target, workload, params = key
    return {"target": target, "workload": workload, "point": " ".join(f"{k}={v}" for k, v in params),
            "job": m[0], "operation": m[1], "metric": m[2], "stat": m[3], "unit": m[4], "tool": tool,
            "runs": len(series), "levels": [_geomean(s) for s in series], "change_at": labels[best_k],
            "before": before, "after": after, "ratio": after / before,
            "p_value": min(1.0, best_p * (len(series) - 1))}


def _verdict(row: dict, q: float, alpha: float, floors: Floors, band: float) -> str:
    ratio = row["ratio"]
    if not (q < alpha and abs(ratio - 1) > band
            and beyond_floors(row["before"], row["after"], floors, is_time(row["metric"], row["unit"]))):
        row["change_at"] = ""
        return "same"
    higher = direction(row["metric"], row["tool"]) == "higher"
    return "better" if (ratio > 1) == higher else "worse"


def _geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def to_markdown(h: pd.DataFrame, labels: list[str], alpha: float = 0.05) -> str:
    """A history as Markdown: the changes found (run, before, after, q), then how many stayed steady."""
    from fsbench.core.units import format_value
    from fsbench.report.markdown import code, escape, table

    changed = h[h["verdict"] != "same"]
    out = [f"# History of {len(labels)} runs", "", "Runs, oldest first: " + ", ".join(code(x) for x in labels) + ".",
           f"{len(h)} measurements in every run; a change is the best single split of the runs, significant "
           f"with the false-discovery rate at {alpha:g} (Benjamini-Hochberg over the measurements, Bonferroni "
           "over the splits) and beyond the band and the floors.", ""]
    if changed.empty:
        return "\n".join([*out, "No change of level.", ""])
    rows = [[escape(" · ".join(x for x in (r.target, r.workload, r.point) if x)), r.operation, r.metric,
             code(str(r.change_at)), format_value(r.before, r.unit), format_value(r.after, r.unit),
             f"{(r.ratio - 1) * 100:+.1f}%", f"{r.q_value:.2g}", str(r.verdict)] for r in changed.itertuples()]
    out += table(["case", "operation", "metric", "changed at", "before", "after", "change", "q", "verdict"], rows,
                 ["l", "l", "l", "l", "r", "r", "r", "r", "l"])
    return "\n".join([*out, f"{len(h) - len(changed)} measurements kept their level.", ""])


def report(runs: Iterable[str], metrics: list[str] | None = None, alpha: float = 0.05) -> tuple[str, set[str]]:
    """`fsbench compare --history`: the Markdown of the runs' history and the verdicts found in it."""
    paths = list(runs)
    h = history(paths, metrics=metrics, alpha=alpha)
    return to_markdown(h, [Path(r).name for r in paths], alpha), set(h["verdict"])
