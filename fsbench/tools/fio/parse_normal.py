"""fio normal (human) output, fio 2.x and 3.x, local and client/server -> tidy rows.

Rows have the shape parse_json emits (same metrics, units, host/job/job_index/groupid), built by
rows_from_jobs(), which parse_terse shares. "ops" comes from the `issued rwts: total=r,w,t,s` line
(the same counter as JSON's total_ios). Host is "" (per-server blocks do not name their server) and
"all" for All clients. Run status group lines are group summaries and Disk stats are not
measurements: both are skipped. A direction whose block the output ends inside is left out with a
warning (its percentiles may be cut). With --status-interval (a job block repeated with the same pid)
only the last report counts; not detected in client/server output, where servers may share pids.

The text is read line by line (parse_lines takes any iterable of lines, such as an open file), and
only the current report is kept, so a huge --status-interval output needs little memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult, vet
from fsbench.core.units import parse_count, parse_size
from fsbench.tools.fio.parsed_jobs import (  # one job model and row builder for every fio parser
    METRIC_ORDER,
    PERCENTILES,
    ParsedDirection,
    ParsedJob,
    rows_from_jobs,
)

__all__ = ["METRIC_ORDER", "PERCENTILES", "ParsedDirection", "ParsedJob", "parse_lines",
           "parse_text", "rows_from_jobs", "scaled", "text_lines"]

TOOL = "fio"
#: power of ten of each time unit in seconds
_EXP = {"nsec": -9, "usec": -6, "msec": -3, "sec": 0}
_SUFFIX_EXP = {"k": 3, "m": 6, "g": 9, "t": 12}
_DIRECTIONS = ("read", "write", "trim")
#: at most this many "cannot read line N" warnings; the rest are counted
MAX_LINE_WARNINGS = 20
#: characters of job blocks kept unread while it is unknown whether a later report replaces them
BLOCK_BUDGET = 8 << 20
#: how the lines of a direction block begin (after indentation)
_BODY = ("|", "clat", "slat", "lat", "bw", "iops")

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
# universal line ends (\r\n, \r, \n), as a file opened in text mode splits them
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def text_lines(text: str) -> Iterator[str]:
    """The lines of a text, each with its line end ('\n'; none on a last line cut short), lazily."""
    text = text.removeprefix("\ufeff")
    for m in _LINE.finditer(text):
        line = m.group()
        yield line[:-2] + "\n" if line.endswith("\r\n") else line[:-1] + "\n" if line.endswith("\r") else line


def parse_text(text: str, source: str = "<string>") -> ParseResult:
    """Parse fio's normal output held in a string; ParseError when it holds no complete result block."""
    return parse_lines(text_lines(text), source)


def parse_lines(lines: Iterable[str], source: str = "<string>") -> ParseResult:
    """Parse fio's normal output line by line (lines keep their '\\n'; a last one without it was cut)."""
    try:
        return _parse(lines, source)
    except ParseError:
        raise
    except MemoryError:
        raise ParseError(TOOL, source, "the output does not fit in memory") from None
    except Exception as exc:  # noqa: BLE001 - the contract is "ParseError or rows", even for a bug of ours
        raise ParseError(TOOL, source, f"internal parser error ({type(exc).__name__}: {exc})") from exc


def _parse(lines: Iterable[str], source: str) -> ParseResult:
    parser = _Parser()
    cut = parser.consume(lines)
    parser.close(cut)
    out = parser.out
    if not parser.jobs:
        raise ParseError(TOOL, source, _no_result_reason(parser.first_line))
    rows_from_jobs(parser.jobs, out)
    vet(out)
    if not out.rows:
        if not any(d.complete for j in parser.jobs for d in j.directions) and parser.truncated:
            raise ParseError(TOOL, source, "the output ends before the first result block is complete "
                                           "(cut off, or fio was killed?)")
        if not out.warnings:
            out.warnings.append("fio moved no data in any job")
    return out


def _no_result_reason(first: str | None) -> str:
    if first is None:
        return "the output is empty: fio printed no result (option error or killed?)"
    return f"no fio result block (`<job>: (groupid=N, jobs=M): err= 0: ...`) found; the output starts with: {first!r}"


@dataclass
class _Block:
    """The lines of one job block, kept unread until it is known whether they count."""

    job: ParsedJob
    first_no: int
    lines: list[str] = field(default_factory=list)
    ended: bool = False  # a later line (next job, Run status group) closed it


class _Parser:
    """Line-by-line state: job blocks of the current report, read when they are known to count.

    With --status-interval every report repeats every block and only the last counts, so blocks
    are stored as lines (up to BLOCK_BUDGET characters) and read at the end, or when the budget is
    exceeded (an output with many distinct jobs); a new report drops the stored blocks unread.
    """

    def __init__(self) -> None:
        self.client_server = False  # set by the first line only client/server mode prints
        self.out = ParseResult(meta={"fio_version": "", "reports": 0})
        self.jobs: list[ParsedJob] = []
        self.block: _Block | None = None
        self.pending: list[_Block] = []
        self.pending_chars = 0
        self.identities: set[tuple[str, int, int]] = set()
        self.truncated = False
        self.earlier_reports = 0
        self.first_line: str | None = None
        self.skipped_warnings = 0

    def line_warning(self, text: str) -> None:
        """A warning about one line; past MAX_LINE_WARNINGS they are only counted."""
        if len(self.out.warnings) < MAX_LINE_WARNINGS:
            self.out.warnings.append(text)
        else:
            self.skipped_warnings += 1

    def consume(self, lines: Iterable[str]) -> bool:
        """Read every line; True when the last one was cut short (no line end)."""
        # one loop with only cheap tests per line (a substring, the first characters): the
        # direction blocks are read later, a block at a time, and only those that count
        cut = False
        for no, raw in enumerate(lines, 1):
            cut = not raw.endswith(("\n", "\r"))  # only the last line can lack its end
            if self.first_line is None and raw.strip():
                self.first_line = raw.strip()[:200]
            line = raw
            if raw[:1] == "<" and (m := _HOST_PREFIX.match(raw)):
                self.client_server = True
                line = raw[m.end():]
            if cut and not (_JOB.match(line) or _DIR_LIKE.match(line)):
                continue  # a line cut short cannot tell that the block before it is complete
            if not self.out.meta["fio_version"] and "fio" in line and (v := _VERSION.search(line)):
                self.out.meta["fio_version"] = v.group(1) or v.group(2)
            if "(groupid=" in line and (m := _JOB.match(line)):
                if m.group("name").strip() == "All clients":
                    self.client_server = True
                self._end_block(ended=True)
                self._start_job(m, no)
            elif line.startswith("hostname="):
                self.client_server = True  # client/server mode prints each server's banner first
            elif self.block is not None:
                if line.startswith(("Run status group", "Disk stats")):
                    self._end_block(ended=True)  # group summaries and disk stats follow the job blocks
                else:
                    self.block.lines.append(line)
                    self.pending_chars += len(line)
        return cut

    def _start_job(self, m: re.Match, no: int) -> None:
        try:
            pid = _PID.search(m.group("rest"))
            err_text = _ERRTEXT.search(m.group("rest"))
            job = ParsedJob(m.group("name").strip(), int(m.group("gid")), int(m.group("err")),
                            err_text.group(1).strip() if err_text else "", int(pid.group(1)) if pid else 0)
        except (ValueError, OverflowError) as exc:  # a number too long for int()
            self.line_warning(f"line {no}: cannot read the job line ({exc})")
            return
        identity = (job.name, job.groupid, job.pid)
        # --status-interval repeats every block (same pid): each report is cumulative, the last wins.
        # Not in client/server mode, where two servers may well print the same pid.
        if not self.client_server and job.pid and identity in self.identities:
            self.jobs, self.identities, self.pending, self.pending_chars = [], set(), [], 0
            self.earlier_reports += 1
        self.identities.add(identity)
        self.jobs.append(job)
        self.block = _Block(job, no + 1)

    def _end_block(self, *, ended: bool) -> None:
        if self.block is None:
            return
        self.block.ended = ended
        self.pending.append(self.block)
        self.block = None
        if self.pending_chars > BLOCK_BUDGET:
            self._read_pending()

    def _read_pending(self) -> None:
        for block in self.pending:
            if _read_block(block, self.line_warning):
                self.truncated = True
                op = block.job.directions[-1].op
                self.out.warnings.append(f"the output ends inside the {op} block of job {block.job.name!r}: "
                                         "that direction is left out (cut off?)")
        self.pending, self.pending_chars = [], 0

    def close(self, cut: bool) -> None:
        """At the end of the text: read the blocks that count; a direction still open may have lost lines."""
        self._end_block(ended=False)
        before = self.truncated
        self._read_pending()
        if cut and not (self.truncated and not before):
            self.truncated = True
            self.out.warnings.append("the output ends mid-line (cut off?); complete job blocks are kept")
        if self.earlier_reports:
            self.out.warnings.append(f"{self.earlier_reports + 1} reports (--status-interval): "
                                     "using the last, each is cumulative")
        if self.skipped_warnings:
            self.out.warnings.append(f"{self.skipped_warnings} more unreadable lines")
        self.out.meta["reports"] = self.earlier_reports + 1 if self.jobs else 0


def _read_block(block: _Block, warn: Callable[[str], None]) -> bool:
    """Fill a block's job from its lines; True when its last direction was still open at the end."""
    job = block.job
    d: ParsedDirection | None = None
    in_pct = False
    pct_exp: int | None = None  # the unit of the clat percentile block being read (None: not clat)
    for i, line in enumerate(block.lines):
        s = line.lstrip()
        try:
            if d is not None and s.startswith(_BODY):
                # a line of the current direction: latency stats, percentiles, per-sample summaries
                if s[0] == "|":
                    if in_pct:
                        for pct, value in _PCT_ITEM.findall(s) if pct_exp is not None else ():
                            if (metric := _percentile_metric(pct)) is not None:
                                d.values[metric] = scaled(value, pct_exp or 0)
                        continue
                elif m := _STAT.match(s):
                    in_pct = False
                    exp = _EXP[m.group("unit")]
                    if m.group("kind") == "clat":
                        for stat, key in (("mean", "avg"), ("min", "min"), ("max", "max"), ("stddev", "dev")):
                            d.values[f"clat_{stat}"] = scaled(m.group(key), exp)
                    else:
                        d.values[f"{m.group('kind')}_mean"] = scaled(m.group("avg"), exp)
                    continue
                elif m := _PCT_HEAD.match(s):
                    in_pct = True  # lat/slat percentiles (lat_percentiles=1) are read past, not kept
                    pct_exp = _EXP[m.group("unit")] if m.group("kind") == "clat" else None
                    continue
                elif _SAMPLES.match(s):
                    continue
                elif "min=" in s and s[0] != "b" and s[0] != "i":
                    # a latency line whose numbers cannot be read (inf, nan, damage): say so rather
                    # than lose its values silently; the direction goes on
                    warn(f"line {block.first_no + i}: unreadable latency line {s.strip()[:80]!r}; "
                         "its values are left out")
                    continue
            if s.startswith(("read", "write", "trim")):
                if m := (_DIR3.match(s) or _DIR2.match(s)):
                    if d is not None:
                        d.complete = True
                    d, in_pct = _direction(m, decimal=m.re is _DIR3), False
                    job.directions.append(d)
                    continue
                if _DIR_LIKE.match(s):
                    if d is not None:
                        d.complete = True
                    d, in_pct = None, False
                    warn(f"job {job.name!r}: unreadable direction line {s.strip()[:80]!r}")
                    continue
            if d is not None:  # any other line ends the direction block
                d.complete, d, in_pct = True, None, False
            if s.startswith("issued") and (m := _ISSUED.match(s)):
                job.ops = _issued(m.group("total"))
        except (ValueError, OverflowError) as exc:
            warn(f"line {block.first_no + i}: cannot read {s.strip()[:80]!r} ({exc})")
    block.lines = []
    if d is not None:
        if block.ended:
            d.complete = True
        else:
            return True
    return False


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
    suffix = _SUFFIX_EXP.get(t[-1:].lower())
    if suffix is not None:
        exp10 += suffix
        t = t[:-1]
    return float(t + "e" + str(exp10))


_PCT_CACHE: dict[str, str | None] = {}


def _percentile_metric(printed: str) -> str | None:
    """'99.90' -> 'clat_p99.9' (None for a percentile not kept); remembered, as each block repeats them."""
    metric = _PCT_CACHE.get(printed, "")
    if metric == "":
        metric = PERCENTILES.get(float(printed))
        if len(_PCT_CACHE) < 1000:  # odd outputs must not grow it without bound
            _PCT_CACHE[printed] = metric
    return metric


def _issued(total: str) -> dict[str, float]:
    """`2824,1272,0,0` (read, write, trim, sync) or fio 2's `r=0/w=262144/d=0,`."""
    total = total.rstrip(",")
    if "=" in total:
        keyed = dict(part.split("=", 1) for part in total.split("/") if "=" in part)
        return {op: float(keyed[k]) for op, k in zip(_DIRECTIONS, ("r", "w", "d")) if k in keyed}
    return {op: float(v) for op, v in zip(_DIRECTIONS, total.split(","))}
