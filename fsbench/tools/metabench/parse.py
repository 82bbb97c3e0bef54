"""metabench's JSON -> tidy rows: latencies in seconds per operation, rates in op/s, hosts combined.

One document per host and run: `calls` mode (per-call latency of seed 000's operations) or
`concurrency` mode (seed 002's create_write, open_read, rename and delete at T threads). Every row has
the operation, a metric of the tidy vocabulary and its canonical unit; `ops` counts the timed calls.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult, measurement, per_host, vet

TOOL = "metabench"
OUTPUT = "metabench.json"
SCHEMA = 1
#: bytes of a metabench.json read at most: a document is a few KB, so a bigger file is not one and is
#: refused before it is decoded (a 100 MB JSON document would take about 1 GB of memory)
MAX_BYTES = 4 << 20
#: seed 000's operations in its order (its `newchunk` is JuiceFS-internal: see docs/scenario.md)
CALLS = ("mkdir", "mvdir", "rmdir", "readdir_10", "readdir_1k", "mknod", "create", "rename", "unlink", "lookup",
         "getattr", "setattr", "access", "setxattr", "getxattr", "removexattr", "listxattr_1", "listxattr_10",
         "link", "symlink", "write", "read_1", "read_10")
#: seed 002's NNBench operations, named as the NNBench adapter names them
CONCURRENCY = ("create_write", "open_read", "rename", "delete")
MODES = {"calls": CALLS, "concurrency": CONCURRENCY}
#: the metadata-engine requests per timed call of an operation, as the target's client counted them
#: (metabench --counters: read just before and after 20 of its timed calls, spread over them, outside their
#: timing); its unit is requests per call
ENGINE_REQUESTS = "engine_requests_per_call"
ENGINE_UNIT = "request/call"
#: JSON field (nanoseconds) -> metric (seconds)
LATENCIES = (("mean_ns", "latency_mean"), ("min_ns", "latency_min"), ("max_ns", "latency_max"),
             ("stddev_ns", "latency_stddev"), ("p50_ns", "latency_p50"), ("p90_ns", "latency_p90"),
             ("p99_ns", "latency_p99"), ("p999_ns", "latency_p99.9"))
#: hosts that start an operation further apart than this share of its shortest run, and than SKEW_S (what
#: NTP and a process's wake-up on a busy host may differ by: 8 ms seen on 2 loaded cores), did not run it
#: together
SKEW, SKEW_S = 0.1, 0.02


def parse_text(text: str, source: str = "<string>") -> ParseResult:
    """Rows of one metabench document; ParseError saying what is wrong when it is not a complete one."""
    doc = _document(text, source)
    mode = doc.get("mode")
    if mode not in MODES:
        raise ParseError(TOOL, source, f"unknown mode {mode!r}: expected calls or concurrency")
    ops = doc.get("operations")
    if not isinstance(ops, list):
        raise ParseError(TOOL, source, "no `operations` list")
    common = _common(doc, mode, source)
    result = ParseResult(meta={k: doc[k] for k in ("version", "host", "kernel", "dir", "fs_magic", "timer_overhead_ns",
                                                   "started", "ended") if k in doc})
    result.meta["phases"] = {}
    seen: set[str] = set()
    for i, op in enumerate(ops):
        name = op.get("name") if isinstance(op, dict) else None
        if name not in MODES[mode]:
            raise ParseError(TOOL, source, f"operation #{i + 1}: {name!r} is not a metabench {mode} operation")
        if name in seen:
            raise ParseError(TOOL, source, f"operation {name} appears twice")
        seen.add(name)
        status = op.get("status")
        if status in ("unsupported", "failed"):
            what = "not supported by this file system" if status == "unsupported" else "failed"
            result.warnings.append(f"{name}: {what} ({op.get('error') or 'no reason given'}); no rows")
            continue
        if status != "ok":
            raise ParseError(TOOL, source, f"operation {name}: status {status!r} (expected ok, unsupported or failed)")
        result.rows += _rows(op, name, mode, common, source)
        if isinstance(op.get("engine_error"), str):
            result.warnings.append(f"{name}: the client's metadata-engine counters could not be read "
                                   f"({op['engine_error']}); its calls are not checked against the engine")
        if isinstance(op.get("started"), (int, float)) and isinstance(op.get("ended"), (int, float)):
            result.meta["phases"][name] = (float(op["started"]), float(op["ended"]))
    if not seen:
        raise ParseError(TOOL, source, "the run holds no operation")
    return vet(result)


def parse_path(path: Path) -> ParseResult:
    """A metabench.json file (or a folder holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / OUTPUT
    try:
        with path.open("rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ParseError(TOOL, str(path), f"cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise ParseError(TOOL, str(path), f"more than {MAX_BYTES >> 20} MiB: a metabench document is a few KB "
                                          "(one entry per operation), so this is not one (the wrong file, or "
                                          "a runaway output); it was not read")
    return parse_text(data.decode("utf-8", errors="replace"), str(path))


def combine_hosts(parts: dict[str, ParseResult]) -> ParseResult:
    """Per-host rows (host = the scenario's host name) plus the aggregate (host `all`).

    The aggregate adds rates and counts, weighs mean latencies by each host's count, takes the
    smallest minimum and the largest maximum, and averages the other latency figures (percentiles of
    the union cannot be had from the hosts' percentiles: the mean of them is what is shown).
    """
    out = per_host(parts)
    if len(parts) < 2:
        return out
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in out.rows:
        groups.setdefault((r["operation"], r["metric"]), []).append(r)
    counts = {(r["host"], r["operation"]): r["value"] for r in out.rows if r["metric"] == "ops"}
    for (op, metric), rows in groups.items():
        if len(rows) < len(parts):
            out.warnings.append(f"{op}: measured on {len(rows)} of {len(parts)} hosts; no aggregate")
            continue
        values = [r["value"] for r in rows]
        if metric in ("rate", "ops"):
            value = sum(values)
        elif metric == "latency_min":
            value = min(values)
        elif metric == "latency_max":
            value = max(values)
        elif metric == "latency_mean":
            weights = [counts.get((r["host"], op), 0.0) for r in rows]
            total = sum(weights)
            value = sum(v * w for v, w in zip(values, weights)) / total if total else sum(values) / len(values)
        else:
            value = sum(values) / len(values)
        extra = {k: v for k, v in rows[0].items() if k not in ("host", "value", "warnings")}
        out.rows.append({**extra, "host": "all", "value": float(value)})
    out.warnings += _skew_warnings(parts)
    return out


def _skew_warnings(parts: dict[str, ParseResult]) -> list[str]:
    """Operations the hosts did not start together (metabench's barrier holds them to a millisecond or
    so, a few on busy hosts; more means the barrier was not used or the hosts' clocks disagree)."""
    out = []
    names = {op for p in parts.values() for op in p.meta.get("phases", {})}
    for op in sorted(names):
        spans = [p.meta["phases"][op] for p in parts.values() if op in p.meta.get("phases", {})]
        if len(spans) < 2:
            continue
        skew = max(s for s, _ in spans) - min(s for s, _ in spans)
        shortest = min(e - s for s, e in spans)
        if skew > max(SKEW * shortest, SKEW_S):
            out.append(f"{op}: the hosts started it {skew * 1e3:.1f} ms apart, {skew / max(shortest, 1e-9):.0%} of "
                       "its shortest run (clocks that disagree, or no barrier): the aggregate is not of one "
                       "simultaneous load")
    return out


def _document(text: str, source: str) -> dict:
    if not text.strip():
        raise ParseError(TOOL, source, "empty output: metabench wrote nothing (see its stderr)")
    if not text.lstrip("\ufeff \t\r\n").startswith("{"):
        raise ParseError(TOOL, source, f"not a metabench JSON document: it begins with {text.strip()[:60]!r}")
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        if not text.rstrip().endswith("}"):  # a run cut short (killed, disk full, a partial copy)
            raise ParseError(TOOL, source, f"not a complete JSON document: it ends early (truncated) after "
                                           f"line {text.rstrip().count(chr(10)) + 1}") from None
        raise ParseError(TOOL, source, f"not a complete JSON document: {exc.msg} at line {exc.lineno} "
                                       f"column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:  # NaN, 5,000-digit numbers, nesting beyond the stack
        raise ParseError(TOOL, source, f"not a metabench result: {exc}") from None
    if not isinstance(doc, dict) or doc.get("tool") != TOOL:
        raise ParseError(TOOL, source, 'not a metabench result (no "tool": "metabench")')
    schema = doc.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or not 1 <= schema <= SCHEMA:
        raise ParseError(TOOL, source, f"schema {schema!r} is not one this parser reads (1 to {SCHEMA})")
    if doc.get("complete") is not True:
        raise ParseError(TOOL, source, 'the run did not finish (no "complete": true at the end)')
    return doc


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a measurement")


def _common(doc: dict, mode: str, source: str) -> dict:
    """The columns every row of the document carries: the run's shape."""
    keys = ("iterations", "warmup") if mode == "calls" else ("threads", "files_per_thread", "bytes")
    out: dict = {"mode": mode}
    for k in keys:
        v = doc.get(k)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ParseError(TOOL, source, f"`{k}` is missing or not a whole number ({v!r})")
        out[k] = v
    return out


def _number(op: dict, key: str, name: str, source: str) -> float:
    v = op.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        raise ParseError(TOOL, source, f"operation {name}: `{key}` is missing or not a number ({v!r})")
    return float(v)


def _rows(op: dict, name: str, mode: str, common: dict, source: str) -> list[dict]:
    count = _number(op, "count", name, source)
    if count < 1:
        raise ParseError(TOOL, source, f"operation {name}: status ok with {count:g} timed calls")
    rows = [measurement(TOOL, name, "ops", count, **common)]
    if mode == "concurrency":
        rows.append(measurement(TOOL, name, "rate", _number(op, "rate", name, source), **common))
    rows += [measurement(TOOL, name, metric, _number(op, key, name, source) / 1e9, **common)
             for key, metric in LATENCIES]
    if "engine_requests" in op:
        calls = _number(op, "engine_calls", name, source)
        if calls >= 1:
            rows.append(measurement(TOOL, name, ENGINE_REQUESTS,
                                    _number(op, "engine_requests", name, source) / calls, unit=ENGINE_UNIT,
                                    engine_calls=int(calls), **common))
    return rows
