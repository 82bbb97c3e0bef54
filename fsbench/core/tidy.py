"""The tidy table: one measurement per row (design.md section 4)."""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass, field

#: where a row came from (filled by the runner; `fsbench ingest` has `source` instead)
CONTEXT_COLUMNS = ["run_id", "case_id", "scenario", "target", "workload", "repetition"]
#: what a parser emits for every row
MEASUREMENT_COLUMNS = ["tool", "host", "job", "operation", "metric", "stat", "value", "unit"]
COLUMNS = CONTEXT_COLUMNS + MEASUREMENT_COLUMNS

#: the metric vocabulary and each metric's canonical unit
METRIC_UNITS: dict[str, str] = {
    "bandwidth": "B/s",
    "iops": "op/s",
    "file_rate": "file/s",
    "rate": "op/s",
    "io_bytes": "B",
    "ops": "count",
    "runtime": "s",
    "time": "s",
    "clat_mean": "s", "clat_min": "s", "clat_max": "s", "clat_stddev": "s",
    "clat_p50": "s", "clat_p90": "s", "clat_p95": "s", "clat_p99": "s", "clat_p99.9": "s",
    "lat_mean": "s", "slat_mean": "s",
    "latency_mean": "s", "latency_min": "s", "latency_max": "s", "latency_stddev": "s",
    "latency_p50": "s", "latency_p90": "s", "latency_p99": "s", "latency_p99.9": "s",
    "cpu_usage": "%",
    "memory_peak": "B",
    # NNBench's counts and its "Avg exec time" (the maps' summed time per successful operation)
    "exceptions": "count",
    "late_maps": "count",
    "exec_time_mean": "s",
}
STATS = ("value", "max", "min", "mean", "stddev")
#: the unit of outcomes (functional checks): 1 pass, 0 not supported, -1 failed
OUTCOME_UNIT = "result"
#: metrics of the vocabulary where a bigger number is better (the others, latencies and times, are better
#: small); a tool plug-in names its own such metrics in `higher_is_better` (see higher_is_better())
HIGHER_IS_BETTER = {"bandwidth", "iops", "file_rate", "rate", "io_bytes", "ops"}


def higher_is_better(metric: str, higher: Collection[str] = (), own: Collection[str] = ()) -> bool:
    """Whether a bigger value of this metric is better: a plug-in's own declaration (`higher`: its metrics
    better big; `own`: the metrics it adds), else the vocabulary's (fsbench.api.tools.better_big asks a plug-in)."""
    if metric in higher:
        return True
    if metric in own:
        return False  # a metric of its own it does not call better big: a count of problems, a time
    return metric in HIGHER_IS_BETTER


def measurement(
    tool: str,
    operation: str,
    metric: str,
    value: float,
    *,
    host: str = "",
    job: str = "",
    stat: str = "value",
    unit: str | None = None,
    **extra: object,
) -> dict:
    """Build one tidy row; the unit defaults to the metric's canonical unit."""
    row = {
        "tool": tool,
        "host": host,
        "job": job,
        "operation": operation,
        "metric": metric,
        "stat": stat,
        "value": float(value),
        "unit": unit if unit is not None else METRIC_UNITS[metric],
    }
    row.update(extra)
    return row


_SNAKE = re.compile(r"[^0-9a-zA-Z]+")


def snake(label: str) -> str:
    """'File create (stonewall)' -> 'file_create_stonewall'."""
    return _SNAKE.sub("_", label.strip()).strip("_").lower()


@dataclass
class ParseResult:
    """Rows from one tool output, plus warnings about parts that could not be used."""

    rows: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)


def per_host(parts: dict[str, ParseResult]) -> ParseResult:
    """The hosts' results of one case as one: each row with its host, warnings prefixed by it, meta by host."""
    out = ParseResult()
    for host, part in parts.items():
        out.rows += [{**r, "host": host} for r in part.rows]
        out.warnings += [f"{host}: {w}" for w in part.warnings]
        out.meta[host] = part.meta
    return out


#: the largest value of each canonical unit that can still be a measurement: 1 PB/s, ten billion
#: op/s, 1 EB, 1e15 operations, 116 days, 1,000 busy cores. Above it a parser misread something
#: (a unit, a corrupt number); the row is kept but flagged, so nobody averages it unknowingly.
PLAUSIBLE_MAX: dict[str, float] = {"B/s": 1e15, "op/s": 1e10, "B": 1e18, "count": 1e15, "s": 1e7, "%": 1e5}
FLOAT_MAX = 1.7976931348623157e308
#: the column that says what is wrong with a flagged row (absent on rows that are fine)
WARNINGS = "warnings"


def check_row(row: dict) -> str | None:
    """What is wrong with a row's value, or None when it is a plausible measurement.

    The rule, the same for every tool: a value that is not a finite number (NaN, infinity) is no
    measurement, and the row must be left out; every metric of the vocabulary is a magnitude, so a
    negative value is wrong; a value above PLAUSIBLE_MAX of its unit is beyond physical sense.
    The last two keep their row, flagged in its `warnings` column (see vet). The one exception is the
    unit `result`, an outcome rather than a magnitude (a functional check: 1 pass, 0 not supported,
    -1 failed).
    """
    value = row.get("value")
    if not isinstance(value, float) or not math.isfinite(value):
        return f"value {value!r} is not a finite number"
    if row.get("unit") == OUTCOME_UNIT:
        return None if value in (-1.0, 0.0, 1.0) else f"{row.get('metric')} {value:g} is not an outcome (1, 0, -1)"
    if value < 0:
        return f"negative {row.get('metric')} ({value:g} {row.get('unit')})"
    limit = PLAUSIBLE_MAX.get(str(row.get("unit")))
    if limit is not None and value > limit:
        return f"{row.get('metric')} {value:g} {row.get('unit')} is above {limit:g}, beyond physical sense"
    return None


def vet(result: "ParseResult") -> "ParseResult":
    """Apply check_row to every row: non-finite values are dropped, implausible ones flagged.

    A flagged row gets a `warnings` column (a parser may already have set one with a better
    explanation, which is kept) and the result one warning per kind of problem, with a count,
    so a huge output with many bad rows does not grow a huge warning list.
    """
    kept: list[dict] = []
    dropped: dict[tuple, list] = {}
    flagged: dict[tuple, list] = {}
    for row in result.rows:
        value = row.get("value")
        # the common case first, in one comparison (NaN and infinity fail it and are examined below)
        if isinstance(value, float) and 0.0 <= value <= PLAUSIBLE_MAX.get(str(row.get("unit")), FLOAT_MAX):
            kept.append(row)
            continue
        problem = check_row(row)
        if problem is None:
            kept.append(row)
            continue
        finite = isinstance(value, float) and math.isfinite(value)
        if finite and row.get(WARNINGS):
            kept.append(row)  # the parser flagged it already, with its own explanation
            continue
        # one warning per kind of problem of each metric (its first example quoted)
        where = (row.get("tool"), row.get("operation"), row.get("metric"), finite and float(value or 0) < 0)
        seen = (flagged if finite else dropped).setdefault(where, [problem, 0])
        seen[1] += 1
        if finite:
            row[WARNINGS] = problem
            kept.append(row)
    for (tool, op, metric, _), (problem, n) in dropped.items():
        result.warnings.append(f"{tool} {op} {metric}: {problem}; left out{_rows(n)}")
    for (tool, op, _, _), (problem, n) in flagged.items():
        result.warnings.append(f"{tool} {op}: {problem}; kept, flagged in the warnings column{_rows(n)}")
    result.rows = kept
    return result


def _rows(n: int) -> str:
    return f" ({n} rows)" if n > 1 else ""
