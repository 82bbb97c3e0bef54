"""The report's first section: who wins each workload and by how much, what is unstable, what failed."""

from __future__ import annotations

from collections import Counter, defaultdict

import pandas as pd

from fsbench.tidy import HIGHER_IS_BETTER

PRIMARY = ("bandwidth", "rate", "iops")  # the figure a reader compares first, per operation
MAX_LISTED = 40


def winners(summary: pd.DataFrame, targets: list[str]) -> list[dict]:
    """Per workload: how often each target is best on the primary figure, and the largest lead."""
    if summary.empty or len(targets) < 2:
        return []
    df = summary[summary["stat"].isin(["value", "mean"]) & summary["metric"].isin(PRIMARY)]
    df = df[df["tool"] != "monitor"] if "tool" in df else df
    pcols = [c for c in df.columns if c.startswith("param_")]
    out = []
    for workload, wdf in df.groupby("workload", sort=False):
        wins: Counter = Counter()
        leads = []
        for key, g in wdf.groupby(["job", "operation", *pcols], sort=False, dropna=False):
            metric = next((m for m in PRIMARY if m in set(g["metric"])), None)
            g = g[g["metric"] == metric]
            vals = sorted(((float(v), str(t)) for v, t in zip(g["mean"], g["target"]) if v == v),
                          reverse=metric in HIGHER_IS_BETTER)
            if len(vals) < 2 or vals[1][0] == 0:
                continue
            (best, who), (second, runner) = vals[0], vals[1]
            wins[who] += 1
            point = " ".join(f"{c.removeprefix('param_')}={v}" for c, v in zip(pcols, key[2:]) if str(v) != "")
            leads.append({"target": who, "runner_up": runner, "lead": best / second, "operation": key[1],
                          "metric": metric, "point": point})
        if not leads:
            continue
        top = max(leads, key=lambda x: float(x["lead"]))  # type: ignore[arg-type]
        out.append({"workload": workload, "measurements": len(leads),
                    "wins": [{"target": t, "count": n} for t, n in wins.most_common()],
                    "largest": {**top, "lead_text": f"{top['lead']:.2f}×"}})
    return out


def unstable(summary: pd.DataFrame, threshold: float) -> tuple[list[dict], int]:
    """Measurements whose repetitions spread more than the threshold (coefficient of variation)."""
    if summary.empty:
        return [], 0
    df = summary[(summary["n"] > 1) & (summary["cv"] > threshold) & summary["stat"].isin(["value", "mean"])]
    df = df[df["tool"] != "monitor"] if "tool" in df else df  # resources vary by nature; results should not
    pcols = [c for c in df.columns if c.startswith("param_")]
    rows = []
    for _, r in df.sort_values("cv", ascending=False).iterrows():
        point = " ".join(f"{c.removeprefix('param_')}={r[c]}" for c in pcols if str(r[c]) != "")
        rows.append({"workload": r["workload"], "target": r["target"], "point": point, "operation": r["operation"],
                     "metric": r["metric"], "cv": f"{r['cv'] * 100:.0f}%", "n": int(r["n"])})
    return rows[:MAX_LISTED], max(0, len(rows) - MAX_LISTED)


def problems(cases: list[dict]) -> list[dict]:
    """Cases that are not ok, grouped by status and reason (twelve skips for one reason are one line)."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for c in cases:
        if c.get("status") != "ok":
            groups[(c.get("status", ""), c.get("reason", "") or "not run")].append(c["case_id"])
    out = []
    for (status, reason), ids in groups.items():
        out.append({"status": status, "reason": reason, "count": len(ids), "cases": ids[:12],
                    "more": max(0, len(ids) - 12)})
    return sorted(out, key=lambda g: (g["status"] != "failed", -g["count"]))
