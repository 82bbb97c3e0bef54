"""Read vdbench's human-readable tables: summary.html, totals.html, <hd>.html, logfile.html, console.

Every table has a two-line header: line 1 holds group names (`.ReqstdOps...`, `read`, `cpu%`), line 2
the sub-column names (`rate resp`, `pct`, `sys+u`) under them. Which sub-columns exist differs by
version and workload (50407 FS runs show only the metadata operations that occurred), so the
columns are rebuilt from the header text each time instead of being hard-coded by position.
Lines arrive one at a time (a long run's tables are huge); a header is recognised by looking one
line ahead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fsbench.tools.vdbench.model import SUMMARY_KEYS, RdBlock, Record, is_avg_label, number_occurrences
from fsbench.tools.vdbench.text import (
    IntervalTail,
    complete_lines,
    fill,
    interval_label,
    number,
    start_line,
    strip_tags,
)

_INTERVAL = re.compile(r"(?:^|\s)(\.*interval\.*)(?=\s|$)", re.IGNORECASE)
_TOKEN = re.compile(r"\S+")
# a table row starts with the time of day and the interval number or avg label
_ROW = re.compile(r"^\d{1,2}:\d\d:\d\d\.\d+\s+(\d+|avg_\d+-\d+)(?:\s|$)")


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Characters two spans share; negative: the gap between them."""
    return min(a[1], b[1]) - max(a[0], b[0])


def header_columns(line1: str, line2: str) -> list[str] | None:
    """Column names of a two-line table header, e.g. ['tod', 'interval', 'reqstdops_rate', ...]."""
    m = _INTERVAL.search(line1)
    if not m:
        return None
    # what precedes the interval group is the date over the time-of-day column ("Mar 08, 2019",
    # "5月 10, 2023"): skip it
    top = [(t.start(), t.end(), t.group()) for t in _TOKEN.finditer(line1) if t.start() >= m.start(1)]
    sub = [(t.start(), t.end(), t.group()) for t in _TOKEN.finditer(line2)]
    # the sub-header is indented under the date and holds names, never numbers
    if not sub or not line2[:1].isspace() or any(number(t[2]) is not None for t in sub):
        return None
    owner: list[int] = []
    for s0, s1, _ in sub:
        # each sub-column belongs to the group above it (most shared characters, else nearest)
        owner.append(max(range(len(top)), key=lambda i: _overlap((top[i][0], top[i][1]), (s0, s1))))
    cols: list[tuple[int, str]] = []
    for i, (t0, _, name) in enumerate(top):
        if i not in owner:
            cols.append((t0, name.strip(".").lower()))
    for (s0, _, name), i in zip(sub, owner):
        cols.append((s0, f"{top[i][2].strip('.').lower()}_{name.lower()}"))
    cols.sort(key=lambda c: c[0])
    names = ["tod"] + [c[1] for c in cols]
    return names if names[1] == "interval" else None


def parse_tables(lines: Iterable[str], warnings: list[str], source: str,
                 keep_intervals: bool = True) -> list[RdBlock]:
    """Run definitions (in report order, including RDs that started but reported nothing).

    `lines` keep their line ends; keep_intervals=False keeps only the last interval record of
    each RD (and their count), for callers that report averages only.
    """
    reader = _TableReader(warnings, source, keep_intervals)
    pending: str | None = None  # a line that may be the first of a two-line header
    for raw in complete_lines(lines, warnings, source):
        line = strip_tags(raw)
        if pending is not None:
            head = header_columns(pending, line)
            previous, pending = pending, None
            if head:
                reader.header(head)
                continue
            reader.line(previous)
        if ("nterval" in line or "NTERVAL" in line) and _INTERVAL.search(line):
            pending = line  # decided by the next line
        else:
            reader.line(line)
    if pending is not None:
        reader.line(pending)
    return reader.finish()


class _TableReader:
    """State of one report being read: the current RD and the columns of its last header."""

    def __init__(self, warnings: list[str], source: str, keep_intervals: bool):
        self.warnings, self.source, self.keep_intervals = warnings, source, keep_intervals
        self.blocks: list[RdBlock] = []
        self.cur: RdBlock | None = None
        self.cols: list[str] | None = None
        self.keys: list[tuple[int, str]] = []
        self.bad = self.orphan = self.non_finite = 0
        self.lasts: dict[int, tuple[Record, list[str], list[tuple[int, str]]]] = {}  # RD -> its last interval

    def header(self, head: list[str]) -> None:
        self.cols = head
        self.keys = [(j, SUMMARY_KEYS[c]) for j, c in enumerate(head) if c in SUMMARY_KEYS]

    def line(self, line: str) -> None:
        start = start_line(line)
        if start:
            _, name, loops = start
            cur = self.cur
            # logfile.html prints each start twice (anchor, then plain, 0-1 ms apart): the same
            # name and for-loop values again before any row is the same RD
            if cur is None or (cur.name, cur.loops) != (name, loops) or cur.has_data:
                self.cur = RdBlock(name, loops)
                if not self.keep_intervals:
                    self.cur.intervals = IntervalTail()
                self.blocks.append(self.cur)
            return
        m = _ROW.match(line.strip()) if ":" in line else None
        if not m:
            return
        tokens = line.split()
        if self.cols is None or self.cur is None:
            self.orphan += 1
            return
        if len(tokens) != len(self.cols) or not interval_label(m.group(1)):
            self.bad += 1
            return
        rec = Record(m.group(1), {})
        cur = self.cur
        if is_avg_label(rec.interval):
            if cur.avg is not None:
                self.bad += 1
                return
            self.non_finite += fill(rec, tokens, self.keys, setdefault=True)
            cur.avg = rec
        elif cur.avg is None:
            if self.keep_intervals:
                self.non_finite += fill(rec, tokens, self.keys, setdefault=True)
            else:  # not reported: only the last interval of each RD needs its values
                self.lasts[id(cur)] = (rec, tokens, self.keys)
            cur.intervals.append(rec)
        else:
            self.bad += 1  # an interval after the RD's average: not this RD's

    def finish(self) -> list[RdBlock]:
        for rec, tokens, keys in self.lasts.values():
            self.non_finite += fill(rec, tokens, keys, setdefault=True)
        if self.bad:
            self.warnings.append(f"{self.source}: {self.bad} malformed table row(s) skipped")
        if self.orphan:
            self.warnings.append(f"{self.source}: {self.orphan} table row(s) outside any run definition skipped")
        if self.non_finite:
            self.warnings.append(f"{self.source}: {self.non_finite} cell(s) hold NaN or infinity; no value read there")
        number_occurrences(self.blocks)
        return self.blocks
