"""Collectors: commands that run beside a case on its hosts (juicefs stats, juicefs profile's access
log, iostat...), their output kept in raw/ and parsed into time series and rows where a parser exists."""

from fsbench.api.collectors import COLLECTOR_HOOKS, SERIES_COLUMNS, Collected, CollectorKind
from fsbench.api.registry import Registry

COLLECTORS: Registry[CollectorKind] = Registry("collector kind", "fsbench.collectors", (
    "fsbench.collectors.command", "fsbench.collectors.juicefs_stats", "fsbench.collectors.juicefs_profile"),
    CollectorKind, COLLECTOR_HOOKS)

__all__ = ["COLLECTORS", "SERIES_COLUMNS", "Collected", "CollectorKind"]
