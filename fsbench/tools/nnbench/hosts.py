"""NNBench on several client hosts at once: each host's rows, and their sum as host `all`.

Every host's runner waits at one barrier before each operation's start time, so the hosts' runs of one
operation overlap: their rates add up to the operation's rate across hosts. Counts (ops, exceptions,
late maps, maps) add up too; mean latencies and exec times are weighted by each host's successful
operations, so that they are the mean over every file operation of every host.
"""

from __future__ import annotations

from fsbench.core.tidy import ParseResult, per_host

#: metrics added across hosts; the others are means weighted by each host's successful operations
SUMMED = ("rate", "ops", "exceptions", "late_maps")
AGGREGATE = "all"


def combine_hosts(parts: dict[str, ParseResult]) -> ParseResult:
    """Per-host rows (host = the scenario's host name) plus the aggregate (host `all`, `maps` the total)."""
    out = per_host(parts)
    if len(parts) < 2:
        return out
    # the parts of an operation (create, close) carry it as their job: (job, operation) names a row's figure
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for r in out.rows:
        groups.setdefault((r.get("job", ""), r["operation"], r["metric"]), []).append(r)
    done = {(r["host"], r["operation"]): r["value"] for r in out.rows if r["metric"] == "ops" and not r.get("job")}
    for (job, op, metric), rows in groups.items():
        if len(rows) < len(parts):
            if metric == "ops":
                out.warnings.append(f"{op}: measured on {len(rows)} of {len(parts)} hosts; no sum across hosts")
            continue
        values = [float(r["value"]) for r in rows]
        if metric in SUMMED:
            value = sum(values)
        else:
            weights = [done.get((r["host"], job or op), 0.0) for r in rows]
            total = sum(weights)
            value = sum(v * w for v, w in zip(values, weights)) / total if total else sum(values) / len(values)
        extra = {k: v for k, v in rows[0].items() if k not in ("host", "value", "warnings")}
        if "maps" in extra:  # the concurrent clients of the whole load: every host's maps
            extra["maps"] = sum(int(r.get("maps", 0)) for r in rows)
        coarse = sorted({w for r in rows for w in str(r.get("warnings", "")).split("; ") if w})
        out.rows.append({**extra, "host": AGGREGATE, "value": value, **({"warnings": "; ".join(coarse)} if coarse
                                                                         else {})})
    return out
