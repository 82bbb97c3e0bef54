"""fio terse output (--minimal / --output-format=terse), versions 2 to 5 -> tidy rows.

Layout (fio stat.c, show_thread_status_terse_all): `3;fio-3.33;job;groupid;error` (v2 has no fio
version field), then one block per direction: read, write, and trim except in v3. A block is
kb, bw (KiB/s), iops, runtime (ms), slat/clat min/max/mean/dev (usec), 20 `P%=usec` clat percentile
fields (`0%=0` fills unused slots), lat min/max/mean/dev (usec), bw min/max/agg%/mean/dev: 41 fields;
v5 adds bw samples and iops min/max/mean/dev/samples (47). CPU, IO depth and latency buckets
(34 fields) follow, then disk util groups and optional error/description fields, all ignored.
Terse has no operation count, so there is no "ops" metric here. Kb, bw and iops are integers that
fio truncated (a direction that moved under 1 KiB shows kb=0 and is not reported), and with
lat_percentiles=1 fio prints total-latency percentiles in the clat slots. Lines are read one at a
time (parse_lines takes an open file), so memory holds the jobs, never the whole text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult, vet
from fsbench.tools.fio.normal_blocks import scaled
from fsbench.tools.fio.parse_normal import MAX_LINE_WARNINGS, text_lines
from fsbench.tools.fio.parsed_jobs import PERCENTILES, ParsedDirection, ParsedJob, rows_from_jobs

TOOL = "fio"
#: version -> (header fields, directions, fields per direction)
_LAYOUT = {
    2: (4, ("read", "write", "trim"), 41),
    3: (5, ("read", "write"), 41),
    4: (5, ("read", "write", "trim"), 41),
    5: (5, ("read", "write", "trim"), 47),
}
_TAIL = 5 + 7 + 10 + 12  # cpu, IO depths, usec and msec latency buckets
_HOST_PREFIX = re.compile(r"^<[^<>\s]*> ?")
_INT = re.compile(r"^-?\d+$")


def parse_text(text: str, source: str = "<string>") -> ParseResult:
    """Parse terse lines among any other text; ParseError when no complete terse line is found."""
    return parse_lines(text_lines(text), source)


def parse_lines(lines: Iterable[str], source: str = "<string>") -> ParseResult:
    """Parse terse output line by line (lines keep their '\\n'; a last one without it was cut)."""
    try:
        return _parse(lines, source)
    except ParseError:
        raise
    except MemoryError:
        raise ParseError(TOOL, source, "the output does not fit in memory") from None
    except Exception as exc:  # noqa: BLE001 - the contract is "ParseError or rows", even for a bug of ours
        raise ParseError(TOOL, source, f"internal parser error ({type(exc).__name__}: {exc})") from exc


def _parse(lines: Iterable[str], source: str) -> ParseResult:
    out = ParseResult(meta={"fio_version": "", "terse_version": 0})
    jobs: list[ParsedJob] = []
    candidates = skipped = 0
    first: str | None = None
    warn = out.warnings

    def warning(text: str) -> None:
        nonlocal skipped
        if len(warn) < MAX_LINE_WARNINGS:
            warn.append(text)
        else:
            skipped += 1

    for no, raw in enumerate(lines, 1):
        if first is None and raw.strip():
            first = raw.strip()[:200]
        if raw.count(";") < 4:
            continue  # preamble, log lines: not worth splitting
        fields = _HOST_PREFIX.sub("", raw.strip(), count=1).split(";")
        version = _version(fields)
        if version is None:
            continue  # client/server log lines, `;`-led disk util lines
        candidates += 1
        head, directions, width = _LAYOUT[version]
        need = head + len(directions) * width + _TAIL
        if len(fields) < need:
            cut = not raw.endswith(("\n", "\r"))
            warning(f"line {no}: terse v{version} line has {len(fields)} fields, needs {need}"
                    + (" (the output is cut off)" if cut else ""))
            continue
        try:
            jobs.append(_job(fields, version, head, directions, width))
        except (ValueError, OverflowError) as exc:
            warning(f"line {no}: unreadable terse v{version} line ({exc})")
            continue
        out.meta["terse_version"] = version
        if version > 2:
            out.meta["fio_version"] = fields[1]
    if skipped:
        warn.append(f"{skipped} more unreadable lines")
    if not jobs:
        if candidates:
            reason = "no complete terse line: every candidate line is cut off or malformed"
        elif first is None:
            reason = "the output is empty: fio printed no result (option error or killed?)"
        else:
            reason = f"no fio terse line (`3;fio-3.33;job;...`) found; the output starts with: {first!r}"
        raise ParseError(TOOL, source, reason)
    rows_from_jobs(jobs, out)
    vet(out)
    if not out.rows and not out.warnings:
        out.warnings.append("fio moved no data in any job")
    return out


def _version(fields: list[str]) -> int | None:
    """The terse version when the fields look like a job line, else None."""
    if len(fields) < 5 or fields[0] not in ("2", "3", "4", "5"):
        return None
    version = int(fields[0])
    if version == 2:
        # `2;job;groupid;error`: no version field to recognise it by, so the numbers must fit
        return 2 if _INT.match(fields[2]) and _INT.match(fields[3]) else None
    return version if fields[1].startswith("fio") and _INT.match(fields[3]) else None


def _job(fields: list[str], version: int, head: int, directions: tuple[str, ...], width: int) -> ParsedJob:
    name, gid, err = (fields[1], fields[2], fields[3]) if version == 2 else (fields[2], fields[3], fields[4])
    job = ParsedJob(name, int(gid), int(err))
    for i, op in enumerate(directions):
        block = fields[head + i * width: head + (i + 1) * width]
        job.directions.append(_direction(op, block))
    return job


def _direction(op: str, f: list[str]) -> ParsedDirection:
    """One direction block; latencies usec -> s, KiB -> B."""
    kb, bw, iops = (float(x) for x in f[0:3])
    values = {"bandwidth": bw * 1024, "iops": iops, "io_bytes": kb * 1024, "runtime": scaled(f[3], -3)}
    slat, clat, lat = (f[a:a + 4] for a in (4, 8, 32))
    # fio prints zeros for a latency it has no samples of (slat of sync engines)
    if any(float(x) for x in clat):
        for stat, text in zip(("min", "max", "mean", "stddev"), clat):
            values[f"clat_{stat}"] = scaled(text, -6)
    for item in f[12:32]:
        pct, _, usec = item.partition("%=")
        metric = PERCENTILES.get(float(pct)) if pct and usec else None
        if metric is not None:
            values[metric] = scaled(usec, -6)
    if any(float(x) for x in lat):
        values["lat_mean"] = scaled(lat[2], -6)
    if any(float(x) for x in slat):
        values["slat_mean"] = scaled(slat[2], -6)
    return ParsedDirection(op, values, complete=True)
