"""What the vdbench table readers produce: run definitions with interval and average records.

Both readers (flatfile.html and the summary-style tables) translate their version-specific column
names into the same canonical keys, so that only one place (rows.py) turns numbers into tidy rows.
Canonical keys are "<operation>.<field>": operation "all" (ReqstdOps / i/o), "read", "write" or a
metadata operation; field "rate" (op/s), "resp" (ms), "mb" (MiB/s), "pct" (read %) or "cpu" (%).
Values stay in vdbench's own units here; rows.py converts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fsbench.core.units import is_whole_number

#: file-system metadata operations, in vdbench's column order (50406 flatfile)
META_OPS = (
    "mkdir", "rmdir", "create", "open", "close", "delete",
    "getattr", "setattr", "access", "copy", "move",
)
_AVG = re.compile(r"avg_(\d+)-(\d+)$")


def _op_keys(sep: str) -> dict[str, str]:
    """'<op><sep>rate' / '<op><sep>resp' -> canonical, for read, write and metadata operations."""
    out = {}
    for op in ("read", "write", *META_OPS):
        out[f"{op}{sep}rate"] = f"{op}.rate"
        out[f"{op}{sep}resp"] = f"{op}.resp"
    return out


#: flatfile.html header names (lower-cased) -> canonical key; 50401..50407, raw and FS
FLATFILE_KEYS: dict[str, str] = {
    "rate": "all.rate",
    "resp": "all.resp",
    "mb/sec": "all.mb",
    "cpu_used": "all.cpu",
    "read%": "read.pct",
    "mb_read": "read.mb",
    "mb_write": "write.mb",
    **_op_keys("_"),
}

#: summary/totals/host table columns ("<line-1 group>_<line-2 name>", lower-cased, dots
#: stripped, e.g. ".ReqstdOps..." over "rate" -> "reqstdops_rate") -> canonical key
SUMMARY_KEYS: dict[str, str] = {
    "i/o_rate": "all.rate",
    "reqstdops_rate": "all.rate",
    "resp_time": "all.resp",
    "reqstdops_resp": "all.resp",
    "mb/sec_1024**2": "all.mb",
    "mb/sec_total": "all.mb",
    "cpu%_sys+u": "all.cpu",
    "cpu%_total": "all.cpu",
    "read_pct": "read.pct",
    "mb/sec_read": "read.mb",
    "mb/sec_write": "write.mb",
    **_op_keys("_"),
}


@dataclass
class Record:
    """One table row: its interval label ('7' or 'avg_2-60') and canonical values."""

    interval: str
    values: dict[str, float] = field(default_factory=dict)

    @property
    def number(self) -> int | None:
        """The interval number of an interval row, None for an average row."""
        return int(self.interval) if is_whole_number(self.interval) else None

    @property
    def empty_average(self) -> bool:
        """True for an average over no interval (avg_2-1: the RD was shorter than the warm-up)."""
        m = _AVG.match(self.interval)
        return m is not None and int(m.group(1)) > int(m.group(2))


@dataclass
class RdBlock:
    """One run definition as one file reports it (for-loops repeat a name: `index` tells apart)."""

    name: str
    loops: dict[str, str] = field(default_factory=dict)
    intervals: list[Record] = field(default_factory=list)
    avg: Record | None = None
    index: int = 0

    @property
    def has_data(self) -> bool:
        """Whether any row (interval or average) was read for this RD."""
        return self.avg is not None or bool(self.intervals)


def number_occurrences(blocks: list[RdBlock]) -> None:
    """Set each block's index to the 0-based occurrence of its name."""
    seen: dict[str, int] = {}
    for b in blocks:
        b.index = seen.get(b.name, 0)
        seen[b.name] = b.index + 1


def is_avg_label(token: str) -> bool:
    """Whether a token is an average-row label such as avg_2-60."""
    return bool(_AVG.match(token))
