"""Read vdbench's human-readable tables: summary.html, totals.html, <hd>.html, logfile.html, console.

Every table has a two-line header: line 1 holds group names (`.ReqstdOps...`, `read`, `cpu%`), line 2
the sub-column names (`rate resp`, `pct`, `sys+u`) under them. Which sub-columns exist differs by
version and workload (50407 FS runs show only the metadata operations that occurred), so the
columns are rebuilt from the header text each time instead of being hard-coded by position.
"""

from __future__ import annotations

import re

from fsbench.tools.vdbench.model import SUMMARY_KEYS, RdBlock, Record, is_avg_label, number_occurrences
from fsbench.tools.vdbench.text import complete_lines, number, start_line, strip_tags

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


def parse_tables(text: str, warnings: list[str], source: str) -> list[RdBlock]:
    """Run definitions (in report order, including RDs that started but reported nothing)."""
    lines = complete_lines(text, warnings, source)
    blocks: list[RdBlock] = []
    cur: RdBlock | None = None
    cols: list[str] | None = None
    keys: list[tuple[int, str]] = []
    bad = orphan = 0
    skip = False
    for i, raw in enumerate(lines):
        if skip:
            skip = False
            continue
        line = strip_tags(raw)
        start = start_line(line)
        if start:
            _, name, loops = start
            # logfile.html prints each start twice (anchor, then plain, 0-1 ms apart): the same
            # name and for-loop values again before any row is the same RD
            if cur is None or (cur.name, cur.loops) != (name, loops) or cur.has_data:
                cur = RdBlock(name, loops)
                blocks.append(cur)
            continue
        if _INTERVAL.search(line) and i + 1 < len(lines):
            head = header_columns(line, strip_tags(lines[i + 1]))
            if head:
                cols, skip = head, True
                keys = [(j, SUMMARY_KEYS[c]) for j, c in enumerate(head) if c in SUMMARY_KEYS]
                continue
        m = _ROW.match(line.strip())
        if not m:
            continue
        tokens = line.split()
        if cols is None or cur is None:
            orphan += 1
            continue
        if len(tokens) != len(cols):
            bad += 1
            continue
        rec = Record(m.group(1), {})
        for j, key in keys:
            v = number(tokens[j])
            if v is not None:
                rec.values.setdefault(key, v)
        if is_avg_label(rec.interval):
            if cur.avg is not None:
                bad += 1
                continue
            cur.avg = rec
        elif cur.avg is None:
            cur.intervals.append(rec)
        else:
            bad += 1  # an interval after the RD's average: not this RD's
    if bad:
        warnings.append(f"{source}: {bad} malformed table row(s) skipped")
    if orphan:
        warnings.append(f"{source}: {orphan} table row(s) outside any run definition skipped")
    number_occurrences(blocks)
    return blocks
