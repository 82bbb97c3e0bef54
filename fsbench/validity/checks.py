"""The validity checks tools and target kinds declare: each gives verdicts, in numbers, per operation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from fsbench.core.units import format_value
from fsbench.validity.pagecache import PAGE_CACHE
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence


@dataclass(frozen=True)
class Verdict:
    """One check's verdict on one operation of one tool's rows in a case."""

    check: str
    tool: str
    operation: str
    #: True held, False flagged, None: the check cannot judge this operation, and `detail` says why (the row
    #: stays unchecked with those words, unless another check judges it)
    ok: bool | None
    detail: str


class Check(Protocol):
    """A validity check: its name, and verdicts from a case's tool rows and its backends' evidence."""

    name: str

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        """Verdicts for the operations this check concerns (none when they moved nothing)."""
        ...


class RowsCheck:
    """A check that reads only the tool's own rows (figures the tool measured of its backend), so it judges
    also a case whose backends gave no counters (fsbench.validity.judge)."""

    name = ""

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        raise NotImplementedError


def tool_sum(rows: list[dict], operation: str, metric: str) -> float:
    """A tool's figure summed over its jobs and hosts (host `all`, an aggregate, only when alone)."""
    picked = [r for r in rows if r.get("operation") == operation and r.get("metric") == metric
              and r.get("stat", "value") == "value"]
    parts = [r for r in picked if r.get("host") != "all"] or picked
    return float(sum(float(r.get("value") or 0.0) for r in parts))


def tool_max(rows: list[dict], operation: str, metric: str) -> float:
    """The largest of a tool's figures (its longest job's runtime)."""
    return max((float(r.get("value") or 0.0) for r in rows if r.get("operation") == operation
                and r.get("metric") == metric and r.get("stat", "value") == "value"), default=0.0)


def _pct(share: float) -> str:
    return f"{share * 100:.0f} %"


def _b(n: float) -> str:
    return format_value(float(n), "B")


def _bw(n: float) -> str:
    return format_value(float(n), "B/s")


def _s(n: float) -> str:
    return format_value(float(n), "s")


class ReadFromCache:
    """'read served from cache': the backend served well below what the tool read in its window."""

    name = "read served from cache"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        read = tool_sum(rows, "read", "io_bytes")
        if read <= 0 or not seen.services:
            return []
        share = seen.read_tool / read
        ok = share >= limits.cache_ratio
        detail = (f"backend served {_pct(share)} of the {_b(read)} {tool} read ({_b(seen.read_tool)})"
                  + ("" if ok else f", under {_pct(limits.cache_ratio)}: the rest came from a cache "
                                   "(the client's or the page cache), not from the store"))
        return [Verdict(self.name, tool, "read", ok, detail)]


class WriteNotDurable:
    """'write not durable in the timed window': the store had the bytes later than the tool's timing says.

    The backend's clock gives U, the time from the first upload with data to the last upload's end (a
    multipart completion included); the tool's own time T is its runtime. Even if every upload fell
    inside T, the data needed max(T, U) to reach the store: W / max(T, U) is the most the durable
    bandwidth can be, and a write is flagged when that is below `durable_ratio` of the tool's figure, or
    when the backend had less than `durable_ratio` of W when the tool ended (a write-back client).
    """

    name = "write not durable in the timed window"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        written = tool_sum(rows, "write", "io_bytes")
        if written <= 0 or not seen.services:
            return []
        bw = tool_sum(rows, "write", "bandwidth")
        timed = tool_max(rows, "write", "runtime")
        at_end = seen.write_tool / written
        durable = written / max(timed, seen.durable_s) if seen.durable_s else None
        said = (f"; durable bandwidth at most {_bw(durable)} ({_pct(durable / bw)} of {tool}'s {_bw(bw)}): the "
                f"store took {_s(seen.durable_s or 0)} from the first upload to the last, {tool} timed "
                f"{_s(timed)}" if durable and bw else "")
        if at_end < limits.durable_ratio:
            later = (f"; {_b(seen.write_after)} more arrived in the {_s(seen.after_s)} after"
                     + ("" if seen.quiet else " (still arriving when fsbench stopped waiting)"))
            return [Verdict(self.name, tool, "write", False,
                            f"the backend had {_pct(at_end)} of the {_b(written)} {tool} wrote when it ended"
                            f"{later}{said}")]
        if durable is not None and bw and durable < limits.durable_ratio * bw:
            return [Verdict(self.name, tool, "write", False,
                            f"{tool}'s timing ended before the upload (at close, outside it){said}")]
        return [Verdict(self.name, tool, "write", True,
                        f"the backend had {_pct(at_end)} of the {_b(written)} {tool} wrote when it ended{said}")]


READ_FROM_CACHE = ReadFromCache()
WRITE_NOT_DURABLE = WriteNotDurable()


class PageCacheFit:
    """'working set fits in the page cache', where no backend counts what it served (fsbench.validity.pagecache)."""

    name = PAGE_CACHE.name

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        if seen.services or seen.host is None:  # a backend's counters judge reads better
            return []
        said = PAGE_CACHE.judge_host(tool, tool_sum(rows, "read", "io_bytes"), seen.host, limits)
        return [Verdict(self.name, tool, "read", *said)] if said else []


PAGE_CACHE_FIT = PageCacheFit()
