"""Pure functions: sampler output -> a tidy time series and the case's summary rows (cpu_usage, memory_peak).

CPU is in % of one core (a busy 2-core host reads 200). A process name's CPU is the sum over all its
pids of utime+stime deltas; an interval counts for a name when one of its pids is there at the end of
it, so its mean is "while it ran". A pid born during an interval counts from its start time; a pid
seen before is matched by (pid, start time), so a reused pid is a new process. memory_peak of a
process is the highest sum of VmRSS over its pids, or its VmHWM when that peak was reached while
monitored (VmHWM counts since the process started, which may be long before this case).

The target's client (`#client`) is a scope of its own, named like it: only the pids of its name whose
command line holds its words (the mount point), so `juicefs bench` beside a JuiceFS mount is not the
client. A watched name that is also the client's keeps every pid of that name as `<name> (all)`.

A watched name counts this run's processes (those with the run's marker) when it has any; when it has
none, another target's name counts nothing (another run's client), and any other name counts them all,
its rows flagged in their `warnings` column (see fsbench.monitor.processes.owners).

A memory peak read from fewer than MIN_MEMORY_SAMPLES samples of RSS may have missed the real peak: its
row is flagged in its `warnings` column, unless the peak is the kernel's own VmHWM (exact, reached while
monitored). A watched name never seen is a warning only when the case expects it (`expected`: the
case's own target's client and processes, not another target's).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from fsbench.core.errors import ParseError
from fsbench.core.tidy import WARNINGS, ParseResult, measurement
from fsbench.monitor.processes import hwm_peaks, owners, proc_cpu, rss_by_name, scoping
from fsbench.monitor.samples import Raw, Sample, read_raw

TOOL = "monitor"
CLK_TCK = 100  # USER_HZ: the unit of /proc/PID/stat times on every mainstream Linux build
SECTOR_BYTES = 512  # /proc/diskstats counts 512-byte sectors whatever the device's block size
SERIES_COLUMNS = ["t", "host", "scope", "metric", "value", "unit"]
#: RSS samples a memory peak needs to be trusted (fewer: the row is flagged)
MIN_MEMORY_SAMPLES = 10
#: the shortest stretch a CPU peak (stat max) is averaged over: one dense interval (0.1 s, or the stop
#: sample's few ms) holds a handful of 10 ms ticks read some ms after /proc/uptime, so its rate can read
#: 150 % for one busy thread on a loaded host; over a second that jitter is a few per cent
PEAK_WINDOW_S = 1.0
# stacked or memory-backed devices: their IO is already counted on the disk underneath, or is no disk IO
_NOT_A_DISK = re.compile(r"^(loop|ram|zram|sr|fd|dm-|md)\d")


@dataclass
class Monitored:
    """Both tables from one raw file, plus what could not be used."""

    series: list[dict] = field(default_factory=list)
    summary: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    samples: int = 0


@dataclass
class _Scope:
    """Running totals for one scope: time-weighted CPU and the memory peak."""

    cpu_s: float = 0.0  # % x seconds
    span_s: float = 0.0
    pieces: list[tuple[float, float]] = field(default_factory=list)  # (% x seconds, seconds) per interval
    mem_peak: float | None = None
    mem_samples: int = 0  # samples that read its RSS
    mem_exact: bool = False  # the peak is a VmHWM reached while monitored, not a sampled RSS

    def cpu(self, pct: float, span: float) -> None:
        self.cpu_s += pct * span
        self.span_s += span
        self.pieces.append((pct * span, span))

    @property
    def cpu_max(self) -> float | None:
        """The highest mean CPU over consecutive intervals spanning PEAK_WINDOW_S or more (the whole mean
        when all of them span less): the peak of a rate depends on its window, so it has a fixed one."""
        return peak_rate(self.pieces, PEAK_WINDOW_S)

    def mem(self, value: float, *, sampled: bool = True) -> None:
        self.mem_samples += sampled
        if self.mem_peak is None or value > self.mem_peak or (not sampled and value == self.mem_peak):
            self.mem_exact = not sampled
        self.mem_peak = value if self.mem_peak is None else max(self.mem_peak, value)


def analyse(text: str, host: str, *, clk_tck: int = CLK_TCK, source: str = "monitor output",
            expected: Collection[str] | None = None) -> Monitored:
    """Raw sampler text -> time series and summary rows; ParseError only when no sample is complete.

    `expected`: the watched names whose absence is worth a warning (None: every one)."""
    raw = read_raw(text)
    if not raw.samples:
        what = "no complete sample: the sampler stopped before its first sample ended" if raw.header \
            else "not fsbench monitor output: no '#fsbench-monitor' header and no complete sample"
        raise ParseError(TOOL, source, what)
    out = Monitored(warnings=list(raw.warnings), samples=len(raw.samples))
    scopes: dict[str, _Scope] = {"host": _Scope()}
    owned = owners(raw, host, expected)
    scopes_of = scoping(raw, host, out.warnings, owned)
    t0 = raw.samples[0].t
    ncpu = _int(raw.header.get("ncpu"))

    def emit(s: Sample, scope: str, metric: str, value: float, unit: str) -> None:
        out.series.append({"t": round(s.t - t0, 3), "host": host, "scope": scope, "metric": metric,
                           "value": float(value), "unit": unit})

    prev: Sample | None = None
    for cur in raw.samples:
        used = _mem_used(cur)
        if used is not None:
            emit(cur, "host", "memory_used", used, "B")
            scopes["host"].mem(used)
        for name, rss in rss_by_name(cur, scopes_of).items():
            emit(cur, name, "memory_rss", rss, "B")
            scopes.setdefault(name, _Scope()).mem(rss)
        if prev is not None and cur.t > prev.t:
            dt = cur.t - prev.t
            pct = _host_cpu(prev, cur, ncpu, clk_tck, dt)
            if pct is not None:
                emit(cur, "host", "cpu_usage", pct, "%")
                scopes["host"].cpu(pct, dt)
            for metric, value in _rates(prev, cur, dt).items():
                emit(cur, "host", metric, value, "B/s")
            for name, (pct, span) in proc_cpu(prev, cur, clk_tck, scopes_of, t0).items():
                emit(cur, name, "cpu_usage", pct, "%")
                scopes.setdefault(name, _Scope()).cpu(pct, span)
        prev = cur
    for name, peak in hwm_peaks(raw, clk_tck, scopes_of).items():
        scopes.setdefault(name, _Scope()).mem(peak, sampled=False)
    out.summary = _summary(scopes, host, owned.doubts)
    out.warnings += _coverage_warnings(raw, scopes, host, expected)
    return out


def parse_result(text: str, host: str, *, clk_tck: int = CLK_TCK, source: str = "monitor output") -> ParseResult:
    """Summary rows as a ParseResult; the time series is in meta['series']."""
    m = analyse(text, host, clk_tck=clk_tck, source=source)
    return ParseResult(rows=m.summary, warnings=m.warnings, meta={"series": m.series, "samples": m.samples})


def timeseries(text: str, host: str, *, clk_tck: int = CLK_TCK) -> list[dict]:
    """Raw sampler text -> rows of t, host, scope, metric, value, unit."""
    return analyse(text, host, clk_tck=clk_tck).series


def summary(text: str, host: str, *, clk_tck: int = CLK_TCK) -> list[dict]:
    """Raw sampler text -> tidy rows: cpu_usage mean/max and memory_peak max per scope."""
    return analyse(text, host, clk_tck=clk_tck).summary


def peak_rate(pieces: list[tuple[float, float]], window: float) -> float | None:
    """The highest amount / seconds over runs of consecutive (amount, seconds) pieces spanning at least
    `window` (so never below the overall rate); None without pieces, the overall rate when they span
    less than `window` altogether.

    A run spanning 2 x window plus the longest piece or more splits, at a piece's edge, into two that
    each span the window, one of them at least as busy: so only shorter runs need trying."""
    total_span = sum(s for _, s in pieces)
    if total_span <= 0:
        return None
    if total_span <= window:
        return sum(a for a, _ in pieces) / total_span
    limit = 2 * window + max(s for _, s in pieces)
    window -= 1e-9 * window  # ten 0.1 s pieces add up to 0.9999999999999999 s
    best = 0.0
    for i in range(len(pieces)):
        amount = span = 0.0
        for j in range(i, len(pieces)):  # by index: a slice would copy the rest of a long case's samples
            a, s = pieces[j]
            amount, span = amount + a, span + s
            if span >= window:
                best = max(best, amount / span)
            if span >= limit:
                break
    return best


def delta(before: int, after: int) -> int | None:
    """after - before for a counter; a 32-bit wrap is undone, a reset gives None."""
    if after >= before:
        return after - before
    wrapped = after + 2**32 - before
    return wrapped if before < 2**32 and wrapped < 2**31 else None


def _host_cpu(prev: Sample, cur: Sample, ncpu: int, clk_tck: int, dt: float) -> float | None:
    if not prev.cpu or not cur.cpu:
        return None
    n = min(len(prev.cpu), len(cur.cpu), 8)  # user..steal; guest time is already inside user
    if n < 4:
        return None
    d = [x for a, b in zip(prev.cpu[:n], cur.cpu[:n]) if (x := delta(a, b)) is not None]
    if len(d) < n:  # a counter was reset
        return None
    total = sum(d)
    idle = d[3] + (d[4] if n > 4 else 0)
    if total <= 0:
        return None
    if ncpu > 0:  # ratio of the host's own ticks: immune to the jitter of when uptime was read
        return 100.0 * ncpu * (total - idle) / total
    return 100.0 * (total - idle) / (clk_tck * dt)


def _rates(prev: Sample, cur: Sample, dt: float) -> dict[str, float]:
    out: dict[str, float] = {}
    disks = _whole_disks(cur.disks.keys() & prev.disks.keys())
    for i, metric in ((0, "disk_read"), (1, "disk_write")):
        ds = [x for k in disks if (x := delta(prev.disks[k][i], cur.disks[k][i])) is not None]
        if disks and len(ds) == len(disks):  # none reset
            out[metric] = sum(ds) * SECTOR_BYTES / dt
    nets = [k for k in cur.nets.keys() & prev.nets.keys() if k != "lo"]
    for i, metric in ((0, "net_rx"), (1, "net_tx")):
        ds = [x for k in nets if (x := delta(prev.nets[k][i], cur.nets[k][i])) is not None]
        if nets and len(ds) == len(nets):  # none reset
            out[metric] = sum(ds) / dt
    return out


def _whole_disks(names: set[str]) -> list[str]:
    """Devices to sum: not partitions of another listed device (sda1, nvme0n1p2), not stacked or virtual."""
    real = {n for n in names if not _NOT_A_DISK.match(n)}
    parts = {n for n in real for base in real
             if n != base and n.startswith(base) and re.fullmatch(r"p?\d+", n[len(base):])}
    return sorted(real - parts)


def _mem_used(s: Sample) -> float | None:
    m = s.mem
    if "MemTotal" not in m:
        return None
    used = None
    if "MemAvailable" in m:
        used = float(m["MemTotal"] - m["MemAvailable"])
    elif all(k in m for k in ("MemFree", "Buffers", "Cached")):  # kernels before 3.14
        used = float(m["MemTotal"] - m["MemFree"] - m["Buffers"] - m["Cached"])
    # a damaged meminfo (a cut-off line) can make it negative: no figure beats a wrong one
    return used if used is not None and used >= 0 else None


def _summary(scopes: dict[str, _Scope], host: str, doubts: dict[str, str]) -> list[dict]:
    """cpu_usage mean/max and memory_peak per scope; `doubts`: scope -> why its rows may not be this run's."""
    rows = []
    for scope, acc in scopes.items():
        op = "host" if scope == "host" else "process"
        mine: list[dict] = []
        peak = acc.cpu_max
        if acc.span_s > 0 and peak is not None:
            mine.append(measurement(TOOL, op, "cpu_usage", acc.cpu_s / acc.span_s, host=host, job=scope, stat="mean"))
            mine.append(measurement(TOOL, op, "cpu_usage", peak, host=host, job=scope, stat="max"))
        if acc.mem_peak is not None:
            row = measurement(TOOL, op, "memory_peak", acc.mem_peak, host=host, job=scope, stat="max")
            if not acc.mem_exact and acc.mem_samples < MIN_MEMORY_SAMPLES:
                row[WARNINGS] = (f"memory peak of {scope} on {host} from {acc.mem_samples} samples of its RSS "
                                 f"(fewer than {MIN_MEMORY_SAMPLES}): the real peak may lie between them")
            mine.append(row)
        if scope in doubts:  # beside each of its numbers, in the row's own warnings column
            for row in mine:
                row[WARNINGS] = "; ".join(t for t in (doubts[scope], row.get(WARNINGS)) if t)
        rows += mine
    return rows


def _coverage_warnings(raw: Raw, scopes: dict[str, _Scope], host: str,
                       expected: Collection[str] | None) -> list[str]:
    out = []
    if len(raw.samples) < 2:
        out.append("only one complete sample: no CPU usage or rates (the case was shorter than the interval)")
    client = raw.client.name if raw.client else None
    for name in [*raw.watched, *([client] if client and client not in raw.watched else [])]:
        if expected is not None and name not in expected:
            continue  # another target's process: its absence from this case is normal
        if name not in scopes and f"{name} (all)" not in scopes:
            out.append(f"process {name!r} was never seen on {host} (names match /proc/PID/comm, 15 characters)")
    return out


def _int(text: str | None) -> int:
    return int(text) if text and text.isdigit() else 0
