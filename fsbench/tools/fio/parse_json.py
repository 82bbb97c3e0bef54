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
a warning by tidy.vet), integers of any length are read as floats (Python refuses int() of more
than 4,300 digits), an object nested deeper than the interpreter's recursion limit is skipped with
a reason, and binary junk is text that holds no document.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from fsbench.core.errors import ParseError
from fsbench.core.tidy import METRIC_UNITS, ParseResult, vet
from fsbench.core.units import parse_size
from fsbench.tools.common import open_text

TOOL = "fio"
DIRECTIONS = ("read", "write", "trim")
#: metric order of every fio parser, so rows of the JSON, normal and terse parsers line up
METRIC_ORDER = (
    "bandwidth", "iops", "io_bytes", "ops", "runtime", "clat_mean", "clat_min", "clat_max", "clat_stddev",
    "clat_p50", "clat_p90", "clat_p95", "clat_p99", "clat_p99.9", "lat_mean", "slat_mean", "file_rate",
)
#: clat percentile -> metric; only these are kept ("50.000000" in JSON, "50.00th" in text)
PERCENTILES = {50.0: "clat_p50", 90.0: "clat_p90", 95.0: "clat_p95", 99.0: "clat_p99", 99.9: "clat_p99.9"}
_ERRNO = {13: "EACCES", 25: "ENOTTY", 28: "ENOSPC", 30: "EROFS", 84: "EILSEQ (verify failed)"}
#: where a top-level object may begin: `{` first on a line (after blanks or a byte-order mark)
_OBJECT_START = re.compile(r"^[ \t\ufeff]*\{", re.MULTILINE)
#: text read at a time from a file; an object longer than this is read by doubling the buffer
CHUNK = 1 << 20
#: a decode error this close to the end of the text read so far may just mean "read more"
_TAIL = 64
#: the start of a literal or number cut by the end of the text ("tr" of true, "-Infin", "1.5e")
_PARTIAL_TOKEN = re.compile(r"t(?:r(?:u)?)?|f(?:a(?:l(?:s)?)?)?|n(?:u(?:l)?)?|N(?:a)?"
                            r"|-?I(?:n(?:f(?:i(?:n(?:i(?:t)?)?)?)?)?)?"
                            r"|-|-?[0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]*)?")


@dataclass
class ParsedDirection:
    """One direction of one job: metric -> value in canonical units."""

    op: str
    values: dict[str, float] = field(default_factory=dict)
    complete: bool = False


@dataclass
class ParsedJob:
    """One job (or All clients) entry of any fio output format, before it becomes rows."""

    name: str
    groupid: int
    error: int = 0
    error_text: str = ""
    pid: int = 0
    directions: list[ParsedDirection] = field(default_factory=list)
    ops: dict[str, float] = field(default_factory=dict)
    host: str = ""
    #: the job's own options ("job options" of fio's JSON), for the whole-file test of file_rate
    options: dict[str, str] = field(default_factory=dict)


def whole_file_io(options: dict[str, str]) -> bool:
    """Whether every I/O of a job is one whole file: one block size equal to one file size (bs=filesize=128k,
    seed 001's small files). Then its IOPS are files per second, reported as the metric file_rate."""
    bs, filesize = str(options.get("bs", "")), str(options.get("filesize", ""))
    if not bs or not filesize or any(c in bs + filesize for c in "-:,/%"):
        return False  # ranges, per-direction sizes and percentages are not one size
    try:
        return parse_size(bs) == parse_size(filesize) > 0
    except ValueError:
        return False


def rows_from_jobs(jobs: list[ParsedJob], out: ParseResult, global_options: dict | None = None) -> None:
    """Rows of complete directions that moved data; same-named jobs told apart by job_index."""
    base = {str(k): str(v) for k, v in (global_options or {}).items()}
    whole_files = {id(job): whole_file_io({**base, **job.options}) for job in jobs}
    names_by_group: dict[int, set[str]] = {}
    for job in jobs:
        if job.name != "All clients":
            names_by_group.setdefault(job.groupid, set()).add(job.name)
    seen: Counter = Counter()
    for job in jobs:
        aggregate = job.name == "All clients"
        host, name = ("all", job.name) if aggregate else (job.host, job.name)
        if aggregate:  # the aggregate takes its group's job name when there is just one
            names = names_by_group.get(job.groupid, set())
            name = next(iter(names)) if len(names) == 1 else "all"
        index = seen[(host, name)]
        seen[(host, name)] += 1
        if job.error:
            label = _ERRNO.get(job.error, job.error_text or f"errno {job.error}")
            out.warnings.append(f"fio job {name!r}{' on ' + host if host else ''} ended with "
                                f"error={job.error} ({label})")
        gid = job.groupid
        for d in job.directions:
            values = d.values
            if d.op in job.ops:
                values = {**values, "ops": job.ops[d.op]}
            if whole_files.get(id(job)) and "iops" in values:
                values = {**values, "file_rate": values["iops"]}
            if not d.complete or not (values.get("io_bytes", 0) > 0 or values.get("ops", 0) > 0):
                continue  # a direction is reported only when it moved data
            op = d.op
            for metric in METRIC_ORDER:
                value = values.get(metric)
                if value is not None:  # not-finite values reach tidy.vet, which drops them with a warning
                    # tidy.measurement's row, written out: this line runs for every row of a huge output
                    out.rows.append({"tool": TOOL, "host": host, "job": name, "operation": op, "metric": metric,
                                     "stat": "value", "value": float(value), "unit": METRIC_UNITS[metric],
                                     "job_index": index, "groupid": gid})


def parse_text(text: str, source: str = "<string>") -> ParseResult:
    """Parse fio's JSON output held in a string; the last complete result object wins."""
    return parse_chunks([text], source)


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


def parse_chunks(chunks: Iterable[str], source: str = "<string>") -> ParseResult:
    """Parse fio's JSON output read as successive pieces of text (a file read CHUNK by CHUNK)."""
    try:
        return _parse(chunks, source)
    except ParseError:
        raise
    except MemoryError:
        raise ParseError(TOOL, source, "the output does not fit in memory") from None
    except Exception as exc:  # noqa: BLE001 - the contract is "ParseError or rows", even for a bug of ours
        raise ParseError(TOOL, source, f"internal parser error ({type(exc).__name__}: {exc})") from exc


def _parse(chunks: Iterable[str], source: str) -> ParseResult:
    scan = _Scanner(chunks)
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
    rows_from_jobs(jobs, out, options if isinstance(options, dict) and not client_mode else None)
    vet(out)
    if not out.rows:
        errors = [w for w in out.warnings if "error=" in w]
        reason = "; ".join(errors) + " before moving any data" if errors else "fio moved no data in any job"
        raise ParseError(TOOL, source, reason)
    return out


def _is_result(obj: dict) -> bool:
    return isinstance(obj.get("jobs"), list) or isinstance(obj.get("client_stats"), list)


def _no_result_reason(scan: "_Scanner", failure: str | None) -> str:
    if failure == _CUT:
        return "fio output ends before its JSON document closes: was fio killed?"
    if failure:
        return f"no usable fio JSON document: {failure}"
    if not scan.seen_text:
        return "the output is empty: fio printed no result (option error or killed?)"
    return f"no fio JSON document found; the output starts with: {scan.first_line!r}"


# --- decoding, one top-level object at a time ------------------------------------------------------

_CUT = "the output ends inside it (cut off, or fio was killed?)"


class _Scanner:
    """Top-level objects of a text that arrives in chunks, with a bounded buffer.

    Only the text from the current candidate object on is kept. A candidate that does not decode
    because the text read so far ends inside it is retried with one more chunk (a status-interval
    object is small), then with all the rest of the text: a huge object is decoded about twice,
    never once per chunk (which would cost its size squared).
    """

    def __init__(self, chunks: Iterable[str]):
        self._chunks: Iterator[str] = iter(chunks)
        self.eof = False
        self.seen_text = False
        self.first_line = ""
        self._decoder = json.JSONDecoder(object_hook=_hook, parse_int=float)

    def _read(self, at_least: int) -> str:
        parts: list[str] = []
        got = 0
        while not self.eof and got < at_least:
            chunk = next(self._chunks, None)
            if chunk is None:
                self.eof = True
                break
            if not self.seen_text and chunk.lstrip("\ufeff").strip():
                self.seen_text = True
                self.first_line = chunk.lstrip("\ufeff").strip()[:400].splitlines()[0][:200]
            parts.append(chunk)
            got += len(chunk)
        return "".join(parts)

    def _read_all(self) -> str:
        parts = []
        while chunk := self._read(CHUNK):
            parts.append(chunk)
        return "".join(parts)

    def objects(self) -> Iterator[tuple[object, str | None]]:
        """(object, None) for each decoded object, (None, why) for a candidate that does not decode."""
        buf = self._read(1)
        pos = 0
        line_start = True  # whether buf[0] begins a line
        grown = False  # whether the candidate at buf[0] already made the buffer grow
        while True:
            start = pos
            if start == 0 and not line_start:
                nl = buf.find("\n")
                start = len(buf) if nl < 0 else nl + 1
            m = _OBJECT_START.search(buf, start)
            if m is None:
                if self.eof:
                    return
                buf, line_start = _keep_tail(buf, start, line_start)
                buf += self._read(CHUNK)
                pos = 0
                continue
            brace = m.end() - 1
            try:
                obj, end = self._decoder.raw_decode(buf, brace)
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(buf) - _TAIL or exc.msg.startswith("Unterminated string")
                if near_end and not self.eof:
                    # the object goes on beyond what was read: read one more chunk (status-interval
                    # objects are small), and if that was not enough, the rest: one more decode,
                    # instead of one per doubling
                    more = self._read_all() if grown and m.start() == 0 else self._read(CHUNK)
                    buf, pos, line_start, grown = buf[m.start():] + more, 0, True, True
                    continue
                yield None, _CUT if _cut_at(buf, exc) else f"invalid JSON in an object: {exc.msg}"
                pos, grown = brace + 1, False
                continue
            except RecursionError:
                yield None, "an object nested deeper than Python's recursion limit (not fio output)"
                pos, grown = brace + 1, False
                continue
            except ValueError as exc:  # e.g. a number the decoder refuses
                yield None, f"invalid JSON: {exc}"
                pos, grown = brace + 1, False
                continue
            yield obj, None
            pos, grown = end, False
            if pos > CHUNK:  # forget what was decoded, from a line start on
                cut = buf.rfind("\n", 0, pos) + 1
                if cut:
                    buf, pos, line_start = buf[cut:], pos - cut, True


def _cut_at(buf: str, exc: json.JSONDecodeError) -> bool:
    """Whether a decode error at the end of all the text means the text stops inside the object."""
    rest = buf[exc.pos:].strip()
    return exc.msg.startswith("Unterminated string") or not rest or bool(_PARTIAL_TOKEN.fullmatch(rest))


def _keep_tail(buf: str, start: int, line_start: bool) -> tuple[str, bool]:
    """What of buf may still begin an object once more text arrives: a blank start of a line."""
    nl = buf.rfind("\n", start)
    tail = buf[nl + 1:] if nl >= 0 else buf[start:]
    at_line_start = nl >= 0 or (line_start and start == 0)
    if at_line_start and not tail.strip(" \t\ufeff"):
        return tail, True
    return "", False  # the rest of this line cannot start an object


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
                    options={str(k): str(v) for k, v in options.items() if k in ("bs", "filesize")}
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
    ns = any(k in d for k in ("clat_ns", "lat_ns", "slat_ns"))
    scale, suffix = (1e9, "_ns") if ns else (1e6, "")
    clat, lat, slat = (d.get(k + suffix) for k in ("clat", "lat", "slat"))
    if isinstance(clat, dict) and clat and _sampled(clat, default=True):
        for stat in ("mean", "min", "max", "stddev"):
            if stat in clat:
                v[f"clat_{stat}"] = _num(clat[stat]) / scale
        pct = clat.get("percentile")
        for key, value in pct.items() if isinstance(pct, dict) else ():
            metric = _percentile_metric(key)
            if metric is not None:
                v[metric] = _num(value) / scale
    if isinstance(lat, dict) and "mean" in lat and _sampled(lat, default=True):
        v["lat_mean"] = _num(lat["mean"]) / scale
    if isinstance(slat, dict) and "mean" in slat and _sampled(slat, default=False):
        v["slat_mean"] = _num(slat["mean"]) / scale
    return ParsedDirection(op, v, complete=True)


_PCT_CACHE: dict[str, str | None] = {"50.000000": "clat_p50", "90.000000": "clat_p90", "95.000000": "clat_p95",
                                     "99.000000": "clat_p99", "99.900000": "clat_p99.9"}


def _percentile_metric(key: str) -> str | None:
    """'99.900000' -> 'clat_p99.9', None for a percentile not kept; remembered (every job repeats them)."""
    metric = _PCT_CACHE.get(key, "")
    if metric == "":
        metric = PERCENTILES.get(_num(key))
        if len(_PCT_CACHE) < 1000:  # odd outputs must not grow it without bound
            _PCT_CACHE[key] = metric
    return metric


def _sampled(stats: dict, *, default: bool) -> bool:
    """Whether a latency object has samples: its N (3.x); without N (2.x), a max above 0."""
    if "N" in stats:
        return _num(stats["N"]) > 0
    return default or _num(stats.get("max")) > 0


def _num(value: object) -> float:
    if type(value) is float:  # every JSON number is read as a float
        return value
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return math.nan


def _int(value: object) -> int:
    x = _num(value)
    return int(x) if math.isfinite(x) else 0
