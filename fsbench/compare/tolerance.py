"""Tolerance bands written as data (`bandwidth:5%`, `clat_*:10%`, `*:3%`) and metric selections."""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterable, Mapping

from fsbench.core.errors import FsbenchError
from fsbench.core.tidy import METRIC_UNITS

#: the band used for a metric no tolerance names (the report's "not coloured" band is also 5 %)
DEFAULT_TOLERANCE = 0.05
_SPEC = re.compile(r"^\s*(?P<metric>[^:\s]+)\s*:\s*(?P<number>[0-9]*\.?[0-9]+)\s*%\s*$")
_WILDCARDS = set("*?[")


class ToleranceError(FsbenchError):
    """A tolerance or metric selection that cannot be read; says what is allowed."""

    exit_code = 2


def _check_name(name: str, what: str) -> None:
    """A name must be a metric of the vocabulary, or a pattern matching at least one."""
    if _WILDCARDS & set(name):
        if not fnmatch.filter(METRIC_UNITS, name):
            raise ToleranceError(f"{what} {name!r}: the pattern matches no metric; metrics are "
                                 f"{', '.join(METRIC_UNITS)}")
        return
    if name not in METRIC_UNITS:
        close = difflib.get_close_matches(name, METRIC_UNITS, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ToleranceError(f"{what} {name!r}: unknown metric; {hint}metrics are {', '.join(METRIC_UNITS)} "
                             "(patterns such as clat_* and * are allowed)")


def parse_tolerances(specs: str | Iterable[str] | Mapping[str, float] | None) -> dict[str, float]:
    """`["bandwidth:5%", "clat_*:10%"]` or `"bandwidth:5%,*:3%"` -> {"bandwidth": 0.05, ...} (fractions)."""
    if specs is None:
        return {}
    if isinstance(specs, Mapping):
        out = {}
        for name, value in specs.items():
            _check_name(str(name), "tolerance")
            if not isinstance(value, (int, float)) or value != value or value < 0:
                raise ToleranceError(f"tolerance {name!r}: {value!r} is not a fraction >= 0 (0.05 is 5 %)")
            out[str(name)] = float(value)
        return out
    items = [specs] if isinstance(specs, str) else list(specs)
    out = {}
    for item in items:
        for spec in str(item).split(","):
            if not spec.strip():
                continue
            m = _SPEC.match(spec)
            if not m:
                raise ToleranceError(f"tolerance {spec.strip()!r}: write METRIC:PERCENT, e.g. bandwidth:5%, "
                                     "clat_p99:10% or *:3% for every other metric")
            name = m["metric"]
            _check_name(name, "tolerance")
            if name in out:
                raise ToleranceError(f"tolerance {name!r} is given twice ({spec.strip()!r}); keep one")
            out[name] = float(m["number"]) / 100
    return out


def format_tolerance(value: float) -> str:
    """0.05 -> '5%'."""
    return f"{value * 100:g}%"


def tolerance_for(metric: str, tolerances: Mapping[str, float]) -> float:
    """The band of a metric: its exact name, else the longest matching pattern, else `*`, else 5 %."""
    if metric in tolerances:
        return tolerances[metric]
    patterns = [p for p in tolerances if p != "*" and _WILDCARDS & set(p) and fnmatch.fnmatchcase(metric, p)]
    if patterns:
        # the longest pattern is the most specific: clat_p9* wins over clat_*
        return tolerances[max(patterns, key=len)]
    return tolerances.get("*", DEFAULT_TOLERANCE)


def parse_metrics(selection: str | Iterable[str] | None) -> list[str] | None:
    """`["bandwidth", "clat_*"]` or `"bandwidth,clat_*"` -> checked names and patterns; `all` -> ["*"] (every
    metric and statistic); None or `primary` -> None (each tool's primary metrics, value or mean)."""
    if selection is None:
        return None
    items = [selection] if isinstance(selection, str) else list(selection)
    names = [n.strip() for item in items for n in str(item).split(",") if n.strip()]
    if "all" in names:
        return ["*"]
    names = [n for n in names if n != "primary"]
    for name in names:
        _check_name(name, "metric")
    return names or None


def selected(metric: str, selection: list[str] | None) -> bool:
    """Whether a metric is in a selection from parse_metrics."""
    return selection is None or any(fnmatch.fnmatchcase(metric, p) for p in selection)
