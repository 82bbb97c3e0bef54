"""Turn run-definition records into tidy rows (canonical units: op/s, B/s, s, %)."""

from __future__ import annotations

import math

from fsbench.core.tidy import measurement, snake
from fsbench.tools.vdbench.model import META_OPS, RdBlock, Record
from fsbench.tools.vdbench.text import TOOL

MIB = 1048576.0  # vdbench's MB/sec is 1024**2 bytes (its header says so)


def _ms(value: float) -> float:
    """Milliseconds to seconds, without binary noise such as 3.7199999999999996e-05."""
    return float(f"{value / 1000.0:.15g}")


def _mib(value: float) -> float:
    """MiB/s to B/s (same rounding as _ms, for stable golden files)."""
    return float(f"{value * MIB:.15g}")


def _record_rows(rec: Record, common: dict) -> list[dict]:
    """Rows of one table row; an operation only appears when it occurred (rate > 0)."""
    v = rec.values
    out: list[dict] = []

    def add(op: str, metric: str, value: float) -> None:
        if math.isfinite(value):  # a unit conversion can overflow a huge (corrupt) cell
            out.append(measurement(TOOL, op, metric, value, **common))

    rate = v.get("all.rate")
    if rate is not None:
        add("all", "rate", rate)
    if "all.mb" in v:
        add("all", "bandwidth", _mib(v["all.mb"]))
    # with no operation in the interval vdbench prints a response time of 0: not a latency
    if "all.resp" in v and (rate is None or rate > 0):
        add("all", "latency_mean", _ms(v["all.resp"]))
    if "all.cpu" in v:
        add("all", "cpu_usage", v["all.cpu"])
    for op in ("read", "write"):
        if f"{op}.rate" in v:  # file-system runs report each direction fully
            if v[f"{op}.rate"] > 0:
                add(op, "rate", v[f"{op}.rate"])
                if f"{op}.resp" in v:
                    add(op, "latency_mean", _ms(v[f"{op}.resp"]))
                if f"{op}.mb" in v:
                    add(op, "bandwidth", _mib(v[f"{op}.mb"]))
        elif f"{op}.resp" in v and (rate is None or rate > 0):
            # raw runs report only read% and a response time per direction; rates are not
            # derived (rate x read%) so that every value is one vdbench printed
            pct = v.get("read.pct")
            share = None if pct is None else (pct if op == "read" else 100.0 - pct)
            occurred = share > 0 if share is not None else v[f"{op}.resp"] > 0
            if occurred:
                add(op, "latency_mean", _ms(v[f"{op}.resp"]))
    for op in META_OPS:
        r = v.get(f"{op}.rate")
        if r is not None and r > 0:
            add(op, "rate", r)
            if f"{op}.resp" in v:
                add(op, "latency_mean", _ms(v[f"{op}.resp"]))
    return out


def block_rows(block: RdBlock, *, host: str, intervals: bool, warnings: list[str]) -> list[dict]:
    """The mean rows of an RD's average row, then (if asked) the value rows of each interval."""
    common: dict = {"host": host, "job": block.name, "rd_index": block.index}
    common.update({f"for{snake(k)}": val for k, val in block.loops.items()})
    out: list[dict] = []
    if block.avg is not None:
        if block.avg.empty_average:
            where = f" on host {host}" if host else ""
            warnings.append(
                f"RD {block.name}{where}: average {block.avg.interval} covers no interval "
                "(the RD was shorter than the warm-up); no mean rows"
            )
        else:
            out += _record_rows(block.avg, {**common, "stat": "mean"})
    if intervals:
        for rec in block.intervals:
            out += _record_rows(rec, {**common, "stat": "value", "interval": rec.number})
    return out
