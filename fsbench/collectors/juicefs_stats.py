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

The output is read line by line and the rows come from running sums, so a long case costs little
memory; its series keeps at most MAX_SAMPLES samples (beyond, every 2nd, 4th... sample, with a
warning), while the rows use every sample.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fsbench.collectors.base import Collected
from fsbench.tidy import measurement
from fsbench.tools.common import ANSI, split_lines

TOOL = "juicefs-stats"
_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}
_VALUE = re.compile(r"^(-?\d+(?:\.\d+)?)([KMGTP]?)(%?)$")
_GROUP = re.compile(r"-*([A-Za-z]+)-*")
#: samples kept for the series (an hour at the default 1 s interval); a longer output's series keeps every
#: 2nd, 4th... sample, its rows still use them all
MAX_SAMPLES = 3600


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
        return self.parse_lines(collector, output, after, host)

    def parse_lines(self, collector: object, output: str | Iterable[str], after: str | Iterable[str] | None,
                    host: str) -> Collected:
        """The output as a text or as the lines of its file (read as a stream)."""
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


def parse_stats(text: str | Iterable[str], host: str, name: str, interval: float) -> Collected:
    """The series and the mean / max rows of one host's `juicefs stats` output: a text, or the lines of a
    file read as a stream (only running sums and at most MAX_SAMPLES samples are held)."""
    lines = text.splitlines() if isinstance(text, str) else split_lines(text)
    got = Collected()
    summary: _Summary | None = None
    first: str | None = None
    previous: str | None = None
    for raw in lines:
        line = ANSI.sub("", raw).rstrip()
        if first is None:
            first = line
        if previous is not None:
            summary = _step(summary, previous, line, got.warnings)
        previous = line
    if previous is not None:
        summary = _step(summary, previous, None, got.warnings)
    if summary is None:
        raise ValueError("no juicefs stats header found" + (f"; the output starts with {first[:120]!r}"
                                                               if first else ": the output is empty"))
    return summary.finish(got, host, name, interval)


def _step(summary: _Summary | None, line: str, following: str | None, warnings: list[str]) -> _Summary | None:
    """One line of the output, knowing the one after it (a header is two lines): the summary from then on."""
    if line.lstrip().startswith("-") and following is not None and "|" in following:
        columns = _columns(line, following)
        if summary is not None and columns == summary.columns:
            return summary  # juicefs stats prints its header again now and then
        if summary is not None and summary.count:
            warnings.append(f"juicefs stats: its columns changed after {summary.count} samples; those are left out")
        return _Summary(columns)
    if summary is None or "|" not in line:
        return summary
    values = [_VALUE.match(c) for c in line.replace("|", " ").split()]
    if not all(values):
        return summary  # not a sample line
    if len(values) != len(summary.columns):
        warnings.append(f"juicefs stats: a line with {len(values)} values for {len(summary.columns)} columns, "
                        "left out")
        return summary
    summary.add([float(m.group(1)) * _SUFFIX[m.group(2)] for m in values if m])
    return summary


class _Summary:
    """What the samples under one header add up to: per column the sum and the maximum (a latency's sums
    weighted by its count column), and the samples kept for the series (every `stride`-th)."""

    def __init__(self, columns: list[str]) -> None:
        self.columns = columns
        self.meaning = _meaning(columns)
        self.count = 0
        self.total = [0.0] * len(columns)
        self.top: list[float] = []
        self.weight_of: dict[int, int] = {}  # latency column -> the count column it is weighted by
        self.weighted: dict[int, list[float]] = {}  # latency column -> [sum of value x weight, sum of weights]
        self.kept: list[tuple[int, list[float]]] = []
        self.stride = 1
        counts: dict[str, int] = {}
        for j, (op, metric, _unit) in enumerate(self.meaning):
            if metric == "rate":
                counts[op] = j
            elif metric == "latency_mean":
                if op in counts:
                    self.weight_of[j] = counts[op]
                self.weighted[j] = [0.0, 0.0]

    def add(self, values: list[float]) -> None:
        """One sample (a value per column)."""
        self.count += 1
        if self.count == 1:
            self.top = list(values)
        for j, v in enumerate(values):
            self.total[j] += v
            if v > self.top[j]:
                self.top[j] = v
        for j, sums in self.weighted.items():
            w = values[self.weight_of[j]] if j in self.weight_of else 1.0
            sums[0] += values[j] * w
            sums[1] += w
        if (self.count - 1) % self.stride == 0:
            self.kept.append((self.count, values))
            if len(self.kept) > MAX_SAMPLES:  # thin out: every other one kept, twice the stride from now on
                self.kept = self.kept[::2]
                self.stride *= 2

    def finish(self, got: Collected, host: str, name: str, interval: float) -> Collected:
        """The series of the kept samples and the rows of all of them."""
        for n, values in self.kept:
            for column, (_op, _metric, unit), value in zip(self.columns, self.meaning, values):
                scaled = value / 1000.0 if unit == "s" else value  # lat is printed in ms
                got.series.append({"t": n * interval, "host": host, "scope": name, "metric": column, "value": scaled,
                                   "unit": unit})
        if self.stride > 1:
            got.warnings.append(f"juicefs stats: {self.count} samples; the series keeps every {self.stride}th "
                                f"({len(self.kept)}), the mean and max rows use them all")
        if not self.count:
            got.warnings.append("juicefs stats printed no sample (the case was shorter than its interval?)")
            return got
        for j, (op, metric, unit) in enumerate(self.meaning):
            if metric == "latency_mean":
                weighted, total = self.weighted[j]
                if total > 0:
                    got.rows.append(measurement(TOOL, op, metric, weighted / total / 1000.0, host=host, job=name,
                                                stat="mean", unit=unit))
                continue
            # a peak is one value (stat `value`), beside the mean and max of the rates and percentages
            stats = ("value",) if metric == "memory_peak" else ("mean", "max")
            for stat in stats:
                value = self.total[j] / self.count if stat == "mean" else self.top[j]
                got.rows.append(measurement(TOOL, op, metric, value, host=host, job=name, stat=stat, unit=unit))
        return got


PLUGIN = JuiceFSStats()
