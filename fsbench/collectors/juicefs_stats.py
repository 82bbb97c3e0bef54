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

Means cover the case's tool's run, not the idle seconds around it: the session times each output line
as it arrives (a line covers the interval before it), the samples whose interval overlaps the tool's run
are summed, and a mean is that sum times the interval over the tool's duration (for a rate: what moved
while the tool ran, per second of it); a latency is weighted by its count over those samples; a max is
the highest of them. Without the tool's times (a parse of a file alone) every sample counts; when no
sample fell in the tool's run, every sample counts too and the mean rows say so in their warnings column.

The output is read line by line and the rows come from running sums, so a long case costs little
memory; its series keeps at most MAX_SAMPLES samples (beyond, every 2nd, 4th... sample, with a
warning), while the rows use every sample.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fsbench.api.collectors import Collected, CollectorKind, CollectorSpec, ToolWindow
from fsbench.core.tidy import WARNINGS, measurement
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

    def check(self, collector: CollectorSpec) -> list[tuple[tuple, str, str]]:
        return []

    def command(self, collector: CollectorSpec, values: dict[str, str]) -> list[str]:
        options = dict(collector.options)
        interval = collector.interval_s
        return [str(options.get("binary", "juicefs")), "stats", values["target.path"],
                "--verbosity", str(options.get("verbosity", 1)), "--interval", f"{max(1, round(interval))}"]

    def after(self, collector: CollectorSpec, output: str) -> list[str] | None:
        return None

    def tail_s(self, collector: CollectorSpec) -> float:
        """After the case, one more interval: the line that counts its last operations."""
        return max(1, round(collector.interval_s)) + 0.3

    def parse(self, collector: CollectorSpec, output: str, after: str | None, host: str) -> Collected:
        return self.parse_window(collector, output, after, host, None)

    def parse_window(self, collector: CollectorSpec, output: str | Iterable[str], after: str | Iterable[str] | None,
                     host: str, window: ToolWindow | None) -> Collected:
        """The output as a text or as the lines of its file (read as a stream); means over `window`."""
        name = collector.name or "stats"
        interval = float(max(1, round(collector.interval_s)))
        return parse_stats(output, host, name, interval, window)


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


def parse_stats(text: str | Iterable[str], host: str, name: str, interval: float,
                window: ToolWindow | None = None) -> Collected:
    """The series and the mean / max rows of one host's `juicefs stats` output: a text, or the lines of a
    file read as a stream (only running sums and at most MAX_SAMPLES samples are held); with the tool's
    `window`, the rows cover the samples of its run."""
    lines = text.splitlines() if isinstance(text, str) else split_lines(text)
    got = Collected()
    summary: _Summary | None = None
    first: str | None = None
    previous: str | None = None
    n = -1  # the index of `previous` among the output's lines (line_times count every line)
    for raw in lines:
        line = ANSI.sub("", raw).rstrip()
        if first is None:
            first = line
        if previous is not None:
            summary = _step(summary, previous, line, got.warnings, _in_window(window, n, interval))
        previous = line
        n += 1
    if previous is not None:
        summary = _step(summary, previous, None, got.warnings, _in_window(window, n, interval))
    if summary is None:
        raise ValueError("no juicefs stats header found" + (f"; the output starts with {first[:120]!r}"
                                                               if first else ": the output is empty"))
    return summary.finish(got, host, name, interval, window)


def _in_window(window: ToolWindow | None, line: int, interval: float) -> bool:
    """Whether a sample line's interval (the `interval` before it arrived) overlaps the tool's run."""
    if window is None:
        return False
    t = window.time_of(line)
    return t is not None and t > 0 and t - interval < window.duration_s


def _step(summary: _Summary | None, line: str, following: str | None, warnings: list[str],
          in_window: bool = False) -> _Summary | None:
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
    summary.add([float(m.group(1)) * _SUFFIX[m.group(2)] for m in values if m], in_window)
    return summary


class _Sums:
    """Per column the sum and the maximum of some samples (a latency's sums weighted by its count column)."""

    def __init__(self, width: int, weighted: dict[int, int | None]) -> None:
        self.count = 0
        self.total = [0.0] * width
        self.top: list[float] = []
        self.weight_of = weighted  # latency column -> the count column it is weighted by (None: none)
        self.weighted: dict[int, list[float]] = {j: [0.0, 0.0] for j in weighted}

    def add(self, values: list[float]) -> None:
        self.count += 1
        if self.count == 1:
            self.top = list(values)
        for j, v in enumerate(values):
            self.total[j] += v
            if v > self.top[j]:
                self.top[j] = v
        for j, sums in self.weighted.items():
            k = self.weight_of[j]
            w = values[k] if k is not None else 1.0
            sums[0] += values[j] * w
            sums[1] += w


class _Summary:
    """What the samples under one header add up to: the sums of all samples and of those in the tool's
    run, and the samples kept for the series (every `stride`-th)."""

    def __init__(self, columns: list[str]) -> None:
        self.columns = columns
        self.meaning = _meaning(columns)
        self.kept: list[tuple[int, list[float]]] = []
        self.stride = 1
        counts: dict[str, int] = {}
        weighted: dict[int, int | None] = {}
        for j, (op, metric, _unit) in enumerate(self.meaning):
            if metric == "rate":
                counts[op] = j
            elif metric == "latency_mean":
                weighted[j] = counts.get(op)
        self.all = _Sums(len(columns), weighted)
        self.run = _Sums(len(columns), weighted)

    @property
    def count(self) -> int:
        return self.all.count

    def add(self, values: list[float], in_window: bool = False) -> None:
        """One sample (a value per column), and whether its interval overlaps the tool's run."""
        self.all.add(values)
        if in_window:
            self.run.add(values)
        if (self.count - 1) % self.stride == 0:
            self.kept.append((self.count, values))
            if len(self.kept) > MAX_SAMPLES:  # thin out: every other one kept, twice the stride from now on
                self.kept = self.kept[::2]
                self.stride *= 2

    def finish(self, got: Collected, host: str, name: str, interval: float,
               window: ToolWindow | None = None) -> Collected:
        """The series of the kept samples and the rows: over the tool's run when known, else all samples."""
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
        sums, flag = self.all, ""
        if window is not None and self.run.count and window.duration_s > 0:
            sums = self.run
        elif window is not None:
            flag = (f"no juicefs stats sample fell in the tool's {window.duration_s:.2f} s run: "
                    f"means over all {self.count} samples, idle ones included")
            got.warnings.append(f"juicefs stats: {flag}")
        for j, (op, metric, unit) in enumerate(self.meaning):
            if metric == "latency_mean":
                weighted, total = sums.weighted[j]
                if total > 0:
                    got.rows.append(measurement(TOOL, op, metric, weighted / total / 1000.0, host=host, job=name,
                                                stat="mean", unit=unit))
                continue
            # a peak is one value (stat `value`), beside the mean and max of the rates and percentages
            for stat in (("value",) if metric == "memory_peak" else ("mean", "max")):
                if stat != "mean":
                    value = sums.top[j]
                elif sums is self.run and window is not None:
                    # what moved in the samples of the run, per second of the run
                    value = sums.total[j] * interval / window.duration_s
                else:
                    value = sums.total[j] / sums.count
                row = measurement(TOOL, op, metric, value, host=host, job=name, stat=stat, unit=unit)
                if stat == "mean" and flag:
                    row[WARNINGS] = flag
                got.rows.append(row)
        return got


PLUGIN: CollectorKind = JuiceFSStats()
