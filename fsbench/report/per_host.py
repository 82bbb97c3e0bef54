"""Per-host breakdown under each aggregate (fio's per-client rows, metabench's per host) and which host ran what."""

from __future__ import annotations

import pandas as pd

#: the host of the rows that sum or pool every host of a case
ALL = "all"


def per_host_tables(results: pd.DataFrame, metrics: tuple[str, ...] = ("bandwidth", "iops", "rate",
                                                                        "latency_mean")) -> list[dict]:
    """[{workload, metric, unit, hosts, rows: [{target, operation, values: {host: mean}, all}]}], one per
    workload and metric whose rows name more than one host beside `all`; [] for a one-host run."""
    needed = {"workload", "target", "metric", "value", "unit", "host"}
    if results.empty or not needed <= set(results.columns):
        return []
    frame = results[results.metric.isin(metrics)]
    if "stat" in frame:  # a tool's own max/min/stddev rows are not a host's value
        frame = frame[frame.stat.astype(str).isin(["value", "mean", ""])]
    if "operation" not in frame:
        frame = frame.assign(operation="")
    out = []
    for (workload, metric), part in frame.groupby(["workload", "metric"], sort=False):
        hosts = sorted(h for h in part.host.astype(str).unique() if h and h != ALL)
        if len(hosts) < 2 or ALL not in set(part.host):
            continue
        means = part.groupby(["target", "operation", "host"], sort=False).value.mean()
        rows = []
        for (target, operation), by_host in means.groupby(level=[0, 1], sort=False):
            values = {h: float(v) for (_, _, h), v in by_host.items()}
            rows.append({"target": target, "operation": operation, "values": {h: values.get(h) for h in hosts},
                         "all": values.get(ALL)})
        out.append({"workload": workload, "metric": metric, "unit": str(part.unit.iloc[0]), "hosts": hosts,
                    "rows": rows})
    return out


def attach_per_host(views: list[dict], specs: list[dict], results: pd.DataFrame) -> None:
    """Give each view the per-host tables of its workloads and metrics (`per_host`: head and text rows)."""
    from fsbench.core.units import format_value

    tables = per_host_tables(results)
    for view, spec in zip(views, specs, strict=False):
        names = set(spec.get("workloads") or [spec.get("workload")])
        wanted = set(spec.get("metrics") or ())
        view["per_host"] = [
            {"title": f"{t['workload']} · {t['metric']} per host", "head": ["target", "operation", *t["hosts"], ALL],
             "rows": [[r["target"], r["operation"],
                       *(_text(r["values"][h], t["unit"], format_value) for h in t["hosts"]),
                       _text(r["all"], t["unit"], format_value)] for r in t["rows"]]}
            for t in tables if t["workload"] in names and (not wanted or t["metric"] in wanted)]


def placement_groups(rows: list[dict]) -> dict:
    """placement.csv's rows as {hosts, rows: [{workload, targets, runs: [per host]}]}, cases of one host left out.

    Cases of one workload that place alike (every repetition, most targets) share a row."""
    by_case: dict[str, dict] = {}
    for r in rows:
        by_case.setdefault(r["case_id"], {"workload": r["workload"], "target": r["target"], "runs": {}})
        by_case[r["case_id"]]["runs"][r["host"]] = r["runs"]
    hosts: list[str] = []
    groups: dict[tuple, list[str]] = {}
    for c in by_case.values():
        if len(c["runs"]) < 2:
            continue
        hosts += [h for h in c["runs"] if h not in hosts]
        key = (c["workload"], tuple(sorted(c["runs"].items())))
        if c["target"] not in groups.setdefault(key, []):
            groups[key].append(c["target"])
    out = [{"workload": w, "targets": ", ".join(ts), "runs": [dict(runs).get(h, "") for h in hosts]}
           for (w, runs), ts in groups.items()]
    return {"hosts": hosts, "rows": out}


def run_warning_groups(rows: list[dict]) -> list[dict]:
    """run-warnings.csv's rows in the report's Warnings shape: {warning, count, cases (12 at most), more}."""
    out = []
    for r in rows:
        ids = str(r.get("cases") or "").split()
        out.append({"warning": r["warning"], "count": len(ids), "cases": ids[:12], "more": max(0, len(ids) - 12)})
    return out


def _text(value: float | None, unit: str, fmt) -> str:
    return "" if value is None or value != value else fmt(value, unit)
