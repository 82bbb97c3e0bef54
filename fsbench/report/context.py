"""Everything the report shows, computed from a run directory alone (numbers here, formatting in cells)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import yaml

from fsbench.analysis.summarise import summarise, with_baseline
from fsbench.report import figures
from fsbench.report import summary as summary_mod
from fsbench.report.tables import Style, best_table, compare_table, pivot_tables, stats_table
from fsbench.scenario.load import report_settings
from fsbench.scenario.model import USE_CASE_KEYS
from fsbench.thresholds import thresholds_from
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
    """The report's data: scenario, environment, summary, per-workload tables and charts, failures."""
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
    metrics = {**TABLE_METRICS, **rspec.metrics}
    workloads = []
    for name, spec in (scenario.get("workloads") or {}).items():
        sub = summary[summary["workload"] == name] if not summary.empty else summary
        workloads.append(_workload(name, spec or {}, sub, targets, baseline, style, metrics))
    unstable, more_unstable = summary_mod.unstable(summary, style.cv_threshold)
    verdicts: dict[str, int] = {}
    for w in workloads:
        for t in w["tables"]:
            for r in t["rows"]:
                for c in r["cells"]:
                    if c.get("verdict"):
                        verdicts[c["verdict"]] = verdicts.get(c["verdict"], 0) + 1
    return {
        "title": scenario.get("name", manifest.get("scenario", "fsbench run")),
        "description": scenario.get("description", ""),
        "use_case": [(k.replace("_", " ").capitalize(), v) for k, v in (scenario.get("use_case") or {}).items()
                     if v and k in USE_CASE_KEYS],
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
        "winners": summary_mod.winners(summary, targets),
        "unstable": unstable,
        "more_unstable": more_unstable,
        "verdicts": verdicts,
        "cv_threshold": f"{style.cv_threshold * 100:.0f}%",
        "same_band": f"{style.same_band * 100:.0f}%",
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
