"""How long a fio job file runs, for plans and case timeouts, from the options fio gives each job.

A job lasts its start delay, then its ramp time, then either its runtime (`time_based`) or the time to
move its bytes: `io_size` (alias io_limit) else `size` (or `filesize` times `nrfiles`) times `loops`,
cut by `number_ios`; at an assumed bandwidth shared by the section's clones, unless `rate`/`rate_iops`
hold each clone slower; plus `thinktime` between blocks; and never beyond `runtime` (alias timeout).
Jobs run in parallel until a `stonewall` (or `wait_for`) starts the next group; a plan adds one second
of start-up. `rate_min`/`rate_iops_min` do not make a job slower, but fio lets it run that slowly: the
longest time (for timeouts) moves the bytes at that rate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from fsbench.core.units import is_whole_number, parse_duration, parse_size
from fsbench.tools.fio.jobfile import JobFile

#: rough throughput used to estimate runs that have no runtime (a plan needs a number, not a promise)
ASSUMED_BW = 400 * 2**20
#: fio's default file size in a plan where no size is given (fio itself needs one: a plan guesses 1 GiB)
DEFAULT_SIZE = float(2**30)
START_S = 1.0
_READS = {"read", "randread"}
_WRITES = {"write", "randwrite", "trim", "randtrim", "trimwrite"}


def job_file_seconds(jf: JobFile) -> tuple[float, float]:
    """(expected, longest) seconds of the whole job file: groups one after the other, jobs of a group at once."""
    groups: list[tuple[float, float]] = []
    for _name, opts in jf.jobs():
        expected, longest = job_seconds(opts)
        if not groups or "stonewall" in opts or opts.get("wait_for"):
            groups.append((expected, longest))
        else:
            groups[-1] = (max(groups[-1][0], expected), max(groups[-1][1], longest))
    return (round(sum(g[0] for g in groups) + START_S, 1), round(sum(g[1] for g in groups) + START_S, 1))


def job_seconds(opts: Mapping) -> tuple[float, float]:
    """(expected, longest) seconds of one job (all its numjobs clones) from its options."""
    delay = _seconds(opts.get("startdelay"), upper=True)
    ramp = _seconds(opts.get("ramp_time"))
    runtime = _seconds(opts.get("runtime"))
    if "time_based" in opts and runtime > 0:
        return delay + ramp + runtime, delay + ramp + runtime
    per_clone = io_bytes(opts)
    clones = option_int(opts.get("numjobs"), 1)
    mix = _read_share(opts)
    # the clones of a section share the storage's bandwidth; a rate limit holds each clone on its own
    moving = max(per_clone * clones / ASSUMED_BW, _limited(per_clone, mix, opts, "rate", "rate_iops"))
    moving += _think_seconds(per_clone, opts)
    slowest = max(moving, _limited(per_clone, mix, opts, "rate_min", "rate_iops_min"))
    if runtime > 0:
        moving, slowest = min(moving, runtime), min(slowest, runtime)
    return delay + ramp + moving, delay + ramp + slowest


def io_bytes(opts: Mapping) -> float:
    """Bytes one clone moves: io_size, else size x loops; number_ios blocks at most."""
    total = _size(opts.get("io_size"))
    if total is None:
        total = file_bytes(opts) * max(1, option_int(opts.get("loops"), 1))
    ios = _number(opts.get("number_ios"))
    if ios:
        total = min(total, ios * _block(opts))
    return total


def file_bytes(opts: Mapping) -> float:
    """Bytes of a job's files: size (which nrfiles share), else filesize's upper end for each of its
    nrfiles (fio's size is then their sum: filesize=1g nrfiles=100 moves 100 GiB, checked), else a
    plan's 1 GiB."""
    for key, files in (("size", 1), ("filesize", max(1, option_int(opts.get("nrfiles"), 1)))):
        value = opts.get(key)
        if value and not str(value).endswith("%"):
            got = _size(str(value).split("-")[-1].split(",")[-1])
            if got:
                return got * files
    return DEFAULT_SIZE


def _read_share(opts: Mapping) -> float:
    """The share of bytes read: 1 for reads, 0 for writes, rwmixread (default 50%) for mixed."""
    rw = str(opts.get("rw") or "read").split(":")[0]
    if rw in _READS:
        return 1.0
    if rw in _WRITES:
        return 0.0
    if opts.get("rwmixread") is not None:
        return min(100, max(0, option_int(opts.get("rwmixread"), 50))) / 100
    if opts.get("rwmixwrite") is not None:
        return 1 - min(100, max(0, option_int(opts.get("rwmixwrite"), 50))) / 100
    return 0.5


def _limited(per_clone: float, reads: float, opts: Mapping, rate_key: str, iops_key: str) -> float:
    """Seconds one clone needs at a `rate`-like limit (`read,write` values; one value is both)."""
    seconds = 0.0
    for share, index in ((reads, 0), (1 - reads, 1)):
        if share <= 0:
            continue
        bw = _per_direction(opts.get(rate_key), index, _size)
        iops = _per_direction(opts.get(iops_key), index, _number)
        limits = [x for x in (bw, iops * _block(opts, index) if iops else None) if x]
        if limits:
            seconds = max(seconds, per_clone * share / min(limits))
    return seconds


def _per_direction(value: object, index: int, parse) -> float | None:
    if value is None:
        return None
    parts = str(value).split(",")
    part = parts[index] if index < len(parts) else parts[0]
    return parse(part) if part.strip() else None


def _think_seconds(per_clone: float, opts: Mapping) -> float:
    """thinktime (µs unless it has a unit) after every thinktime_blocks blocks."""
    think = opts.get("thinktime")
    if not think:
        return 0.0
    text = str(think).strip()
    seconds = _number(text) / 1e6 if re.fullmatch(r"\d+", text) else _seconds(text)
    blocks = per_clone / _block(opts)
    return blocks / max(1, option_int(opts.get("thinktime_blocks"), 1)) * seconds


def _block(opts: Mapping, index: int = 0) -> float:
    """The block size of a direction (`bs=4k,64k` is read,write; a range counts its low end)."""
    value = opts.get("bs") or opts.get("bsrange") or "4k"
    parts = str(value).split(",")
    part = (parts[index] if index < len(parts) and parts[index] else parts[0]).split("-")[0].split(":")[0]
    return _size(part) or 4096.0


def _size(value: object) -> float | None:
    if value is None or str(value).strip() == "":
        return None
    try:
        return float(parse_size(str(value).strip()))
    except ValueError:
        return None


def _number(value: object) -> float:
    got = _size(value)
    return got or 0.0


def option_int(value: object, default: int) -> int:
    """A job option's whole number (numjobs, loops...); default when it is unset or not ASCII digits."""
    text = str(value).strip() if value is not None else ""
    return int(text) if is_whole_number(text) else default


def _seconds(value: object, *, upper: bool = False) -> float:
    """fio's time values: a bare number is seconds; `a-b` ranges count their upper end when asked."""
    if value is None:
        return 0.0
    text = str(value).strip()
    if "-" in text:
        ends = text.split("-")
        text = ends[-1] if upper else ends[0]
    try:
        return parse_duration(text)
    except (ValueError, TypeError):
        return 0.0
