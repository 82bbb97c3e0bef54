"""fio JSON / json+ output, fio 2.x and 3.x (also mixed with text, several objects, client/server) -> rows.

Units are converted on input, chosen per direction from the keys fio printed, not from the version
string (tools that re-serialise fio's JSON may drop or change it):
- fio 3.x: `io_bytes` B, `bw_bytes` B/s (`bw` KiB/s), `runtime` ms, latencies `slat_ns` / `clat_ns` /
  `lat_ns` in ns, each with its sample count N;
- fio 2.x (fio-2.1 to fio-2.21): no `bw_bytes` and no `io_kbytes`; `io_bytes` is KiB and `bw` KiB/s,
  `runtime` ms, latencies `slat` / `clat` / `lat` in usec without N (a latency whose max is 0 had no
  samples: slat of synchronous engines); clat percentiles under `clat.percentile` in both.

Finding the document: a top-level object starts at the beginning of a line (`{` alone on it, fio's
layout, or a whole object on one line as `json.dumps` writes it; a UTF-8 byte-order mark before it
is skipped). Objects are decoded one at a time from a stream of text chunks, and while decoding
each job is turned into a small summary (an object_hook), so memory holds the text of one object,
never its whole Python tree. With --status-interval the last complete result object counts.

On any input the only exception is ParseError: NaN / Infinity are read (and their rows dropped with
a warning by tidy.vet), integers of any length become floats (one beyond a float's range is infinite;
Python refuses int() of more than 4,300 digits, so such an object is decoded again with every integer
read as a float), an object nested deeper than the interpreter's recursion limit is skipped with a
reason, and binary junk is text that holds no document.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult, vet
from fsbench.tools.common import open_text
from fsbench.tools.fio.json_objects import CUT, JsonObjects, last_line_object
from fsbench.tools.fio.parsed_jobs import (
    DIRECTIONS,
    TOOL,
    ParsedDirection,
    ParsedJob,
    percentile_metric,
    rows_from_jobs,
)

#: text read at a time from a file; an object longer than this is read by doubling the buffer
CHUNK = 1 << 20


def parse_text(text: str, source: str = "<string>") -> ParseResult:
    """Parse fio's JSON output held in a string; the last complete result object wins."""
    if len(text) > CHUNK:
        return parse_chunks([text], source)
    # held whole anyway when it is short: decoded by json alone, and only the last result's jobs are read;
    # when the last object that begins a line is a complete result with nothing after it, it alone is decoded
    # (a status-interval output's earlier results would change nothing but the count of them)
    return _guarded(source, lambda: _parse_whole(text, source))


def parse_path(path: Path, source: str | None = None) -> ParseResult:
    """Parse a file of fio's JSON output, read CHUNK by CHUNK (a byte-order mark dropped); ParseError when
    it cannot be read."""
    src = source or str(path)
    with open_text(TOOL, path, newline="", encoding="utf-8-sig") as f:
        return parse_chunks(_chunks(f, src), src)


def _chunks(f: TextIO, source: str) -> Iterator[str]:
    try:
        while chunk := f.read(CHUNK):
            yield chunk
    except OSError as exc:  # an I/O error in the middle of the file
        raise ParseError(TOOL, source, f"cannot read the file: {exc.strerror or exc}") from None


def parse_chunks(chunks: Iterable[str], source: str = "<string>", streaming: bool = True) -> ParseResult:
    """Parse fio's JSON output read as successive pieces of text (a file read CHUNK by CHUNK). `streaming`:
    each job is summarised as soon as it is decoded (memory holds no object's whole tree); without it,
    for a text held whole, objects are decoded by json alone and only the last result's jobs are read."""
    return _guarded(source, lambda: _parse(chunks, source, _hook if streaming else None))


def _guarded(source: str, parse: Callable[[], ParseResult]) -> ParseResult:
    """parse(), whose only exception is a ParseError."""
    try:
        return parse()
    except ParseError:
        raise
    except MemoryError:
        raise ParseError(TOOL, source, "the output does not fit in memory") from None
    except Exception as exc:  # noqa: BLE001 - the contract is "ParseError or rows", even for a bug of ours
        raise ParseError(TOOL, source, f"internal parser error ({type(exc).__name__}: {exc})") from exc


def _parse_whole(text: str, source: str) -> ParseResult:
    """A short text: from its last object that begins a line when that is a complete result with nothing after
    it, else every object in order."""
    last = last_line_object(text)
    if last is not None and isinstance(last[0], dict) and _is_result(last[0]):
        return _result(last[0], last[1], None, source)
    return _parse([text], source, None)


def _parse(chunks: Iterable[str], source: str, hook: Callable[[dict], object] | None) -> ParseResult:
    scan = JsonObjects(chunks, CHUNK, hook)
    final: dict | None = None
    results = 0
    failure_after_last: str | None = None
    for obj, failure in scan.objects():
        if failure is not None:
            failure_after_last = failure_after_last or failure
        elif isinstance(obj, dict) and _is_result(obj):
            final, results, failure_after_last = obj, results + 1, None
    if final is None:
        raise ParseError(TOOL, source, _no_result_reason(scan, failure_after_last))
    return _result(final, results, failure_after_last, source)


def _result(final: dict, results: int, failure_after_last: str | None, source: str) -> ParseResult:
    """The rows of the result object used (the `results`-th), warned about an unusable object after it."""
    out = ParseResult(meta={"fio_version": str(final.get("fio version", "")), "objects": results})
    if failure_after_last:
        out.warnings.append(f"a JSON object after the last complete one is unusable ({failure_after_last}); "
                            f"using object {results}")
    client_mode = isinstance(final.get("client_stats"), list)
    entries = final["client_stats"] if client_mode else final["jobs"]
    jobs = [e if isinstance(e, ParsedJob) else _job(e) for e in entries if isinstance(e, (ParsedJob, dict))]
    if not client_mode:
        for job in jobs:
            job.host = ""  # only client/server entries name their host
    options = final.get("global options")
    # every value plausible: tidy.vet would keep every row as it is, so it is not run a second time
    if not rows_from_jobs(jobs, out, options if isinstance(options, dict) and not client_mode else None):
        vet(out)
    if not out.rows:
        errors = [w for w in out.warnings if "error=" in w]
        reason = "; ".join(errors) + " before moving any data" if errors else "fio moved no data in any job"
        raise ParseError(TOOL, source, reason)
    return out


def _is_result(obj: dict) -> bool:
    return isinstance(obj.get("jobs"), list) or isinstance(obj.get("client_stats"), list)


def _no_result_reason(scan: JsonObjects, failure: str | None) -> str:
    if failure == CUT:
        return "fio output ends before its JSON document closes: was fio killed?"
    if failure:
        return f"no usable fio JSON document: {failure}"
    if not scan.seen_text:
        return "the output is empty: fio printed no result (option error or killed?)"
    return f"no fio JSON document found; the output starts with: {scan.first_line!r}"


# --- fio's structures -> ParsedJob, while decoding ---------------------------------------------------


def _hook(d: dict) -> object:
    """Replace each job entry by its summary as soon as it is decoded (the rest of it is dropped)."""
    return _job(d) if "jobname" in d else d


def _job(d: dict) -> ParsedJob:
    name = d.get("jobname", "")
    host = d.get("hostname", "")
    options = d.get("job options")
    job = ParsedJob(name if isinstance(name, str) else str(name), _int(d.get("groupid")), _int(d.get("error")),
                    host=host if isinstance(host, str) else str(host),
                    options={k: str(options[k]) for k in ("bs", "filesize") if k in options}
                    if isinstance(options, dict) else {})
    for op in DIRECTIONS:
        dd = d.get(op)
        if isinstance(dd, dict):
            job.directions.append(_direction(op, dd))
    return job


def _direction(op: str, d: dict) -> ParsedDirection:
    """One direction in canonical units; fio 2.x when neither bw_bytes nor io_kbytes is there."""
    v: dict[str, float] = {}
    fio2 = "bw_bytes" not in d and "io_kbytes" not in d
    if "bw_bytes" in d:
        v["bandwidth"] = _num(d["bw_bytes"])
    elif "bw" in d:
        v["bandwidth"] = _num(d["bw"]) * 1024
    if "iops" in d:
        v["iops"] = _num(d["iops"])
    if "io_bytes" in d:
        v["io_bytes"] = _num(d["io_bytes"]) * (1024 if fio2 else 1)
    elif "io_kbytes" in d:
        v["io_bytes"] = _num(d["io_kbytes"]) * 1024
    if "total_ios" in d:
        v["ops"] = _num(d["total_ios"])
    if "runtime" in d:
        v["runtime"] = _num(d["runtime"]) / 1e3
    if "clat_ns" in d or "lat_ns" in d or "slat_ns" in d:
        scale, clat, lat, slat = 1e9, d.get("clat_ns"), d.get("lat_ns"), d.get("slat_ns")
    else:
        scale, clat, lat, slat = 1e6, d.get("clat"), d.get("lat"), d.get("slat")
    if isinstance(clat, dict) and clat and _sampled(clat, default=True):
        for stat, metric in _CLAT_STATS:
            if stat in clat:
                v[metric] = _num(clat[stat]) / scale
        pct = clat.get("percentile")
        if isinstance(pct, dict):
            for key, metric in _kept_percentiles(pct):
                v[metric] = _num(pct[key]) / scale
    if isinstance(lat, dict) and "mean" in lat and _sampled(lat, default=True):
        v["lat_mean"] = _num(lat["mean"]) / scale
    if isinstance(slat, dict) and "mean" in slat and _sampled(slat, default=False):
        v["slat_mean"] = _num(slat["mean"]) / scale
    return ParsedDirection(op, v, complete=True)


_CLAT_STATS = (("mean", "clat_mean"), ("min", "clat_min"), ("max", "clat_max"), ("stddev", "clat_stddev"))
_KEPT_CACHE: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}


def _kept_percentiles(pct: dict) -> tuple[tuple[str, str], ...]:
    """(key, metric) of the percentiles kept, remembered per set of keys: every job of a run lists the same
    twenty, so each is looked at once per run instead of once per job and direction."""
    keys = tuple(pct)
    kept = _KEPT_CACHE.get(keys)
    if kept is None:
        kept = tuple((k, m) for k in keys if (m := percentile_metric(str(k))) is not None)
        if len(_KEPT_CACHE) < 100:  # odd outputs must not grow it without bound
            _KEPT_CACHE[keys] = kept
    return kept


def _sampled(stats: dict, *, default: bool) -> bool:
    """Whether a latency object has samples: its N (3.x); without N (2.x), a max above 0."""
    if "N" in stats:
        return _num(stats["N"]) > 0
    return default or _num(stats.get("max")) > 0


def _num(value: object) -> float:
    if type(value) is float:
        return value
    try:
        return float(value)  # type: ignore[arg-type]  # an int (JSON's integers), else whatever was there
    except OverflowError:  # an integer beyond a float's range: infinite, as reading it as a float gives
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]  # only an int overflows
    except (TypeError, ValueError):
        return math.nan


def _int(value: object) -> int:
    x = _num(value)
    return int(x) if math.isfinite(x) else 0
