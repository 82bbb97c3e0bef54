"""Green / yellow / red verdicts against thresholds written in the scenario (seed 003's colours)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from fsbench.core.tidy import higher_is_better
from fsbench.core.units import parse_duration, parse_size


def parse_threshold(text: object) -> float:
    """'150MiB/s' -> B/s, '2ms' -> s, '5k' -> 5000 (op/s or a count), 80% -> 80."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    t = str(text).strip()
    if t.endswith("%"):
        return float(t[:-1])
    rate = t[:-2] if t.endswith("/s") else t
    if re.fullmatch(r"[0-9.]+\s*[kmgtKMGT]?i?[bB]", rate):
        return parse_size(rate)
    if re.fullmatch(r"[0-9.]+\s*(ns|us|ms|s|min|h)", rate):
        return parse_duration(rate)
    m = re.fullmatch(r"([0-9.]+)\s*([kKmMgG]?)", rate)
    if not m:
        raise ValueError(f"not a threshold: {text!r} (e.g. 150MiB/s, 2ms, 5k, 80%)")
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]


@dataclass(frozen=True)
class Threshold:
    """`good` and `poor` limits of one measurement; the direction follows the metric."""

    workload: str
    operation: str
    metric: str
    good: float
    poor: float

    def matches(self, workload: str, operation: str, metric: str) -> bool:
        return (self.workload in ("*", workload) and self.operation in ("*", operation)
                and self.metric == metric)

    def verdict(self, value: float) -> str:
        """'good' (green), 'fair' (yellow) or 'poor' (red).

        The limits say which way is better (good above poor: bigger is better), so a metric a
        plug-in adds needs no declaration here; equal limits follow the metric's vocabulary.
        """
        up = self.good > self.poor if self.good != self.poor else higher_is_better(self.metric)
        if up:
            return "good" if value >= self.good else "poor" if value <= self.poor else "fair"
        return "good" if value <= self.good else "poor" if value >= self.poor else "fair"


def thresholds_from(spec: dict | None) -> list[Threshold]:
    """`{"juicefs-bench.write_big_file.bandwidth": {good: 150MiB/s, poor: 50MiB/s}}` -> Thresholds."""
    out = []
    for key, limits in (spec or {}).items():
        workload, operation, metric = str(key).rsplit(".", 2)
        out.append(Threshold(workload, operation, metric, parse_threshold(limits["good"]),
                             parse_threshold(limits["poor"])))
    return out


def verdict_for(thresholds: list[Threshold], workload: str, operation: str, metric: str, value: float) -> str:
    """The verdict of the first matching threshold, or '' when none applies."""
    for t in thresholds:
        if t.matches(workload, operation, metric):
            return t.verdict(value)
    return ""
