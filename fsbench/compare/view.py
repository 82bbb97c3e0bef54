"""A comparison as display data: formatted values, marks, groups (shared by the Markdown and HTML renderers)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from fsbench.compare.model import (
    BETTER,
    FAILED,
    MARKS,
    MIN_REPETITIONS,
    MISSING,
    NEW,
    NOT_COMPARABLE,
    NOT_SIGNIFICANT,
    SAME,
    VERDICTS,
    WORSE,
    Comparison,
)
from fsbench.compare.tolerance import DEFAULT_TOLERANCE, format_tolerance
from fsbench.core.units import format_value, is_whole_number

#: verdicts that concern a whole case rather than one number; listed once per case and reason
CASE_LEVEL = (FAILED, NOT_COMPARABLE, MISSING, NEW)


def _num(value: float, unit: str) -> str:
    return format_value(float(value), unit) if value == value else "–"


def _spread(n: int, mean: float, std: float) -> str:
    if n < 2 or not mean or mean != mean:
        return f"n={n}" if n else ""
    return f"±{abs(std / mean) * 100:.0f}% n={n}"


def _change(change: float) -> str:
    if change != change:
        return "–"
    if math.isinf(change):
        return "+∞" if change > 0 else "−∞"
    return f"{change * 100:+.1f}%"


def _p(p: float) -> str:
    if p != p:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _text(value: object) -> str:
    return "" if value is None or value != value else str(value)


def _operation(r: pd.Series) -> str:
    """`write`, or `write (reader)` where the job is not simply named after the workload."""
    op, job = _text(r["operation"]), _text(r.get("job"))
    return f"{op} ({job})" if job and job != r["workload"] else op


def row_view(r: pd.Series, marks: Mapping[str, str] = MARKS) -> dict:
    """One measurement for people."""
    unit = str(r["unit"]) if r["unit"] == r["unit"] else ""
    verdict = str(r["verdict"])
    return {
        "target": r["target"], "workload": r["workload"], "point": r["point"],
        "operation": _operation(r),
        "metric": _text(r["metric"]),
        "stat": "" if _text(r["stat"]) in ("value", "") else _text(r["stat"]),
        "a": _num(r["mean_a"], unit), "a_spread": _spread(int(r["n_a"]), r["mean_a"], r["std_a"]),
        "b": _num(r["mean_b"], unit), "b_spread": _spread(int(r["n_b"]), r["mean_b"], r["std_b"]),
        "value_a": r["mean_a"], "value_b": r["mean_b"],
        "ratio": f"{r['ratio']:.3f}" if r["ratio"] == r["ratio"] else "–",
        "change": _change(r["change"]), "p": _pq(r["p_value"], r.get("q_value", math.nan)),
        "confidence": r["confidence"] or "", "sure": _text(r.get("sure")),
        "verdict": verdict, "mark": marks.get(verdict, ""), "cls": verdict.replace(" ", "-"),
        "detail": ": ".join(x for x in (_text(r.get("sure")), _text(r["detail"])) if x),
    }


def _pq(p: float, q: float) -> str:
    """Welch's p, then Benjamini-Hochberg's q (the p adjusted for every test of the compared run)."""
    return "–" if p != p else f"{_p(p)} · q {_p(q)}"


def _case_level(sub: pd.DataFrame, marks: Mapping[str, str]) -> list[dict]:
    """Failed, not comparable, missing and new: one line per case point and reason, with a count."""
    out = []
    rows = sub[sub["verdict"].isin(CASE_LEVEL)]
    for (target, workload, point, verdict, detail), g in rows.groupby(
            ["target", "workload", "point", "verdict", "detail"], sort=False, dropna=False):
        n = int(g["metric"].notna().sum())
        name = str(verdict)
        out.append({"target": target, "workload": workload, "point": point, "verdict": name,
                    "mark": marks[name], "cls": name.replace(" ", "-"), "detail": detail, "measurements": n})
    order = {v: i for i, v in enumerate(VERDICTS)}
    return sorted(out, key=lambda d: order[d["verdict"]])


def build_view(c: Comparison, marks: Mapping[str, str] = MARKS) -> dict:
    """Everything a renderer shows, already formatted."""
    runs = []
    summary = c.summary
    for info in c.runs:
        sub = c.frame[c.frame["run"] == info.label]
        changes = sub[sub["verdict"].isin([WORSE, BETTER])]
        # outside the band, but three repetitions could not tell it from noise: worth more repetitions
        unsure = sub[(sub["verdict"] == SAME) & (sub["confidence"] == NOT_SIGNIFICANT)
                     & sub["beyond_band"].astype(bool) & sub["beyond_floors"].astype(bool)]
        groups = []
        for (target, workload, point), g in sub.groupby(["target", "workload", "point"], sort=False, dropna=False):
            title = " · ".join(str(x) for x in (target, workload, point) if x)
            groups.append({"title": title, "tool": str(g["tool"].iloc[0]),
                           "rows": [row_view(r, marks) for _, r in g.iterrows()]})
        runs.append({
            "info": info,
            "counts": [(v, marks[v], summary[info.label][v]) for v in VERDICTS],
            "environment": [(what, _fact(what, a), _fact(what, b)) for what, a, b in c.environment.get(info.label, [])],
            "changes": [row_view(r, marks) for _, r in
                        changes.sort_values(["verdict", "change"], ascending=[False, True]).iterrows()],
            "unsure": [row_view(r, marks) for _, r in unsure.iterrows()],
            "case_level": _case_level(sub, marks),
            "groups": groups,
            "measurements": len(sub),
            "conclusions": c.conclusions.get(info.label, {}),
            "tests": tests_line(c.tests.get(info.label, {}), c.alpha),
            "untested_changes": int(c.tests.get(info.label, {}).get("untested_changes", 0)),
        })
    tolerances = {"*": DEFAULT_TOLERANCE, **c.tolerances}
    return {
        "title": f"Comparison with {c.reference.label}",
        "reference": c.reference,
        "runs": runs,
        "tolerances": [(k, format_tolerance(v)) for k, v in tolerances.items()],
        "alpha": f"{c.alpha:g}",
        "min_repetitions": MIN_REPETITIONS,
        "metrics": _selection(c.metrics),
        "floors": f"{format_tolerance(c.floors.min_effect)} of the larger value, "
                  f"{c.floors.time_floor_s * 1e6:g} µs for times",
        "verdicts": [(v, marks[v]) for v in VERDICTS],
        "legend": LEGEND,
    }


def _selection(metrics: list[str] | None) -> str:
    if metrics is None:
        return "each tool's primary metrics, value or mean (--metrics all for every one)"
    return "every metric and statistic" if metrics == ["*"] else ", ".join(metrics)


def tests_line(t: dict, alpha: float) -> str:
    """How many comparisons were tested and at which false-discovery rate, in words."""
    if not t:
        return ""
    out = (f"{t['tested']} of {t['measurements']} measurements tested (3+ repetitions on both sides); "
           f"false-discovery rate {alpha * 100:g} % over them (Benjamini-Hochberg): {t['discoveries']} changes")
    if t["untested_changes"]:
        out += (f"; {t['untested_changes']} untested changes (fewer than 3 repetitions: no error rate, not "
                "gated unless --fail-untested)")
    return out


def _fact(what: str, value: str) -> str:
    if what.endswith("memory_bytes") and is_whole_number(value):
        return format_value(float(value), "B")
    return value


LEGEND = {
    WORSE: "outside the tolerance band and the floors in the bad direction (and q < α where tested)",
    BETTER: "outside the tolerance band and the floors in the good direction (and q < α where tested)",
    SAME: "within the band or the floors, or outside them without significance",
    NOT_COMPARABLE: "same target, workload and parameters, but different options, tool or tool version",
    MISSING: "in the reference only",
    NEW: "in this run only",
    FAILED: "a repetition of this case did not succeed on one side",
}
