"""The monitors' figures per host group: past a handful of hosts, a column per host is a wall, so each group
of hosts (the scenario's `groups`) gives per workload and target its median, its lowest and highest host and
the hosts far off its median, by name: a client whose CPU sits at twice its group's while the tool ran is
the first place to look when one host's numbers lag."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from fsbench.core.units import format_value

#: a host whose figure is this far (either way, as a share of the group's median) from its group's median
OUTLIER = 0.5
#: the monitor's figures shown: (operation, metric, stat, label)
FIGURES = (("host", "cpu_usage", "mean", "host CPU"), ("host", "memory_peak", "max", "host peak memory"))
#: a group of fewer hosts has no spread worth a table
FEWEST = 3


def group_tables(results: pd.DataFrame, groups: Mapping[str, Sequence[str]]) -> list[dict]:
    """[{title, head, rows, notes}]: one table per monitor figure with a row per workload, target and host
    group of at least FEWEST hosts with values; [] where no group is that big. `groups`: host -> its groups."""
    needed = {"tool", "operation", "metric", "stat", "host", "workload", "target", "value", "unit"}
    if results.empty or not needed <= set(results.columns):
        return []
    members: dict[str, list[str]] = {}
    for host, names in groups.items():
        for g in names:
            members.setdefault(g, []).append(host)
    monitor = results[results.tool == "monitor"]
    out = []
    for op, metric, stat, label in FIGURES:
        part = monitor[(monitor.operation == op) & (monitor.metric == metric) & (monitor.stat.astype(str) == stat)]
        if part.empty:
            continue
        unit = str(part.unit.iloc[0])
        by_host = part.groupby(["workload", "target", "host"], sort=False).value.mean()  # over the repetitions
        rows, notes = [], []
        for (workload, target), values in by_host.groupby(level=[0, 1], sort=False):
            seen = {h: float(v) for (_, _, h), v in values.items()}
            for g, hosts in members.items():
                known = {h: seen[h] for h in hosts if h in seen}
                if len(known) < FEWEST:
                    continue
                median, row, far = _row(known, unit)
                rows.append([str(workload), str(target), f"{g} ({len(known)})", *row])
                if far:
                    notes.append(f"{workload} on {target}, {g}: {label} far from the group's median "
                                 f"({format_value(median, unit)}): "
                                 + ", ".join(f"{h} {format_value(v, unit)}" for h, v in far))
        if rows:
            out.append({"title": f"{label} ({metric}, {stat} over each case) per host group",
                        "head": ["workload", "target", "group (hosts)", "median", "lowest", "highest", "outliers"],
                        "rows": rows, "notes": notes})
    return out


def host_groups(hosts: Sequence[Mapping]) -> dict[str, tuple[str, ...]]:
    """host -> its groups, from hosts.csv's rows (its `groups` column: the names, space-separated)."""
    return {str(r.get("host") or ""): tuple(str(r.get("groups") or "").split()) for r in hosts if r.get("host")}


def _row(known: Mapping[str, float], unit: str) -> tuple[float, list[str], list[tuple[str, float]]]:
    """The group's median; [median, lowest host, highest host, outlier count] as text; the outliers,
    farthest first."""
    median = float(pd.Series(list(known.values())).median())
    low = min(known, key=lambda h: known[h])
    high = max(known, key=lambda h: known[h])
    far = sorted(((h, v) for h, v in known.items() if median and abs(v - median) / median > OUTLIER),
                 key=lambda hv: -abs(hv[1] - median))
    shown = [format_value(median, unit), f"{low} {format_value(known[low], unit)}",
             f"{high} {format_value(known[high], unit)}", str(len(far))]
    return median, shown, far
