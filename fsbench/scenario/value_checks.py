"""Checkers of single scenario values the schema has no rule for: ports, percentages, thresholds, process names."""

from __future__ import annotations

from typing import Any

from fsbench.config import schema as s
from fsbench.core.thresholds import parse_threshold
from fsbench.core.tidy import METRIC_UNITS
from fsbench.core.units import parse_fraction


def port(value: object, path: tuple, lm, issues: list) -> object:
    """A TCP port number, or `auto` for a free one chosen at run time."""
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536):
        return value
    issues.append(lm.issue(path, f"expected a port number or auto, got {value!r}"))
    return None


def percent(value: object, path: tuple, lm, issues: list) -> object:
    """'10%' or 0.1 -> 0.1."""
    try:
        return parse_fraction(value)
    except (TypeError, ValueError):
        issues.append(lm.issue(path, f"expected a percentage such as 10%, got {value!r}"))
        return None


def threshold(value: object, path: tuple, lm, issues: list) -> object:
    """{good: 150MiB/s, poor: 50MiB/s} under a `workload.operation.metric` key."""
    key = str(path[-1])
    if key.count(".") < 2 or key.rsplit(".", 1)[-1] not in METRIC_UNITS:
        issues.append(lm.issue(path, f"a threshold key is WORKLOAD.OPERATION.METRIC (* allowed), got {key!r}",
                               f"metrics: {', '.join(METRIC_UNITS)}"))
        return None
    checked = s.Struct({"good": s.Key(s.scalar, required=True), "poor": s.Key(s.scalar, required=True)},
                       what="threshold")(value, path, lm, issues)
    for k in ("good", "poor"):
        if checked and checked.get(k) is not None:
            try:
                parse_threshold(checked[k])
            except ValueError as exc:
                issues.append(lm.issue(path + (k,), str(exc)))
    return checked


#: the kernel keeps 15 characters of a process's name in /proc/PID/comm: a longer name never matches
COMM_MAX = 15


def process_name(value: object, path: tuple, lm, issues: list) -> object:
    """A process name as /proc/PID/comm shows it; `host` is the host's own scope."""
    name = s.string(value, path, lm, issues)
    if name is None:
        return None
    if name == "host":
        issues.append(lm.issue(path, "`host` names the whole host's figures, not a process"))
        return None
    if not name or len(name) > COMM_MAX or "/" in name or not name.isprintable():
        issues.append(lm.issue(path, f"{name!r} is not a process name as /proc/PID/comm shows it",
                               f"1 to {COMM_MAX} printable characters without '/', e.g. s3fs or redis-server "
                               "(the kernel cuts longer names: give the first 15 characters)"))
        return None
    return name


def drop_level(value: object, path: tuple, lm: Any, issues: list) -> Any:
    """1 or 3: a level that drops the page cache (2 drops only dentries and inodes: not a cache drop)."""
    if isinstance(value, bool) or value not in (1, 3):
        issues.append(lm.issue(path, f"expected 1 (the page cache, as `echo 1 > /proc/sys/vm/drop_caches`) or 3 "
                                     f"(the page cache, dentries and inodes), got {value!r}"))
        return None
    return value
