"""The tidy table: one measurement per row (design.md section 4)."""

from __future__ import annotations

import re
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
    "rate": "op/s",
    "io_bytes": "B",
    "ops": "count",
    "runtime": "s",
    "time": "s",
    "clat_mean": "s", "clat_min": "s", "clat_max": "s", "clat_stddev": "s",
    "clat_p50": "s", "clat_p90": "s", "clat_p95": "s", "clat_p99": "s", "clat_p99.9": "s",
    "lat_mean": "s", "slat_mean": "s",
    "latency_mean": "s",
    "cpu_usage": "%",
    "memory_peak": "B",
}
STATS = ("value", "max", "min", "mean", "stddev")
#: metrics where a bigger number is better (the others, latencies and times, are better small)
HIGHER_IS_BETTER = {"bandwidth", "iops", "rate", "io_bytes", "ops"}


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
