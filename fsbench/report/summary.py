"""The report's first section besides the conclusions: what is unstable, what failed."""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

from fsbench.api.tools import declarations
from fsbench.core import stats
from fsbench.scenario.repetitions import not_needed

PRIMARY = ("bandwidth", "rate", "iops")  # the figure a reader compares first, per operation
MAX_LISTED = 40


def unstable(summary: pd.DataFrame, threshold: float,
             shown: dict[str, set[str] | None] | None = None,
             cases: list[dict] | None = None) -> tuple[list[dict], int]:
    """Per workload (a table), the measurements whose 95 % interval is wider than ±threshold of the mean:
    too wide for any conclusion; with what would fix them (more repetitions, or a longer runtime).
    `shown` (workload -> the metrics its tables show, None for all) keeps the list to what a reader
    compares: a p99.9 or a standard deviation that no table shows is not a conclusion anyone could draw.
    `cases` (cases.csv's rows) give each fix its cost here: a round of the workload (one case per target)
    took this run so long, so that many more rounds cost about that much more time."""
    if summary.empty:
        return [], 0
    width = summary["ci"] if "ci" in summary else summary["cv"]
    df = summary[(summary["n"] > 1) & (width.fillna(float("inf")) > threshold)
                 & summary["stat"].isin(["value", "mean"])]
    if shown is not None and not df.empty:
        keep = [w in shown and (metrics is None or m in metrics)
                for w, m in zip(df["workload"], df["metric"]) for metrics in [shown.get(w)]]
        df = df[keep]
    df = df[df["tool"] != "monitor"] if "tool" in df else df  # resources vary by nature; results should not
    pcols = [c for c in df.columns if c.startswith("param_")]
    out = []
    for workload, g in df.groupby("workload", sort=False):
        items, needs = [], []
        for _, r in g.sort_values("cv", ascending=False).iterrows():
            point = " ".join(f"{c.removeprefix('param_')}={r[c]}" for c in pcols if str(r[c]) != "")
            ci = float(r["ci"]) if "ci" in r and r["ci"] == r["ci"] else float(r["cv"])
            items.append(f"{r['target']} {r['operation']} {r['metric']}{' ' + point if point else ''} "
                         f"±{ci * 100:.0f}% (n={int(r['n'])})")
            needs.append(stats.repetitions_for(float(r["cv"]), threshold, most=MOST_REPETITIONS))
        worst = float(g["cv"].max())
        known = [n for n in needs if n is not None]
        ran = int(g["n"].max())
        case_s, per_round = _round_cost(cases or [], str(workload))
        if len(known) == len(needs):
            more = max(known) - ran
            cost = f"; about {_minutes(more * per_round)} more here" if per_round and more > 0 else ""
            budget = f", budget: {_budget(max(known) * per_round)}" if per_round else ""
            fix = (f"run {max(known)} rounds instead of {ran} (spread up to ±{worst * 100:.0f}% per run): "
                   f"repetitions: {{min: 3, max: {max(known)}, target_ci: {threshold * 100:.0f}%{budget}}}{cost}")
        else:
            runtime = f" (each case ran about {case_s:.0f} s here)" if case_s else ""
            fix = (f"lengthen each run{runtime}: runs spread up to ±{worst * 100:.0f}%, so more than "
                   f"{MOST_REPETITIONS} rounds would be needed; a longer runtime or bigger size per case, or a "
                   "quieter machine, narrows each one")
        out.append({"workload": workload, "count": len(items), "items": items[:MAX_ITEMS],
                    "more": max(0, len(items) - MAX_ITEMS), "fix": fix})
    return out, 0


def _round_cost(cases: list[dict], workload: str) -> tuple[float, float]:
    """(a case's mean duration, a round's: the mean times the targets) of a workload in this run, in
    seconds; (0, 0) where cases.csv does not say."""
    times: list[float] = []
    targets = set()
    for c in cases:
        if c.get("workload") != workload or c.get("status") != "ok":
            continue
        try:
            times.append(float(c.get("duration_s") or "nan"))
        except ValueError:
            continue
        targets.add(c.get("target"))
    times = [t for t in times if t == t and t > 0]
    if not times:
        return 0.0, 0.0
    mean = sum(times) / len(times)
    return mean, mean * len(targets)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def _budget(seconds: float) -> str:
    """A budget for settings.repetitions: the time the suggested rounds take here, rounded up."""
    return f"{max(1, -(-int(seconds) // 60))}m"


#: measurements named per table; repetitions suggested at most
MAX_ITEMS = 8
MOST_REPETITIONS = 20


def warmups(summary: pd.DataFrame) -> dict:
    """First repetitions flagged as warm-up (far off the others): how many, and whether left out."""
    if summary.empty or "warmup" not in summary:
        return {"count": 0, "excluded": False, "items": []}
    df = summary[summary["warmup"].astype(bool) & (summary["tool"] != "monitor")
                 & summary["stat"].isin(["value", "mean"])]  # not a tool's own max / min of its iterations
    items = list(dict.fromkeys(f"{r['workload']} · {r['target']} · {r['operation']} {r['metric']}"
                               for _, r in df.iterrows()))
    return {"count": len(df), "excluded": bool(df["warmup_excluded"].astype(bool).any()) if len(df) else False,
            "items": items[:MAX_ITEMS], "more": max(0, len(items) - MAX_ITEMS)}


def problems(cases: list[dict]) -> list[dict]:
    """Cases that are not ok, grouped by status and reason (twelve skips for one reason are one line)."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for c in cases:
        if c.get("status") != "ok" and not not_needed(str(c.get("status")), str(c.get("reason") or "")):
            groups[(c.get("status", ""), c.get("reason", "") or "not run")].append(c["case_id"])
    out = []
    for (status, reason), ids in groups.items():
        out.append({"status": status, "reason": reason, "count": len(ids), "cases": ids[:12],
                    "more": max(0, len(ids) - 12)})
    return sorted(out, key=lambda g: (g["status"] != "failed", -g["count"]))


def warnings(cases: list[dict], results: pd.DataFrame) -> list[dict]:
    """What the run said about its own figures: each case's warnings (cases.csv) and rows flagged in
    results' `warnings` column, one line per text with the cases it concerns."""
    groups: dict[str, list[str]] = defaultdict(list)
    for c in cases:
        for text in split_warnings(str(c.get("warnings") or "")):
            groups[text].append(str(c.get("case_id", "")))
    if not results.empty and "warnings" in results and "case_id" in results:
        flagged = results[results["warnings"].fillna("").astype(str).str.strip() != ""]
        for _, r in flagged.iterrows():
            text = f"{r.get('tool')} {r.get('operation')} {r.get('metric')}: {str(r['warnings']).strip()}"
            if str(r["case_id"]) not in groups[text]:
                groups[text].append(str(r["case_id"]))
    out = [{"warning": text, "count": len(ids), "cases": ids[:12], "more": max(0, len(ids) - 12)}
           for text, ids in groups.items() if ids]
    return out[:MAX_LISTED]


def split_warnings(text: str) -> list[str]:
    """cases.csv's warnings column as the texts to show: whole, since a warning's own words hold the
    '; ' its warnings are joined with ("...not a finite number; left out")."""
    return [text.strip()] if text.strip() else []


def shown_metrics(specs: list[dict], tools: dict[str, object]) -> dict[str, set[str] | None]:
    """workload -> the metrics the report's views show of it (their `metrics`, else the tool's primary
    metrics); None where a view shows every metric (`columns: metrics`, a tool's own table)."""
    out: dict[str, set[str] | None] = {}
    for spec in specs:
        for w in spec.get("workloads") or [spec.get("workload")]:
            if not w:
                continue
            if spec.get("columns") == "metrics" or spec.get("tool"):
                out[w] = None
                continue
            metrics = set(spec.get("metrics") or declarations(tools.get(w)).primary_metrics)
            if w in out and out[w] is None:
                continue
            out[w] = (out.get(w) or set()) | metrics if metrics else None
    return out
