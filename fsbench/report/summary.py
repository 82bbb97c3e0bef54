"""The report's first section besides the conclusions: what is unstable, what failed."""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

PRIMARY = ("bandwidth", "rate", "iops")  # the figure a reader compares first, per operation
MAX_LISTED = 40


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
