"""Parse a vdbench (5.04.01 .. 5.04.07) output directory, or one of its reports, into tidy rows.

Which file gives the numbers: flatfile.html when it has data rows (machine-readable, 4 decimals,
every column named), else summary.html, totals.html, logfile.html, and last a console log (*.log,
*.txt, *.out holding `Starting RD=` lines; the stdout of a run). A file path forces that file;
its siblings still give the version, the for-loop values and the per-host reports.

Rows (tool "vdbench", job = RD name, extra column `rd_index` = 0-based occurrence of that name,
since for-loop RDs share it, plus `for<param>` columns such as `forthreads` from the start line's
"For loops: threads=2"; values kept as printed, e.g. "4k"):
- each RD's average row (`avg_2-N`) gives stat "mean": operation "all" (ReqstdOps / i/o) with rate,
  bandwidth (MB/sec x 1048576), latency_mean (ms / 1000) and cpu_usage (vdbench's cpu% sys+user,
  a share of ALL cores averaged over hosts, not the "100 = one core" of other tools); read / write
  with rate, latency_mean and bandwidth when the direction occurred; metadata operations (mkdir ..
  move) with rate and latency_mean only when their column exists and their rate is > 0.
  Raw (sd/wd) runs print no per-direction rate or bandwidth, so read / write give latency_mean
  only (when read% says the direction occurred); nothing is derived from read%.
- `parse_path(path, intervals=True)` adds every interval row with stat "value" and an `interval`
  column (int); off by default to keep tables small.
- host: "" for the run's summary. When summary.html links two or more HOST reports (<hd>.html),
  their rows follow with host = the hd name (`hosts=False` turns this off). Those reports only
  exist as text tables (2-4 significant digits). Single-host runs get no host rows: they would
  repeat the run's own numbers.
An average over no interval (`avg_2-1`: the RD was shorter than the warm-up) gives no rows.

Failures: an RD without an average row (interrupted) is named in a warning and the finished RDs
are kept. No usable row at all raises ParseError with the true reason, told apart by what vdbench
printed besides its Java exception (it exits through the same RuntimeException whatever the cause):
- I/O errors: lines beyond errorlog.html's header (`op: read lun: /dev/sdc lba: ... errno: EIO: 'I/O
  error'`, for file-system runs also `Read error using file ...`), the abort being "'data_errors=N'
  requested. Abort rd=rd1 after last error." -> "vdbench stopped on I/O errors of the storage (5
  read errors; the first: read of /dev/sdc at lba ... : EIO: 'I/O error'): 'data_errors=5' ...";
  such a run may die before its reports are flushed, so no RD shows in summary/totals;
- Data Validation errors (corruption reports) -> "vdbench stopped on Data Validation errors ...";
- a parameter error: the exception came before the run started (no slave started, no RD started,
  in status.html, logfile.html or the console) -> "vdbench stopped on a parameter error: Unexpected
  EOF in parameter file.";
- any other exception after the start -> "vdbench stopped on an error: ...";
- else the unfinished RDs are named.
When rows exist, the same reason is a warning. Reports are read line by line, and with
intervals=False only the last interval of each RD is held, so a huge run needs little memory.
No input makes parse_path raise anything but ParseError.
"""

from __future__ import annotations

from pathlib import Path

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult, vet
from fsbench.tools.vdbench.model import RdBlock
from fsbench.tools.vdbench.output_dir import STANDARD, OutputDir, candidates, linked_hosts, read_report
from fsbench.tools.vdbench.rows import block_rows
from fsbench.tools.vdbench.summary import parse_tables
from fsbench.tools.vdbench.text import COMPLETED, TOOL, Failures, find_version


def _attach_loops(blocks: list[RdBlock], starts: list[RdBlock]) -> None:
    """Give flatfile RDs the for-loop values of the start line with the same name and occurrence."""
    by_key = {(s.name, s.index): s for s in starts}
    for b in blocks:
        s = by_key.get((b.name, b.index))
        if s is not None:
            b.loops = dict(s.loops)


def _status_warnings(blocks: list[RdBlock], starts: list[RdBlock]) -> list[str]:
    out = []
    for b in blocks:
        if b.avg is None and b.intervals:
            out.append(
                f"RD {b.name} (occurrence {b.index}) did not finish: "
                f"{len(b.intervals)} interval(s), no average row"
            )
    have = {(b.name, b.index) for b in blocks if b.has_data}
    for s in starts:
        if (s.name, s.index) not in have:
            out.append(f"RD {s.name} (occurrence {s.index}) started but reported no interval")
    return out


def _failure(d: OutputDir, main: Path | None) -> Failures:
    """What vdbench logged about how the run ended: its fatal exception, I/O and validation errors."""
    found = Failures()
    # errorlog.html holds each I/O error once; the log and the console repeat some of them
    errorlog = d.lines("errorlog.html")
    if errorlog is not None:
        found.scan(errorlog)
    # flatfile/summary/totals never hold an exception: only a console log given as the source does
    console = [main.name] if main is not None and main.name not in STANDARD else []
    for name in ("status.html", "logfile.html", *console):
        found.scan(d.lines(name) or (), count_io=not found.io and name != "status.html")
    return found


def _reason(found: Failures) -> str | None:
    """The true reason of a failed run, in words, or None when vdbench reported no failure."""
    fatal = found.fatal
    why = found.reason(fatal)
    if why:
        return why
    if fatal:
        # the same RuntimeException ends every failed run: a parameter error is one that came
        # before anything ran
        return f"vdbench stopped on {'an error' if found.running else 'a parameter error'}: {fatal}"
    return None


def _no_rows_reason(blocks: list[RdBlock], starts: list[RdBlock], reason: str | None, looked: str) -> str:
    if reason:
        return reason
    unfinished = [f"RD={b.name} ({len(b.intervals)} interval(s))" for b in blocks if b.avg is None and b.intervals]
    if unfinished:
        return (
            "no run definition finished (no average row; interrupted?): " + ", ".join(unfinished)
            + "; parse with intervals=True to get the interval rows"
        )
    if blocks or starts:
        return "no run definition has a usable average row"
    return f"no vdbench result table found ({looked})"


def _parse(path: Path, intervals: bool, hosts: bool) -> ParseResult:
    if path.is_dir():
        d, forced = OutputDir(path), None
    elif path.is_file():
        d, forced = OutputDir(path.parent), path
    else:
        raise ParseError(TOOL, str(path), "no such file or directory")
    result = ParseResult()
    chosen: Path | None = None
    blocks: list[RdBlock] = []
    flat = False
    warn: list[str] = []
    for cand in candidates(d, forced):
        if forced is None and not d.exists(cand.name):
            continue
        w: list[str] = []
        got, is_flat = read_report(d, cand, w, intervals)
        data = any(b.has_data for b in got)
        # the first file that has data wins; else the first that exists explains the failure
        if chosen is None or data:
            chosen, blocks, flat, warn = cand, got, is_flat, w
        if data:
            break
    result.warnings += warn
    # for-loop values and RDs that never reported: from the start lines of totals/summary
    starts = blocks
    if flat:
        side = "totals.html" if d.exists("totals.html") else "summary.html"
        starts = parse_tables(d.lines(side) or (), [], side, keep_intervals=False)
        _attach_loops(blocks, starts)
    result.warnings += _status_warnings(blocks, starts)

    host = ""
    host_list = linked_hosts(d.lines("summary.html"))
    if forced is not None and forced.stem in host_list:
        host = forced.stem  # a host report given directly
    for b in blocks:
        result.rows += block_rows(b, host=host, intervals=intervals, warnings=result.warnings)
    if hosts and len(host_list) > 1 and (forced is None or forced.name in STANDARD):
        result.rows += _host_rows(d, host_list, intervals, result.warnings)

    found = _failure(d, chosen)
    version = find_version(d.lines("logfile.html") or ())
    if version is None and chosen is not None:
        version = find_version(d.lines(chosen.name) or ())
    result.meta = {
        "version": version,
        "source": chosen.name if chosen else None,
        "workload": _workload(blocks),
        "completed": any(d.contains(n, COMPLETED, tail=True) for n in
                         dict.fromkeys([chosen.name if chosen else "logfile.html", "logfile.html", "summary.html"]))
        or d.contains("status.html", "Vdbench complete"),
        "hosts": host_list,
        "io_errors": found.io,
    }
    vet(result)
    reason = _reason(found)
    if not result.rows:
        looked = ", ".join(STANDARD) if forced is None else "no table rows in this file"
        raise ParseError(TOOL, str(path), _no_rows_reason(blocks, starts, reason, looked))
    if reason:
        # a parameter error cannot have given rows: the exception came after them
        result.warnings.append(reason if found.io or found.validation else f"vdbench reported an error: {found.fatal}")
    return result


def _host_rows(d: OutputDir, host_list: list[str], intervals: bool, warnings: list[str]) -> list[dict]:
    rows: list[dict] = []
    missing = []
    for h in host_list:
        lines = d.lines(f"{h}.html")
        if lines is None:
            missing.append(f"{h}.html")
            continue
        blocks = parse_tables(lines, warnings, f"{h}.html", keep_intervals=intervals)
        for b in blocks:
            # empty-average notes were already given for the run summary
            rows += block_rows(b, host=h, intervals=intervals, warnings=[])
    if missing:
        warnings.append("host reports linked from summary.html but missing: " + ", ".join(missing))
    return rows


def _workload(blocks: list[RdBlock]) -> str | None:
    """'fs' when file-system columns were seen (per-direction rates), 'raw' otherwise."""
    recs = [r for b in blocks for r in ([b.avg] if b.avg else []) + b.intervals]
    if not recs:
        return None
    return "fs" if any("read.rate" in r.values or "write.rate" in r.values for r in recs) else "raw"


def parse_path(path: Path, intervals: bool = False, hosts: bool = True) -> ParseResult:
    """Parse a vdbench output directory or report file (flatfile/summary/totals/console log)."""
    path = Path(path)
    try:
        return _parse(path, intervals, hosts)
    except ParseError:
        raise
    except Exception as exc:  # noqa: BLE001 - the contract is "ParseError or rows", whatever the input
        raise ParseError(TOOL, str(path), f"unexpected parser failure ({type(exc).__name__}: {exc})") from exc
