"""Read vdbench's flatfile.html: '*' comments, one header of column names, whitespace-separated rows."""

from __future__ import annotations

from collections.abc import Iterable

from fsbench.tools.vdbench.model import FLATFILE_KEYS, RdBlock, Record, number_occurrences
from fsbench.tools.vdbench.text import IntervalTail, complete_lines, fill, interval_label, number, strip_tags


def _header(tokens: list[str]) -> dict[str, int] | None:
    """Column positions by lower-cased name when the tokens are a flatfile header line."""
    names = [t.lower() for t in tokens]
    if "run" not in names or "interval" not in names:
        return None
    if any(number(t) is not None for t in tokens):
        return None
    cols: dict[str, int] = {}
    for i, name in enumerate(names):
        cols.setdefault(name, i)  # first wins: a duplicated name must not shift the mapping
    return cols


def _starts_new_block(cur: RdBlock | None, name: str, rec: Record) -> bool:
    """A row belongs to a new RD when the name changes, after an average row, or when the
    interval number goes back (for-loop RDs repeat the same name back to back)."""
    if cur is None or cur.name != name or cur.avg is not None:
        return True
    n = rec.number
    if n is not None and cur.intervals:
        last = cur.intervals[-1].number
        return last is not None and n <= last
    return False


def parse_flatfile(lines: Iterable[str], warnings: list[str], source: str = "flatfile.html",
                   keep_intervals: bool = True) -> list[RdBlock]:
    """Run definitions (in file order) with their interval and average records.

    `lines` keep their line ends; keep_intervals=False keeps only the last interval record of
    each RD (and their count), for callers that report averages only.
    """
    cols: dict[str, int] | None = None
    ncols = 0
    keys: list[tuple[int, str]] = []
    blocks: list[RdBlock] = []
    cur: RdBlock | None = None
    bad = nonfinite = 0
    lasts: dict[int, tuple[Record, list[str], list[tuple[int, str]]]] = {}  # block -> its last interval
    for raw in complete_lines(lines, warnings, source):
        line = strip_tags(raw).strip()
        if not line or line[0] == "*":
            continue
        tokens = line.split()
        if cols is None or not (tokens[0][:1].isdigit() and len(tokens) == ncols):
            head = _header(tokens)
            if head is not None:
                # a (repeated) header: later rows follow its columns
                cols, ncols = head, len(tokens)
                keys = [(i, FLATFILE_KEYS[n]) for n, i in head.items() if n in FLATFILE_KEYS]
                continue
        if cols is None:
            continue  # text before the header (title line leftovers)
        if len(tokens) != ncols:
            bad += 1
            continue
        name, label = tokens[cols["run"]], tokens[cols["interval"]]
        if not interval_label(label):
            bad += 1
            continue
        rec = Record(label, {})
        if _starts_new_block(cur, name, rec):
            cur = RdBlock(name)
            if not keep_intervals:
                cur.intervals = IntervalTail()
            blocks.append(cur)
        assert cur is not None
        if rec.number is None:
            nonfinite += fill(rec, tokens, keys)
            cur.avg = rec
        elif keep_intervals:
            nonfinite += fill(rec, tokens, keys)
            cur.intervals.append(rec)
        else:
            # an interval that will not be reported: only the last of each RD needs its values
            # (for an RD without an average); reading every cell of a long run is what costs
            cur.intervals.append(rec)
            lasts[id(cur)] = (rec, tokens, keys)
    for rec, tokens, row_keys in lasts.values():
        nonfinite += fill(rec, tokens, row_keys)
    if bad:
        warnings.append(f"{source}: {bad} malformed row(s) skipped (wrong column count or interval)")
    if nonfinite:
        warnings.append(f"{source}: {nonfinite} cell(s) hold NaN or infinity; no value read there")
    number_occurrences(blocks)
    return blocks
