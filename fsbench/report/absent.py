"""Why a view has nothing to show, in one line, so that it keeps its place in the report instead of
vanishing: its cases did not run (and why), the run has no case at its swept value, its tool gave no
rows, or none of its metrics was measured."""

from __future__ import annotations

import pandas as pd

from fsbench.api.tools import declarations
from fsbench.report.rows import number_key, workloads_of
from fsbench.report.summary import split_warnings


def why_empty(spec: dict, cases: list[dict], summary: pd.DataFrame, tools: dict[str, object]) -> str:
    """The reason a view built from `spec` is empty in this run (cases: cases.csv's rows)."""
    workloads = workloads_of(spec)
    mine = [c for c in cases if c.get("workload") in workloads]
    if not mine:
        return f"no case of {', '.join(workloads)} in this run"
    ok = [c for c in mine if c.get("status") == "ok"]
    if not ok:
        return _not_run(mine, tools)
    param = f"param_{spec['param']}" if spec.get("param") else ""
    if param:
        values = sorted({str(c.get(param, "")) for c in mine if str(c.get(param, "")) != ""}, key=number_key)
        if not values:
            return f"{', '.join(workloads)} does not sweep {spec['param']} in this run"
        if spec.get("value") is not None:
            value = str(spec["value"])
            at = [c for c in mine if str(c.get(param, "")) == value]
            if not at:
                return f"no case at {spec['param']}={value} in this run ({spec['param']}: {', '.join(values)})"
            if not [c for c in at if c.get("status") == "ok"]:
                return f"at {spec['param']}={value}: " + _not_run(at, tools)
    rows = summary[summary["workload"].isin(workloads)] if not summary.empty else summary
    if spec.get("tool"):
        rows = rows[rows["tool"] == spec["tool"]] if not rows.empty else rows
        if rows.empty:
            return f"no {spec['tool']} rows beside {', '.join(workloads)} in this run (no collector of it ran there)"
    metrics = list(spec.get("metrics") or [])
    if metrics and not rows.empty and not rows["metric"].isin(metrics).any():
        return f"none of {', '.join(metrics)} was measured by {', '.join(workloads)}" + _warned(ok)
    failed = [c for c in mine if c.get("status") != "ok"]
    if failed:
        return f"no results to show; {len(failed)} of {len(mine)} cases did not succeed: " + _not_run(failed, tools)
    return "no results of this shape in this run" + _warned(ok)


def _warned(ok: list[dict]) -> str:
    """'; N cases ok with warnings: <the first>' when cases that succeeded warned (rows left out), else ''."""
    warned = [c for c in ok if split_warnings(str(c.get("warnings") or ""))]
    if not warned:
        return ""
    first = split_warnings(str(warned[0].get("warnings")))
    dropped = [w for w in first if "left out" in w]
    return (f"; {len(warned)} of {len(ok)} cases that succeeded warned (see Warnings), "
            f"{warned[0].get('case_id')}: {(dropped or first)[0]}")


def _not_run(cases: list[dict], tools: dict[str, object]) -> str:
    """'not run: <the first reason>' (skipped cases), or 'failed: <reason>'."""
    skipped = [c for c in cases if c.get("status") == "skipped"]
    first = (skipped or cases)[0]
    reason = str(first.get("reason") or "").strip().splitlines()
    text = reason[0] if reason else str(first.get("status") or "not run")
    tool = tools.get(str(first.get("workload")))
    if skipped and declarations(tool).bring_your_own:
        text += f" ({first.get('tool') or 'the tool'} is bring-your-own)"
    word = "not run" if skipped or first.get("status") in ("pending", "interrupted") else str(first.get("status"))
    return f"{word}: {text}"
