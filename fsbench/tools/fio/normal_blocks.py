"""A job block of fio's normal output read into its directions: bandwidth, IOPS, runtime, latencies,
clat percentiles and the issued counts (fio 3.x and 2.x lines; units as printed, to base units)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from fsbench.core.units import parse_count, parse_size
from fsbench.tools.fio.parsed_jobs import ParsedDirection, ParsedJob, percentile_metric

#: power of ten of each time unit in seconds
_EXP = {"nsec": -9, "usec": -6, "msec": -3, "sec": 0}
_SUFFIX_EXP = {"k": 3, "m": 6, "g": 9, "t": 12}
_DIRECTIONS = ("read", "write", "trim")
#: how the lines of a direction block begin (after indentation)
_BODY = ("|", "clat", "slat", "lat", "bw", "iops")
_N = r"\d+(?:\.\d+)?"
_NK = _N + r"[kKMGT]?"  # fio's suffixed counts: 101k, 1632.2k
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
DIR_LIKE = re.compile(r"^\s*(read|write|trim)\s*:")
_STAT = re.compile(
    rf"^\s*(?P<kind>clat|slat|lat)\s*\((?P<unit>[nmu]?sec)\)\s*:\s*min=\s*(?P<min>{_NK})\s*,\s*"
    rf"max=\s*(?P<max>{_NK})\s*,\s*avg=\s*(?P<avg>{_NK})\s*,\s*stdev=\s*(?P<dev>{_NK})"
)
_PCT_HEAD = re.compile(r"^\s*(?P<kind>clat|lat|slat)\s+percentiles\s*\((?P<unit>[nmu]?sec)\)\s*:")
_PCT_ITEM = re.compile(rf"({_N})th=\[\s*({_NK})\s*\]")
_SAMPLES = re.compile(r"^\s*(?:bw|iops)\s*[(:]")  # per-sample bw/iops summaries: not measurements
_ISSUED = re.compile(r"^\s*issued\b[^:]*:\s*total=(?P<total>\S+)")


@dataclass
class Block:
    """The lines of one job block, kept unread until it is known whether they count."""

    job: ParsedJob
    first_no: int
    lines: list[str] = field(default_factory=list)
    ended: bool = False  # a later line (next job, Run status group) closed it


def read_block(block: Block, warn: Callable[[str], None]) -> bool:
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
                            if (metric := percentile_metric(pct)) is not None:
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
                if DIR_LIKE.match(s):
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


def _issued(total: str) -> dict[str, float]:
    """`2824,1272,0,0` (read, write, trim, sync) or fio 2's `r=0/w=262144/d=0,`."""
    total = total.rstrip(",")
    if "=" in total:
        keyed = dict(part.split("=", 1) for part in total.split("/") if "=" in part)
        return {op: float(keyed[k]) for op, k in zip(_DIRECTIONS, ("r", "w", "d")) if k in keyed}
    return {op: float(v) for op, v in zip(_DIRECTIONS, total.split(","))}
