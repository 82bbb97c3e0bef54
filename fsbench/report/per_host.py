"""Per-host breakdown under each aggregate (fio's per-client rows, metabench's per host) and which host ran what."""

from __future__ import annotations

import pandas as pd

from fsbench.tools.placement import COMPACT_FROM, compact_placement

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


#: a host whose value is this much worse than the hosts' median is a straggler, named under its table
STRAGGLER = 0.20
#: metrics where less is better (a host is slower when its value is higher)
LOWER_IS_BETTER = ("latency",)


def spread(values: dict[str, float | None], metric: str) -> dict | None:
    """The hosts' median, fastest and slowest host, the spread ((slowest - fastest) / median) and the
    stragglers [(host, how much worse than the median, as a share)]; None without two hosts' values."""
    known = {h: v for h, v in values.items() if v is not None and v == v}
    if len(known) < 2:
        return None
    median = float(pd.Series(list(known.values())).median())
    lower = metric.startswith(LOWER_IS_BETTER)
    order = sorted(known, key=lambda h: known[h], reverse=not lower)  # fastest first
    worse = {h: ((v - median) if lower else (median - v)) / median for h, v in known.items()} if median else {}
    return {"median": median, "fastest": order[0], "slowest": order[-1],
            "spread": abs(known[order[0]] - known[order[-1]]) / median if median else None,
            "stragglers": sorted(((h, w) for h, w in worse.items() if w > STRAGGLER), key=lambda x: -x[1])}


def attach_per_host(views: list[dict], specs: list[dict], results: pd.DataFrame) -> None:
    """Give each view the per-host tables of its workloads and metrics (`per_host`: head and text rows, and
    the stragglers named). Past a handful of hosts a row gives the median, fastest and slowest host and the
    spread instead of a column per host."""
    tables = per_host_tables(results)
    for view, spec in zip(views, specs, strict=False):
        names = set(spec.get("workloads") or [spec.get("workload")])
        wanted = set(spec.get("metrics") or ())
        view["per_host"] = [_table(t) for t in tables
                            if t["workload"] in names and (not wanted or t["metric"] in wanted)]


def _table(t: dict) -> dict:
    from fsbench.core.units import format_value

    def text(v: float | None) -> str:
        return _text(v, t["unit"], format_value)

    notes, rows = [], []
    compact = len(t["hosts"]) >= COMPACT_FROM
    for r in t["rows"]:
        s = spread(r["values"], t["metric"])
        where = " ".join(w for w in (r["target"], r["operation"]) if w)
        if s and s["stragglers"]:
            named = ", ".join(f"{h} ({text(r['values'][h])}, {w:.0%} worse)" for h, w in s["stragglers"])
            notes.append(f"{where}: straggler{'s' if len(s['stragglers']) > 1 else ''} more than "
                         f"{STRAGGLER:.0%} worse than the hosts' median ({text(s['median'])}): {named}")
        if not compact:
            rows.append([r["target"], r["operation"], *(text(r["values"][h]) for h in t["hosts"]), text(r["all"])])
        elif s:
            rows.append([r["target"], r["operation"], text(r["all"]), str(len([v for v in r["values"].values()
                                                                                if v is not None])),
                         text(s["median"]), f"{s['fastest']} {text(r['values'][s['fastest']])}",
                         f"{s['slowest']} {text(r['values'][s['slowest']])}",
                         f"{s['spread']:.0%}" if s["spread"] is not None else "",
                         str(len(s["stragglers"]))])
    head = ["target", "operation", ALL, "hosts", "median", "fastest", "slowest", "spread", "stragglers"] if compact \
        else ["target", "operation", *t["hosts"], ALL]
    return {"title": f"{t['workload']} · {t['metric']} per host", "head": head, "rows": rows, "notes": notes}


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
    compact = len(hosts) >= COMPACT_FROM
    if compact:  # past a handful of hosts a column per host is a wall: each row says which groups run what
        for row, (_, runs) in zip(out, groups, strict=True):
            row["groups"] = [f"{hs}: {what}" for hs, what in
                             compact_placement({h: dict(runs)[h] for h in hosts if h in dict(runs)})]
    return {"hosts": hosts, "rows": out, "compact": compact}


def run_warning_groups(rows: list[dict]) -> list[dict]:
    """run-warnings.csv's rows in the report's Warnings shape: {warning, count, cases (12 at most), more}."""
    out = []
    for r in rows:
        ids = str(r.get("cases") or "").split()
        out.append({"warning": r["warning"], "count": len(ids), "cases": ids[:12], "more": max(0, len(ids) - 12)})
    return out


def _text(value: float | None, unit: str, fmt) -> str:
    return "" if value is None or value != value else fmt(value, unit)
