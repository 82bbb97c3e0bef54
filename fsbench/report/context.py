"""Everything the report shows, computed from a run directory alone (numbers here, formatting in cells)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import yaml

from fsbench.analysis.summarise import summarise, with_baseline
from fsbench.collectors import COLLECTORS
from fsbench.report import figures
from fsbench.report import summary as summary_mod
from fsbench.report.conclusions import view_sentences
from fsbench.report.tables import Style, best_table, compare_table, pivot_tables, stats_table
from fsbench.report.views import RunView, build_view, params_of
from fsbench.scenario.load import report_settings
from fsbench.scenario.model import USE_CASE_KEYS
from fsbench.targets.kinds import KINDS
from fsbench.thresholds import thresholds_from
from fsbench.tools import TOOLS
from fsbench.units import format_value

#: metrics shown in tables and charts per tool unless the scenario's `report.metrics` says otherwise
TABLE_METRICS = {"fio": ["bandwidth", "iops", "clat_mean", "clat_p99"],
                 "monitor": ["cpu_usage", "memory_peak"]}
CHART_METRICS = {"fio": ["bandwidth", "iops", "clat_mean"], "mdtest": ["rate"],
                 "juicefs-bench": ["bandwidth", "rate"], "vdbench": ["rate", "bandwidth"]}
MAX_CHART_POINTS = 60  # beyond this a bar chart is unreadable: the tables carry the numbers


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


def _with_params(results: pd.DataFrame, cases: list[dict]) -> pd.DataFrame:
    params = {c["case_id"]: {k: v for k, v in c.items() if k.startswith("param_")} for c in cases}
    cols = sorted({k for p in params.values() for k in p})
    if results.empty or not cols:
        return results
    frame = pd.DataFrame([{"case_id": cid, **{c: p.get(c, "") for c in cols}} for cid, p in params.items()])
    return results.drop(columns=[c for c in cols if c in results], errors="ignore").merge(frame, on="case_id",
                                                                                          how="left")


def build_context(run: Path, baseline: str | None = None) -> dict:
    """The report's data: use case, conclusions, the views in order, more measurements, environment."""
    manifest = json.loads((run / "manifest.json").read_text())
    scenario = yaml.safe_load((run / "scenario.yaml").read_text()) or {}
    cases = _read_csv(run / "cases.csv")
    hosts = _read_csv(run / "hosts.csv")
    tspecs = scenario.get("targets") or {}
    targets = list(tspecs)
    if baseline is None:
        marked = [n for n, t in tspecs.items() if (t or {}).get("baseline")]
        baseline = marked[0] if marked else (targets[0] if targets else "")
    rspec = report_settings(scenario, str(run / "scenario.yaml"))  # the loader's own checks and defaults
    style = Style(rspec.same_band, rspec.cv_threshold, thresholds_from(rspec.thresholds))
    results = _with_params(_results(run), cases)
    summary = with_baseline(summarise(results), baseline) if not results.empty else pd.DataFrame()
    counts: dict[str, int] = {}
    for c in cases:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    wspecs = {n: (w or {}) for n, w in (scenario.get("workloads") or {}).items()}
    rv = RunView(summary, targets, baseline, style,
                 tools={n: TOOLS.get(str(w.get("tool"))) for n, w in wspecs.items() if w.get("tool") in TOOLS},
                 tool_names={n: str(w.get("tool", "")) for n, w in wspecs.items()},
                 descriptions={n: str(w.get("description", "")) for n, w in wspecs.items()},
                 clients=client_processes(tspecs), side_tools={k.tool: k for k in COLLECTORS if k.tool})
    specs = [dict(v) for v in rspec.views] or default_views(rv, list(wspecs))
    views = [v for v in (build_view(rv, spec) for spec in specs) if v["tables"] or v["charts"]]
    for v in views:
        v["tables"] = [part for t in v["tables"] for part in split_wide(t)]
    generated = [(v["title"], view_sentences(v, baseline)) for v in views]
    unstable, more_unstable = summary_mod.unstable(summary, style.cv_threshold)
    verdicts: dict[str, int] = {}
    for v in views:
        for t in v["tables"]:
            for r in t["rows"]:
                for c in r["cells"]:
                    if c.get("verdict"):
                        verdicts[c["verdict"]] = verdicts.get(c["verdict"], 0) + 1
    metrics = {**TABLE_METRICS, **rspec.metrics}
    return {
        "title": scenario.get("name", manifest.get("scenario", "fsbench run")),
        "description": scenario.get("description", ""),
        "use_case": [(k.replace("_", " ").capitalize(), v) for k, v in (scenario.get("use_case") or {}).items()
                     if v and k in USE_CASE_KEYS],
        "conclusions": rspec.conclusions,
        "generated": [(title, lines) for title, lines in generated if lines],
        "manifest": manifest,
        "counts": counts,
        "total_cases": len(cases),
        "hosts": [h.get("host", "") for h in hosts],
        "host_facts": _host_facts(hosts),
        "targets": [{"name": n, **{k: v for k, v in (t or {}).items() if k in ("path", "description")},
                     "baseline": n == baseline} for n, t in tspecs.items()],
        "baseline": baseline,
        "failed": [c for c in cases if c["status"] != "ok"],
        "problems": summary_mod.problems(cases),
        "unstable": unstable,
        "more_unstable": more_unstable,
        "unstable_count": len(unstable) + more_unstable,
        "verdicts": verdicts,
        "cv_threshold": f"{style.cv_threshold * 100:.0f}%",
        "same_band": f"{style.same_band * 100:.0f}%",
        "views": views,
        "workloads": [_split_all(_workload(name, spec, summary[summary["workload"] == name] if not summary.empty
                                           else summary, targets, baseline, style, metrics))
                      for name, spec in wspecs.items()],
        "variables": scenario.get("variables") or {},
    }


def _split_all(workload: dict) -> dict:
    for key in ("tables", "extra_tables"):
        workload[key] = [part for t in workload[key] for part in split_wide(t)]
    return workload


def client_processes(tspecs: dict) -> dict[str, str]:
    """target -> the process that serves it on its hosts (its own setting, else its kind's)."""
    out = {}
    for name, t in tspecs.items():
        t = t or {}
        kind = t.get("kind") or "directory"
        proc = t.get("client_process") or (getattr(KINDS.get(kind), "client_process", "") if kind in KINDS else "")
        if proc:
            out[name] = str(proc)
    return out


def default_views(rv: RunView, workloads: list[str]) -> list[dict]:
    """Without `report.views`: each workload in the shape its tool declares, its sweep decides the rest."""
    out: list[dict] = []
    for w in workloads:
        df = rv.rows([w])
        if df.empty:
            continue
        swept = [p.removeprefix("param_") for p in params_of(df[df["stat"].isin(["value", "mean"])])]
        tool = rv.tools.get(w)
        declared = list(getattr(tool, "views", ("table",)) or ("table",))
        if len(swept) == 1:
            out.append({"view": "by_value", "workload": w, "param": swept[0], "resources": True})
            values = pd.to_numeric(df[f"param_{swept[0]}"], errors="coerce")
            if values.notna().all() and values.nunique() >= 3:
                out.append({"view": "chart", "workload": w, "param": swept[0], "per": "target"})
        else:
            out.append({"view": "table", "workload": w, "resources": True, "chart": True})
        out += [{"view": v, "workload": w} for v in declared if v != "table"]
        # what collectors measured beside it (juicefs profile's totals, juicefs stats' means)
        beside = rv.summary[rv.summary["workload"] == w] if not rv.summary.empty else rv.summary
        for side in (t for t in rv.side_tools if not beside.empty and (beside["tool"] == t).any()):
            out.append({"view": "table", "workload": w, "tool": side, "resources": False,
                        "metrics": list(getattr(rv.side_tools[side], "primary_metrics", ()))})
    return out


def split_wide(table: dict, most: int = 6) -> list[dict]:
    """A table with more targets than fit a page (1280 px) as several, the baseline's column in each."""
    targets = table.get("targets") or []
    if table.get("kind") not in ("compare", "pivot") or len(targets) <= most:
        return [table]
    base = targets[0]
    rest = targets[1:]
    size = most - 1
    out = []
    for i in range(0, len(rest), size):
        chunk = [base, *rest[i:i + size]]
        idx = [targets.index(t) for t in chunk]
        rows = [{**r, "cells": [r["cells"][j] for j in idx]} if r.get("cells") else r for r in table["rows"]]
        part = f" ({i // size + 1} of {(len(rest) + size - 1) // size})"
        labels = len(table["head"]) - len(targets)  # the label columns before the targets'
        out.append({**table, "targets": chunk, "head": [*table["head"][:labels], *chunk], "rows": rows,
                    "title": (table.get("title") or "") + part})
    return out


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
        rows.append((k.replace("_bytes", "").replace("mount_", "mount: ").replace("_", " "), values))
    return rows


def _point_label(row: pd.Series, pcols: list[str]) -> str:
    return " ".join(f"{c.removeprefix('param_')}={row[c]}" for c in pcols if str(row.get(c, "")) != "")


def _workload(name: str, spec: dict, sub: pd.DataFrame, targets: list[str], baseline: str, style: Style,
              metrics: dict[str, list[str]]) -> dict:
    tool = spec.get("tool", "")
    out = {"name": name, "tool": tool, "description": spec.get("description", ""),
           "options": spec.get("options") or {}, "tables": [], "charts": [], "extra_tables": []}
    if sub.empty:
        return out
    present = [t for t in targets if t in set(sub["target"])]
    peak = (sub["tool"] == "monitor") & (sub["metric"] == "memory_peak")  # a peak is the value to compare
    # tools that report their own summary (mdtest's Max / Min / Mean / Std Dev) get that table whole
    summarising = set(sub.loc[sub["stat"].isin(["max", "min", "stddev"]) & (sub["tool"] != "monitor"), "tool"])
    tool_stats = sub[sub["tool"].isin(summarising) & sub["stat"].isin(["max", "min", "mean", "stddev"])]
    main = sub[sub["stat"].isin(["value", "mean"]) | peak]
    keep = pd.Series(True, index=main.index)
    for t, wanted in metrics.items():
        keep &= ~((main["tool"] == t) & ~main["metric"].isin(wanted))
    main = main[keep]
    pcols = [c for c in main.columns if c.startswith("param_") and (main[c].astype(str) != "").any()]
    main = main.assign(point=main.apply(_point_label, axis=1, pcols=pcols) if pcols else "")
    if len(pcols) == 1 and main[pcols[0]].nunique() > 1:
        chart_metrics = CHART_METRICS.get(tool) or sorted(set(main["metric"]))[:3]
        out["tables"] = pivot_tables(main, pcols[0], present, baseline, style, name,
                                     list(dict.fromkeys(chart_metrics + metrics.get(tool, []))))
    else:
        for point, psub in main.groupby("point", sort=False):
            out["tables"].append(compare_table(psub, present, baseline, style, name, str(point)))
    if len(present) > 1:
        primary = main[(main["tool"] != "monitor") & main["metric"].isin(summary_mod.PRIMARY)]
        for point, psub in primary.groupby("point", sort=False):
            out["extra_tables"].append(best_table(psub, present, f"% of the best{' · ' + point if point else ''}"))
    if not tool_stats.empty:
        for t in present:
            out["extra_tables"].append(stats_table(tool_stats, t))
    out["charts"] = _charts(main, tool, pcols)
    return out


def _charts(sub: pd.DataFrame, tool: str, pcols: list[str]) -> list[dict]:
    charts = []
    sub = sub[sub["tool"] == tool] if "tool" in sub else sub
    metrics = CHART_METRICS.get(tool) or sorted(set(sub["metric"]))[:3]
    many_ops = sub.groupby("metric")["operation"].nunique().max() if not sub.empty else 1
    data = sub.assign(series=sub["target"] + (" · " + sub["operation"] if many_ops and many_ops > 1 else ""))
    numeric = len(pcols) == 1 and pd.to_numeric(data[pcols[0]], errors="coerce").notna().all() \
        and data[pcols[0]].nunique() >= 3
    for metric in metrics:
        m = data[data["metric"] == metric]
        if m.empty:
            continue
        unit = str(m["unit"].iloc[0])
        title = metric.replace("_", " ")
        if numeric:
            svg = figures.line_chart(m, title, unit, pcols[0], "series")
        elif m["point"].nunique() * m["series"].nunique() <= MAX_CHART_POINTS:
            x = "point" if m["point"].nunique() > 1 or m["operation"].nunique() == 1 else "operation"
            series = "series" if x == "point" else "target"
            svg = figures.bar_chart(m, title, unit, x, series)
        else:
            continue
        charts.append({"metric": metric, "svg": svg})
    return charts
