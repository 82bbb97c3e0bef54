"""fio normal (human) output, fio 2.x and 3.x, local and client/server -> tidy rows.

Rows have the shape parse_json emits (same metrics, units, host/job/job_index/groupid), built by
rows_from_jobs(), which parse_terse shares. "ops" comes from the `issued rwts: total=r,w,t,s` line
(the same counter as JSON's total_ios). Host is "" (per-server blocks do not name their server) and
"all" for All clients. Run status group lines are group summaries and Disk stats are not
measurements: both are skipped. A direction whose block the output ends inside is left out with a
warning (its percentiles may be cut). With --status-interval (a job block repeated with the same pid)
only the last report counts; not detected in client/server output, where servers may share pids.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from fsbench.errors import ParseError
from fsbench.tidy import ParseResult, measurement
from fsbench.tools.fio.parse_json import _ERRNO  # one errno table for every fio parser
from fsbench.units import parse_count, parse_size

TOOL = "fio"
#: metric order of parse_json, so the text parsers' rows line up with the JSON parser's
METRIC_ORDER = (
    "bandwidth", "iops", "io_bytes", "ops", "runtime", "clat_mean", "clat_min", "clat_max", "clat_stddev",
    "clat_p50", "clat_p90", "clat_p95", "clat_p99", "clat_p99.9", "lat_mean", "slat_mean",
)
#: percentile (as printed) -> metric; only these are kept, as in parse_json
PERCENTILES = {50.0: "clat_p50", 90.0: "clat_p90", 95.0: "clat_p95", 99.0: "clat_p99", 99.9: "clat_p99.9"}
#: power of ten of each time unit in seconds
_EXP = {"nsec": -9, "usec": -6, "msec": -3, "sec": 0}
_SUFFIX_EXP = {"k": 3, "m": 6, "g": 9, "t": 12}
_DIRECTIONS = ("read", "write", "trim")

_N = r"\d+(?:\.\d+)?"
_NK = _N + r"[kKMGT]?"  # fio's suffixed counts: 101k, 1632.2k
_HOST_PREFIX = re.compile(r"^<[^<>\s]*> ?")  # client/server: `<hostname> ` before server log lines
_VERSION = re.compile(r"^(fio-\d[\w.+-]*)\s*$|\bfio=(fio-\d[\w.+-]*)")
_JOB = re.compile(r"^(?P<name>.*?): \(groupid=(?P<gid>\d+), jobs=\d+\): err=\s*(?P<err>-?\d+)(?P<rest>.*)$")
_PID = re.compile(r"pid=(\d+)")
_ERRTEXT = re.compile(r"error=([^)]*)\)")
# fio 3.x: `read: IOPS=36.5k, BW=142MiB/s (149MB/s)(22.2MiB/156msec)`; All clients: `BW=200Mi (210M)`
_DIR3 = re.compile(
    rf"^\s*(?P<op>read|write|trim)\s*: IOPS=(?P<iops>{_NK}), BW=(?P<bw>{_N})(?P<bwu>[kKMGTPE]?i?)(?:B/s)?"
    rf"(?:\s*\([^()]*\))?\s*\((?P<io>{_N})(?P<iou>[kKMGTPE]?i?B)/(?P<rt>{_N})(?P<rtu>[mun]?sec)\)"
)
# fio 2.x: `read : io=1024.0MB, bw=104857KB/s, iops=26214, runt= 10000msec` (KB = 1024 there)
_DIR2 = re.compile(
    rf"^\s*(?P<op>read|write|trim)\s*:\s*io=\s*(?P<io>{_N})\s*(?P<iou>[kKMGTPE]?i?B),\s*"
    rf"bw=\s*(?P<bw>{_N})\s*(?P<bwu>[kKMGTPE]?i?B)/s,\s*iops=\s*(?P<iops>{_NK}),\s*"
    rf"runt=\s*(?P<rt>{_N})\s*(?P<rtu>[mun]?sec)"
)
_DIR_LIKE = re.compile(r"^\s*(read|write|trim)\s*:")
_STAT = re.compile(
    rf"^\s*(?P<kind>clat|slat|lat)\s*\((?P<unit>[nmu]?sec)\)\s*:\s*min=\s*(?P<min>{_NK})\s*,\s*"
    rf"max=\s*(?P<max>{_NK})\s*,\s*avg=\s*(?P<avg>{_NK})\s*,\s*stdev=\s*(?P<dev>{_NK})"
)
_PCT_HEAD = re.compile(r"^\s*(?P<kind>clat|lat|slat)\s+percentiles\s*\((?P<unit>[nmu]?sec)\)\s*:")
_PCT_ITEM = re.compile(rf"({_N})th=\[\s*({_NK})\s*\]")
_SAMPLES = re.compile(r"^\s*(?:bw|iops)\s*[(:]")  # per-sample bw/iops summaries: not measurements
_ISSUED = re.compile(r"^\s*issued\b[^:]*:\s*total=(?P<total>\S+)")


@dataclass
class ParsedDirection:
    """One direction block of one job: metric -> value in canonical units."""

    op: str
    values: dict[str, float] = field(default_factory=dict)
    complete: bool = False


@dataclass
class ParsedJob:
    """One job (or All clients) block, before it becomes rows."""

    name: str
    groupid: int
    error: int = 0
    error_text: str = ""
    pid: int = 0
    directions: list[ParsedDirection] = field(default_factory=list)
    ops: dict[str, float] = field(default_factory=dict)


def rows_from_jobs(jobs: list[ParsedJob], out: ParseResult) -> None:
    """Rows of complete directions that moved data, named and indexed the way parse_json does."""
    names_by_group: dict[int, set[str]] = {}
    for job in jobs:
        if job.name != "All clients":
            names_by_group.setdefault(job.groupid, set()).add(job.name)
    seen: Counter = Counter()
    for job in jobs:
        aggregate = job.name == "All clients"
        host, name = ("all", job.name) if aggregate else ("", job.name)
        if aggregate:  # the aggregate takes its group's job name when there is just one
            names = names_by_group.get(job.groupid, set())
            name = next(iter(names)) if len(names) == 1 else "all"
        index = seen[(host, name)]
        seen[(host, name)] += 1
        if job.error:
            label = _ERRNO.get(job.error, job.error_text or f"errno {job.error}")
            out.warnings.append(f"fio job {name!r}{' on ' + host if host else ''} ended with "
                                f"error={job.error} ({label})")
        extra = {"job_index": index, "groupid": job.groupid}
        for d in job.directions:
            values = dict(d.values)
            if d.op in job.ops:
                values["ops"] = job.ops[d.op]
            if not d.complete or not (values.get("io_bytes", 0) > 0 or values.get("ops", 0) > 0):
                continue  # a direction is reported only when it moved data
            for metric in METRIC_ORDER:
                value = values.get(metric)
                if value is not None and math.isfinite(value):
                    out.rows.append(measurement(TOOL, d.op, metric, value, host=host, job=name, **extra))


def parse_text(text: str, source: str = "<string>") -> ParseResult:
    """Parse fio's normal output; ParseError when it holds no complete result block."""
    parser = _Parser(client_server=bool(re.search(r"^(?:<[^<>\s]*>|All clients: |hostname=)", text, re.M)))
    lines = text.splitlines()
    cut = bool(text) and not text.endswith(("\n", "\r"))
    for no, raw in enumerate(lines, 1):
        line = _HOST_PREFIX.sub("", raw, count=1)
        if cut and no == len(lines) and not (_JOB.match(line) or _DIR_LIKE.match(line)):
            continue  # a line cut short cannot tell that the block before it is complete
        try:
            parser.feed(line)
        except (ValueError, OverflowError) as exc:
            parser.out.warnings.append(f"line {no}: cannot read {line.strip()[:80]!r} ({exc})")
    parser.close(cut)
    out = parser.out
    if not parser.jobs:
        raise ParseError(TOOL, source, _no_result_reason(text))
    rows_from_jobs(parser.jobs, out)
    if not out.rows:
        if not any(d.complete for j in parser.jobs for d in j.directions) and parser.truncated:
            raise ParseError(TOOL, source, "the output ends before the first result block is complete "
                                           "(cut off, or fio was killed?)")
        if not out.warnings:
            out.warnings.append("fio moved no data in any job")
    return out


def _no_result_reason(text: str) -> str:
    if not text.strip():
        return "the output is empty: fio printed no result (option error or killed?)"
    first = text.strip().splitlines()[0][:200]
    return f"no fio result block (`<job>: (groupid=N, jobs=M): err= 0: ...`) found; the output starts with: {first!r}"


class _Parser:
    """Line-by-line state: the current job, direction and percentile block."""

    def __init__(self, client_server: bool):
        self.client_server = client_server
        self.out = ParseResult(meta={"fio_version": "", "reports": 0})
        self.jobs: list[ParsedJob] = []
        self.job: ParsedJob | None = None
        self.dir: ParsedDirection | None = None
        self.pct_exp: int | None = None  # set while inside a percentile block (None: not clat)
        self.in_pct = False
        self.identities: set[tuple[str, int, int]] = set()
        self.truncated = False
        self.earlier_reports = 0

    def feed(self, line: str) -> None:
        if not self.out.meta["fio_version"] and (v := _VERSION.search(line)):
            self.out.meta["fio_version"] = v.group(1) or v.group(2)
        if m := _JOB.match(line):
            self._end_direction()
            self._start_job(m)
        elif self.job is None:
            return
        elif m := (_DIR3.match(line) or _DIR2.match(line)):
            self._end_direction()
            self.dir = _direction(m, decimal=m.re is _DIR3)
            self.job.directions.append(self.dir)
        elif _DIR_LIKE.match(line):
            self._end_direction()
            self.out.warnings.append(f"job {self.job.name!r}: unreadable direction line {line.strip()[:80]!r}")
        elif self.dir is not None and self._direction_line(line):
            return
        else:
            self._end_direction()
            if m := _ISSUED.match(line):
                self.job.ops = _issued(m.group("total"))
            elif line.startswith(("Run status group", "Disk stats")):
                self.job = None  # group summaries and disk stats follow the job blocks

    def _start_job(self, m: re.Match) -> None:
        pid = _PID.search(m.group("rest"))
        err_text = _ERRTEXT.search(m.group("rest"))
        job = ParsedJob(m.group("name").strip(), int(m.group("gid")), int(m.group("err")),
                        err_text.group(1).strip() if err_text else "", int(pid.group(1)) if pid else 0)
        identity = (job.name, job.groupid, job.pid)
        # --status-interval repeats every block (same pid): each report is cumulative, the last wins.
        # Not in client/server mode, where two servers may well print the same pid.
        if not self.client_server and job.pid and identity in self.identities:
            self.jobs, self.identities = [], set()
            self.earlier_reports += 1
        self.identities.add(identity)
        self.jobs.append(job)
        self.job = job

    def _direction_line(self, line: str) -> bool:
        """Take a line belonging to the current direction block; False when the block has ended."""
        assert self.dir is not None
        if m := _STAT.match(line):
            self.in_pct = False
            exp = _EXP[m.group("unit")]
            kind = m.group("kind")
            if kind == "clat":
                for stat, key in (("mean", "avg"), ("min", "min"), ("max", "max"), ("stddev", "dev")):
                    self.dir.values[f"clat_{stat}"] = scaled(m.group(key), exp)
            else:
                self.dir.values[f"{kind}_mean"] = scaled(m.group("avg"), exp)
            return True
        if m := _PCT_HEAD.match(line):
            self.in_pct = True  # lat/slat percentiles (lat_percentiles=1) are read past, not kept
            self.pct_exp = _EXP[m.group("unit")] if m.group("kind") == "clat" else None
            return True
        if self.in_pct and line.lstrip().startswith("|"):
            for pct, value in _PCT_ITEM.findall(line) if self.pct_exp is not None else ():
                if (metric := PERCENTILES.get(float(pct))) is not None:
                    self.dir.values[metric] = scaled(value, self.pct_exp)
            return True
        return bool(_SAMPLES.match(line))

    def _end_direction(self) -> None:
        if self.dir is not None:
            self.dir.complete = True
        self.dir, self.in_pct = None, False

    def close(self, cut: bool) -> None:
        """At the end of the text: a direction still open may have lost lines."""
        if self.dir is not None and self.job is not None:
            self.truncated = True
            self.out.warnings.append(f"the output ends inside the {self.dir.op} block of job {self.job.name!r}: "
                                     "that direction is left out (cut off?)")
        elif cut:
            self.truncated = True
            self.out.warnings.append("the output ends mid-line (cut off?); complete job blocks are kept")
        if self.earlier_reports:
            self.out.warnings.append(f"{self.earlier_reports + 1} reports (--status-interval): "
                                     "using the last, each is cumulative")
        self.out.meta["reports"] = self.earlier_reports + 1 if self.jobs else 0


def _direction(m: re.Match, *, decimal: bool) -> ParsedDirection:
    """fio 3 prints KiB/MiB (binary) or kB/MB with kb_base=1000; fio 2's KB/MB are binary."""
    return ParsedDirection(m.group("op"), {
        "bandwidth": parse_size(m.group("bw") + m.group("bwu").rstrip("B") + "B", decimal_suffix=decimal),
        "iops": parse_count(m.group("iops")),
        "io_bytes": parse_size(m.group("io") + m.group("iou"), decimal_suffix=decimal),
        "runtime": scaled(m.group("rt"), _EXP[m.group("rtu")]),
    })


def scaled(text: str, exp10: int) -> float:
    """'1632.2k' at 10**-9 -> 1.6322e-06; scaling in the exponent gives the float nearest the printed
    decimal (30 usec -> 3e-05, not 2.9999999999999997e-05), which keeps golden files readable."""
    t = text.strip()
    if t[-1:].lower() in _SUFFIX_EXP:
        exp10 += _SUFFIX_EXP[t[-1].lower()]
        t = t[:-1]
    return float(f"{t}e{exp10}")


def _issued(total: str) -> dict[str, float]:
    """`2824,1272,0,0` (read, write, trim, sync) or fio 2's `r=0/w=262144/d=0,`."""
    total = total.rstrip(",")
    if "=" in total:
        keyed = dict(part.split("=", 1) for part in total.split("/") if "=" in part)
        return {op: float(keyed[k]) for op, k in zip(_DIRECTIONS, ("r", "w", "d")) if k in keyed}
    return {op: float(v) for op, v in zip(_DIRECTIONS, total.split(","))}
