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
are kept. No usable row at all raises ParseError: quoting vdbench's Java exception when there is
one ("vdbench stopped on a parameter error: Unexpected EOF in parameter file."), else naming the
unfinished RDs. No input makes parse_path raise anything but ParseError.
"""

from __future__ import annotations

import re
from pathlib import Path

from fsbench.errors import ParseError
from fsbench.tidy import ParseResult
from fsbench.tools.vdbench.flatfile import parse_flatfile
from fsbench.tools.vdbench.model import RdBlock
from fsbench.tools.vdbench.rows import block_rows
from fsbench.tools.vdbench.summary import parse_tables
from fsbench.tools.vdbench.text import COMPLETED, TOOL, find_error, find_version, read_text, strip_tags

_STANDARD = ("flatfile.html", "summary.html", "totals.html", "logfile.html")
_CONSOLE_SUFFIXES = (".log", ".txt", ".out")
_HOST_LINK = re.compile(r'HREF="([A-Za-z0-9_.-]+)\.html"', re.IGNORECASE)


class _Dir:
    """Lazily read sibling files of one output directory (None when absent or unreadable)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._cache: dict[str, str | None] = {}

    def text(self, name: str) -> str | None:
        if name not in self._cache:
            p = self.directory / name
            try:
                self._cache[name] = read_text(p) if p.is_file() else None
            except ParseError:
                self._cache[name] = None
        return self._cache[name]


def _looks_like_flatfile(text: str) -> bool:
    """Whether the first line that is not a comment is a flatfile header (Run ... Interval)."""
    for raw in text.splitlines()[:200]:
        line = strip_tags(raw).strip()
        if line and not line.startswith("*"):
            names = {t.lower() for t in line.split()}
            return "run" in names and "interval" in names
    return False


def _read(path: Path, text: str, warnings: list[str]) -> tuple[list[RdBlock], bool]:
    """Blocks of one file and whether it was read as a flatfile."""
    if "flatfile" in path.name.lower() or _looks_like_flatfile(text):
        return parse_flatfile(text, warnings, path.name), True
    return parse_tables(text, warnings, path.name), False


def _candidates(d: _Dir, forced: Path | None) -> list[Path]:
    if forced is not None:
        return [forced]
    out = [d.directory / n for n in _STANDARD]
    try:
        extra = sorted(p for p in d.directory.iterdir() if p.suffix.lower() in _CONSOLE_SUFFIXES)
    except OSError:
        extra = []
    return out + [p for p in extra if p.is_file() and "Starting RD=" in (d.text(p.name) or "")]


def _hosts(summary: str | None) -> list[str]:
    """Host names linked from summary.html's 'Link to HOST reports:' line (and its continuations)."""
    if not summary:
        return []
    hosts: list[str] = []
    inside = False
    for line in summary.splitlines():
        if "Link to HOST reports" in line:
            inside = True
        elif not (inside and line[:1].isspace() and "HREF" in line.upper()):
            inside = False
        if inside:
            hosts += [h for h in _HOST_LINK.findall(line) if h not in hosts]
    return hosts


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


def _no_rows_reason(blocks: list[RdBlock], starts: list[RdBlock], error: str | None, looked: str) -> str:
    unfinished = [f"RD={b.name} ({len(b.intervals)} interval(s))" for b in blocks if b.avg is None and b.intervals]
    if error:
        kind = "an error" if (blocks or starts) else "a parameter error"
        return f"vdbench stopped on {kind}: {error}"
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
        d, forced = _Dir(path), None
    elif path.is_file():
        d, forced = _Dir(path.parent), path
    else:
        raise ParseError(TOOL, str(path), "no such file or directory")
    result = ParseResult()
    chosen: Path | None = None
    main_text = ""
    blocks: list[RdBlock] = []
    flat = False
    warn: list[str] = []
    for cand in _candidates(d, forced):
        text = read_text(cand) if forced is not None else d.text(cand.name)
        if text is None:
            continue
        w: list[str] = []
        got, is_flat = _read(cand, text, w)
        data = any(b.has_data for b in got)
        # the first file that has data wins; else the first that exists explains the failure
        if chosen is None or data:
            chosen, main_text, blocks, flat, warn = cand, text, got, is_flat, w
        if data:
            break
    result.warnings += warn
    # for-loop values and RDs that never reported: from the start lines of totals/summary
    starts = blocks
    if flat:
        side = d.text("totals.html") or d.text("summary.html") or ""
        starts = parse_tables(side, [], "totals.html")
        _attach_loops(blocks, starts)
    result.warnings += _status_warnings(blocks, starts)

    host = ""
    host_list = _hosts(d.text("summary.html"))
    if forced is not None and forced.stem in host_list:
        host = forced.stem  # a host report given directly
    for b in blocks:
        result.rows += block_rows(b, host=host, intervals=intervals, warnings=result.warnings)
    if hosts and len(host_list) > 1 and (forced is None or forced.name in _STANDARD):
        result.rows += _host_rows(d, host_list, intervals, result.warnings)

    logfile = d.text("logfile.html")
    error = find_error(logfile or "") or find_error(main_text)
    result.meta = {
        "version": find_version(logfile or "") or find_version(main_text),
        "source": chosen.name if chosen else None,
        "workload": _workload(blocks),
        "completed": any(COMPLETED in (t or "") for t in (main_text, logfile, d.text("summary.html")))
        or "Vdbench complete" in (d.text("status.html") or ""),
        "hosts": host_list,
    }
    if not result.rows:
        looked = ", ".join(_STANDARD) if forced is None else "no table rows in this file"
        raise ParseError(TOOL, str(path), _no_rows_reason(blocks, starts, error, looked))
    if error:
        result.warnings.append(f"vdbench reported an error: {error}")
    return result


def _host_rows(d: _Dir, host_list: list[str], intervals: bool, warnings: list[str]) -> list[dict]:
    rows: list[dict] = []
    missing = []
    for h in host_list:
        text = d.text(f"{h}.html")
        if text is None:
            missing.append(f"{h}.html")
            continue
        blocks = parse_tables(text, warnings, f"{h}.html")
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
