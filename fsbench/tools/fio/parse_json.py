"""fio JSON / json+ output (also mixed with text, several objects, client/server) -> tidy rows."""

from __future__ import annotations

import json
import math
import re
from collections import Counter

from fsbench.errors import ParseError
from fsbench.tidy import ParseResult, measurement

DIRECTIONS = ("read", "write", "trim")
#: fio percentile keys -> our metric names (only those present are emitted)
PERCENTILES = {
    "50.000000": "clat_p50",
    "90.000000": "clat_p90",
    "95.000000": "clat_p95",
    "99.000000": "clat_p99",
    "99.900000": "clat_p99.9",
}
_ERRNO = {13: "EACCES", 25: "ENOTTY", 28: "ENOSPC", 30: "EROFS", 84: "EILSEQ (verify failed)"}
_OBJECT_START = re.compile(r"^\{\s*$", re.MULTILINE)
_decoder = json.JSONDecoder()


def json_objects(text: str) -> tuple[list[dict], bool]:
    """Every complete top-level object that starts on a line of its own; and whether one was cut off."""
    found: list[dict] = []
    truncated = False
    pos = 0
    while True:
        m = _OBJECT_START.search(text, pos)
        if not m:
            break
        try:
            obj, end = _decoder.raw_decode(text, m.start())
        except json.JSONDecodeError:
            truncated = True
            pos = m.end()
            continue
        if isinstance(obj, dict):
            found.append(obj)
        pos = end
    return found, truncated


def _is_result(obj: dict) -> bool:
    return isinstance(obj.get("jobs"), list) or isinstance(obj.get("client_stats"), list)


def parse_text(text: str, source: str = "<string>") -> ParseResult:
    """Parse fio's JSON output; the last complete result object wins (--status-interval)."""
    objects, truncated = json_objects(text)
    results = [o for o in objects if _is_result(o)]
    if not results:
        if truncated:
            reason = "fio output ends before its JSON document closes: was fio killed?"
        elif not text.strip():
            reason = "the output is empty: fio printed no result (option error or killed?)"
        else:
            first = text.strip().splitlines()[0][:200]
            reason = f"no fio JSON document found; the output starts with: {first!r}"
        raise ParseError("fio", source, reason)
    final = results[-1]
    out = ParseResult(meta={"fio_version": str(final.get("fio version", "")), "objects": len(results)})
    if truncated:
        out.warnings.append(
            f"a JSON object after the last complete one is cut off (run killed?); using object {len(results)}"
        )
    try:
        _rows_of(final, out)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        raise ParseError("fio", source, f"unexpected structure in fio's JSON: {exc}") from None
    if not out.rows:
        errors = [w for w in out.warnings if "error=" in w]
        reason = "; ".join(errors) + " before moving any data" if errors else "fio moved no data in any job"
        raise ParseError("fio", source, reason)
    return out


def _rows_of(obj: dict, out: ParseResult) -> None:
    client_mode = "client_stats" in obj
    entries = obj["client_stats"] if client_mode else obj["jobs"]
    # the aggregate entry has no job name of its own; use the group's single job name when there is one
    names_by_group: dict[object, set] = {}
    for e in entries:
        if isinstance(e, dict) and e.get("jobname") != "All clients":
            names_by_group.setdefault(e.get("groupid"), set()).add(str(e.get("jobname", "")))
    seen: Counter = Counter()
    for e in entries:
        if not isinstance(e, dict):
            continue
        name = str(e.get("jobname", ""))
        aggregate = client_mode and name == "All clients"
        host = "all" if aggregate else str(e.get("hostname", "")) if client_mode else ""
        if aggregate:
            names = names_by_group.get(e.get("groupid"), set())
            name = next(iter(names)) if len(names) == 1 else "all"
        index = seen[(host, name)]
        seen[(host, name)] += 1
        err = int(e.get("error", 0) or 0)
        if err:
            label = _ERRNO.get(err, f"errno {err}")
            out.warnings.append(f"fio job {name!r}{' on ' + host if host else ''} ended with error={err} ({label})")
        extra = {"job_index": index, "groupid": int(e.get("groupid", 0) or 0)}
        for direction in DIRECTIONS:
            d = e.get(direction)
            if isinstance(d, dict):
                _direction_rows(d, direction, host, name, extra, out.rows)


def _direction_rows(d: dict, op: str, host: str, job: str, extra: dict, rows: list[dict]) -> None:
    io_bytes = _num(d.get("io_bytes"))
    total_ios = _num(d.get("total_ios"))
    if not (io_bytes > 0 or total_ios > 0):
        return  # a direction is reported only when it moved data

    def add(metric: str, value: float) -> None:
        if math.isfinite(value):
            rows.append(measurement("fio", op, metric, value, host=host, job=job, **extra))

    add("bandwidth", _num(d.get("bw_bytes", _num(d.get("bw")) * 1024)))
    add("iops", _num(d.get("iops")))
    add("io_bytes", io_bytes)
    add("ops", total_ios)
    add("runtime", _num(d.get("runtime")) / 1e3)
    clat = d.get("clat_ns") or {}
    if _num(clat.get("N", 1)) > 0 and clat:
        for stat in ("mean", "min", "max", "stddev"):
            if stat in clat:
                add(f"clat_{stat}", _num(clat[stat]) / 1e9)
        pct = clat.get("percentile") or {}
        for key, metric in PERCENTILES.items():
            if key in pct:
                add(metric, _num(pct[key]) / 1e9)
    lat = d.get("lat_ns") or {}
    if "mean" in lat and _num(lat.get("N", 1)) > 0:
        add("lat_mean", _num(lat["mean"]) / 1e9)
    slat = d.get("slat_ns") or {}
    if "mean" in slat and _num(slat.get("N", 0)) > 0:
        add("slat_mean", _num(slat["mean"]) / 1e9)


def _num(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
