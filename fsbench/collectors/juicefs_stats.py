"""`juicefs stats MOUNT` beside a case: the client's own counters every interval (usage, FUSE, metadata,
block cache, object store), as a time series and as mean / max rows.

Columns are read from the output's own two-line header (`---usage--- ---fuse---` over `cpu mem ...|
ops lat ...`), so every verbosity works. Units: cpu %, mem/buf/cache bytes (K, M, G are binary),
ops, txn, retry and *_c per second, lat milliseconds (per operation of the column before it),
read/write/get/put bytes per second. Rows (tool `juicefs-stats`, job = the collector's name):

  usage.cpu -> client cpu_usage (mean, max)
  usage.mem|buf|cache -> client|client_buf|client_cache memory_peak (the highest: stat value)
  <group>.ops -> <group> rate (mean, max)        lat -> the previous count's operation, latency_mean (weighted by it)
  <group>.txn|retry -> <group>_txn|_retry rate   <group>.get_c|put_c|del_c -> <group>_get|_put|_del rate
  <group>.read|write|get|put -> <group>_read|... bandwidth (mean, max)
"""

from __future__ import annotations

import re

from fsbench.collectors.base import Collected
from fsbench.tidy import measurement

TOOL = "juicefs-stats"
_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}
_VALUE = re.compile(r"^(-?\d+(?:\.\d+)?)([KMGTP]?)(%?)$")
_GROUP = re.compile(r"-*([A-Za-z]+)-*")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


class JuiceFSStats:
    """`juicefs stats <target path> --verbosity N --interval S`."""

    name = "juicefs-stats"
    tool = TOOL
    target_kinds = ("juicefs",)
    #: how reports show its rows: in the order of its columns, by these metrics
    operations = ("client", "client_buf", "client_cache", "fuse", "fuse_read", "fuse_write", "meta", "meta_txn",
                  "meta_retry", "blockcache_read", "blockcache_write", "object_get", "object_put", "object_del")
    primary_metrics = ("rate", "bandwidth", "latency_mean", "cpu_usage", "memory_peak")
    #: its sections' figures as columns, for a view with `columns: metrics`
    columns = (("Ops", ("rate",)), ("Throughput", ("bandwidth",)), ("Latency", ("latency_mean",)),
               ("CPU", ("cpu_usage",)), ("Memory", ("memory_peak",)))

    def check(self, collector: object) -> list[tuple[tuple, str, str]]:
        return []

    def command(self, collector: object, values: dict[str, str]) -> list[str]:
        options = dict(getattr(collector, "options", {}) or {})
        interval = getattr(collector, "interval_s", 1.0)
        return [str(options.get("binary", "juicefs")), "stats", values["target.path"],
                "--verbosity", str(options.get("verbosity", 1)), "--interval", f"{max(1, round(interval))}"]

    def after(self, collector: object, output: str) -> list[str] | None:
        return None

    def tail_s(self, collector: object) -> float:
        """After the case, one more interval: the line that counts its last operations."""
        return max(1, round(getattr(collector, "interval_s", 1.0))) + 0.3

    def parse(self, collector: object, output: str, after: str | None, host: str) -> Collected:
        name = str(getattr(collector, "name", "stats"))
        interval = float(max(1, round(getattr(collector, "interval_s", 1.0))))
        return parse_stats(output, host, name, interval)


def _columns(groups_line: str, names_line: str) -> list[str]:
    """`group.column` for every column, from the two header lines (groups span their columns' width)."""
    spans = [(m.start(), m.end(), m.group(1)) for m in _GROUP.finditer(groups_line)]
    out = []
    for m in re.finditer(r"\S+", names_line.replace("|", " ")):
        col = m.group(0)
        group = next((g for start, end, g in spans if start <= m.start() < end + 1), "")
        out.append(f"{group}.{col}" if group else col)
    return out


def _number(text: str) -> float:
    m = _VALUE.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a juicefs stats value")
    return float(m.group(1)) * _SUFFIX[m.group(2)]


def _meaning(columns: list[str]) -> list[tuple[str, str, str]]:
    """(operation, metric, unit) of each column; a `lat` belongs to the count column before it."""
    out: list[tuple[str, str, str]] = []
    last_count = ""
    for column in columns:
        group, _, col = column.rpartition(".")
        if group == "usage":
            if col == "cpu":
                out.append(("client", "cpu_usage", "%"))
            else:
                out.append(("client" if col == "mem" else f"client_{col}", "memory_peak", "B"))
        elif col == "lat":
            out.append((last_count or group, "latency_mean", "s"))
        elif col == "ops" or col in ("txn", "retry") or col.endswith("_c"):
            last_count = group if col == "ops" else f"{group}_{col.removesuffix('_c')}"
            out.append((last_count, "rate", "op/s"))
        else:
            out.append((f"{group}_{col}", "bandwidth", "B/s"))
    return out


def parse_stats(text: str, host: str, name: str, interval: float) -> Collected:
    """The series and the mean / max rows of one host's `juicefs stats` output."""
    got = Collected()
    lines = [_ANSI.sub("", raw).rstrip() for raw in text.splitlines()]
    columns: list[str] = []
    samples: list[list[float]] = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("-") and i + 1 < len(lines) and "|" in lines[i + 1]:
            columns = _columns(line, lines[i + 1])
        elif columns and "|" in line and all(_VALUE.match(c) for c in line.replace("|", " ").split()):
            cells = line.replace("|", " ").split()
            if len(cells) != len(columns):
                got.warnings.append(f"juicefs stats: a line with {len(cells)} values for {len(columns)} columns, "
                                    "left out")
                continue
            try:
                samples.append([_number(c) for c in cells])
            except ValueError as exc:
                got.warnings.append(f"juicefs stats: {exc}; line left out")
    if not columns:
        raise ValueError("no juicefs stats header found" + (f"; the output starts with {lines[0][:120]!r}"
                                                               if lines and lines[0] else ": the output is empty"))
    meaning = _meaning(columns)
    for n, values in enumerate(samples, start=1):
        for column, (_op, _metric, unit), value in zip(columns, meaning, values):
            scaled = value / 1000.0 if unit == "s" else value  # lat is printed in ms
            got.series.append({"t": n * interval, "host": host, "scope": name, "metric": column, "value": scaled,
                               "unit": unit})
    if not samples:
        got.warnings.append("juicefs stats printed no sample (the case was shorter than its interval?)")
        return got
    counts: dict[str, int] = {}
    for j, (op, metric, unit) in enumerate(meaning):
        series = [row[j] for row in samples]
        if metric == "latency_mean":
            weight = [row[counts[op]] for row in samples] if op in counts else [1.0] * len(series)
            total = sum(weight)
            if total > 0:
                mean = sum(v * w for v, w in zip(series, weight)) / total / 1000.0
                got.rows.append(measurement(TOOL, op, metric, mean, host=host, job=name, stat="mean", unit=unit))
            continue
        if metric == "rate":
            counts[op] = j
        # a peak is one value (stat `value`), beside the mean and max of the rates and percentages
        stats = ("value",) if metric == "memory_peak" else ("mean", "max")
        for stat in stats:
            value = sum(series) / len(series) if stat == "mean" else max(series)
            got.rows.append(measurement(TOOL, op, metric, value, host=host, job=name, stat=stat, unit=unit))
    return got


PLUGIN = JuiceFSStats()
