"""Everything the report template shows, computed from a run directory (no formatting of raw data elsewhere)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import yaml

from fsbench.analysis.summarise import summarise, with_baseline
from fsbench.report import figures
from fsbench.scenario.model import USE_CASE_KEYS
from fsbench.tidy import HIGHER_IS_BETTER, METRIC_UNITS
from fsbench.units import format_value

#: metrics shown in tables and charts, per tool (others: every metric the tool gave)
TABLE_METRICS = {"fio": ["bandwidth", "iops", "clat_mean", "clat_p99"]}
CHART_METRICS = {"fio": ["bandwidth", "iops", "clat_mean"]}
METRIC_ORDER = list(METRIC_UNITS)
CV_WARN = 0.10  # repetitions spread more than this are marked unstable
SAME_BAND = 0.05  # ratios within ±5 % of the baseline are not coloured


def _read_csv(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _results(run: Path) -> pd.DataFrame:
    pq = run / "results.parquet"
    if pq.exists():
        return pd.read_parquet(pq)
    f = run / "results.csv"
    return pd.read_csv(f, keep_default_na=False, na_values=[""]) if f.exists() else pd.DataFrame()


def _params(cases: list[dict]) -> dict[str, dict]:
    return {c["case_id"]: {k: v for k, v in c.items() if k.startswith("param_")} for c in cases}


def build_context(run: Path, baseline: str | None = None) -> dict:
    """The report's data: scenario, environment, per-workload tables and charts, failures."""
    manifest = json.loads((run / "manifest.json").read_text())
    scenario = yaml.safe_load((run / "scenario.yaml").read_text()) or {}
    cases = _read_csv(run / "cases.csv")
    hosts = _read_csv(run / "hosts.csv")
    targets = list((scenario.get("targets") or {}).keys())
    if baseline is None:
        marked = [n for n, t in (scenario.get("targets") or {}).items() if (t or {}).get("baseline")]
        baseline = marked[0] if marked else (targets[0] if targets else "")
    results = _results(run)
    if not results.empty:
        params = _params(cases)
        pcols = sorted({k for p in params.values() for k in p})
        for col in pcols:
            results[col] = results["case_id"].map(lambda cid, c=col: params.get(cid, {}).get(c, ""))
    summary = with_baseline(summarise(results), baseline) if not results.empty else pd.DataFrame()
    counts: dict[str, int] = {}
    for c in cases:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    workloads = []
    for name, spec in (scenario.get("workloads") or {}).items():
        sub = summary[summary["workload"] == name] if not summary.empty else summary
        workloads.append(_workload(name, spec or {}, sub, targets, baseline))
    use_case = [(k.replace("_", " ").capitalize(), v) for k, v in (scenario.get("use_case") or {}).items()
                if v and k in USE_CASE_KEYS]
    return {
        "title": scenario.get("name", manifest.get("scenario", "fsbench run")),
        "description": scenario.get("description", ""),
        "use_case": use_case,
        "manifest": manifest,
        "counts": counts,
        "total_cases": len(cases),
        "hosts": [h.get("host", "") for h in hosts],
        "host_facts": _host_facts(hosts),
        "targets": [{"name": n, **{k: v for k, v in (t or {}).items() if k in ("path", "description")},
                     "baseline": n == baseline} for n, t in (scenario.get("targets") or {}).items()],
        "baseline": baseline,
        "failed": [c for c in cases if c["status"] not in ("ok",)],
        "workloads": workloads,
        "variables": scenario.get("variables") or {},
    }


def _host_facts(hosts: list[dict]) -> list[tuple[str, list[str]]]:
    """Facts as rows and hosts as columns: easier to read than a wide table."""
    keys: list[str] = []
    for h in hosts:
        keys += [k for k in h if k != "host" and k not in keys]
    rows = []
    for k in keys:
        values = [h.get(k, "") for h in hosts]
        if k == "memory_bytes":
            values = [format_value(float(v), "B") if str(v).isdigit() else v for v in values]
        label = k.replace("_bytes", "").replace("mount_", "mount: ").replace("_", " ")
        rows.append((label, values))
    return rows


def _point_label(row: pd.Series, pcols: list[str]) -> str:
    return " ".join(f"{c.removeprefix('param_')}={row[c]}" for c in pcols if str(row.get(c, "")) != "")


def _workload(name: str, spec: dict, sub: pd.DataFrame, targets: list[str], baseline: str) -> dict:
    tool = spec.get("tool", "")
    out = {"name": name, "tool": tool, "description": spec.get("description", ""),
           "options": spec.get("options") or {}, "tables": [], "charts": []}
    if sub.empty:
        return out
    sub = sub[sub["stat"].isin(["value", "mean"])]
    wanted = TABLE_METRICS.get(tool)
    if wanted:
        sub = sub[sub["metric"].isin(wanted)]
    pcols = [c for c in sub.columns if c.startswith("param_") and (sub[c].astype(str) != "").any()]
    sub = sub.assign(point=sub.apply(_point_label, axis=1, pcols=pcols) if pcols else "")
    present = [t for t in targets if t in set(sub["target"])]
    for point, psub in sub.groupby("point", sort=False):
        rows = []
        keyed = psub.set_index(["operation", "metric", "target"])
        ops = sorted({(o, m) for o, m in zip(psub["operation"], psub["metric"])},
                     key=lambda om: (om[0], METRIC_ORDER.index(om[1]) if om[1] in METRIC_ORDER else 99))
        for op, metric in ops:
            cells = []
            for t in present:
                if (op, metric, t) not in keyed.index:
                    cells.append({"text": "–", "ratio": "", "cls": "", "cv": ""})
                    continue
                r = keyed.loc[(op, metric, t)]
                r = r.iloc[0] if isinstance(r, pd.DataFrame) else r
                cells.append(_cell(r, metric, t == baseline))
            rows.append({"operation": op, "metric": metric, "cells": cells})
        out["tables"].append({"point": point, "targets": present, "rows": rows})
    out["charts"] = _charts(sub, tool, pcols)
    return out


def _cell(r: pd.Series, metric: str, is_base: bool) -> dict:
    ratio = r.get("ratio")
    cls = ""
    if ratio == ratio and ratio is not None and not is_base:
        better = ratio > 1 + SAME_BAND if metric in HIGHER_IS_BETTER else ratio < 1 - SAME_BAND
        worse = ratio < 1 - SAME_BAND if metric in HIGHER_IS_BETTER else ratio > 1 + SAME_BAND
        cls = "better" if better else "worse" if worse else ""
    cv = float(r.get("cv", 0) or 0)
    return {
        "text": format_value(float(r["mean"]), str(r["unit"])),
        "ratio": f"({ratio:.2f})" if ratio == ratio and ratio is not None else "",
        "cls": cls,
        "cv": f"±{cv * 100:.0f}%" if int(r.get("n", 1)) > 1 else "",
        "unstable": cv > CV_WARN,
        "value": float(r["mean"]),
    }


def _charts(sub: pd.DataFrame, tool: str, pcols: list[str]) -> list[dict]:
    charts = []
    metrics = CHART_METRICS.get(tool) or sorted(set(sub["metric"]))[:4]
    multi_op = sub["operation"].nunique() > 1
    series = sub["target"] + (" · " + sub["operation"] if multi_op else "")
    data = sub.assign(series=series)
    numeric = len(pcols) == 1 and pd.to_numeric(data[pcols[0]], errors="coerce").notna().all() \
        and data[pcols[0]].nunique() >= 3
    for metric in metrics:
        m = data[data["metric"] == metric]
        if m.empty:
            continue
        unit = str(m["unit"].iloc[0])
        title = f"{metric.replace('_', ' ')}"
        svg = (figures.line_chart(m, title, unit, pcols[0], "series") if numeric
               else figures.bar_chart(m, title, unit, "point", "series"))
        charts.append({"metric": metric, "svg": svg})
    return charts
