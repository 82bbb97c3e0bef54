"""Per-host breakdown under each aggregate: fio's per-client rows, metabench's per host, one table per workload."""

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
