"""Whether a `juicefs bench` output is whole: a cut one (a full disk, an output cap, a killed pipe) must fail
as a ParseError naming what is missing, never pass as the few rows before the cut.

What juicefs bench prints, and when (1.0 to 1.4; the old free text of <= 0.15 below):
- `Benchmark finished!`, the parameter line (BlockSize, BigFileSize, SmallFileSize, SmallFileCount,
  NumThreads) and, on a JuiceFS mount only, `Time used: ...`; then the whole table at once, between a top
  border and a closing border line that is the same as the top one.
- Its rows: Write / Read big file unless BigFileSize is 0; Write / Read small file and Stat file unless
  SmallFileSize or SmallFileCount is 0; on a JuiceFS mount (where it reads the client's counters, the
  `Time used` line) FUSE operation, Update meta, Put / Get / Delete object, then (1.x) Write into cache and
  Read from cache, which are not required here.
- The old free text prints each result line as its step ends (big write, big read, small write, small
  read, Stated), then on a JuiceFS mount the counters' lines and `Used: ...` last. A cut just before the
  counters cannot be told from a run on a directory that is no JuiceFS mount, which prints none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BIG = ("Write big file", "Read big file")
SMALL = ("Write small file", "Read small file", "Stat file")
COUNTERS = ("FUSE operation", "Update meta", "Put object", "Get object", "Delete object")
#: the old free text's results in the order it prints them (operation names as the parser gives them)
OLD_STEPS = ("write_big_file", "read_big_file", "write_small_file", "read_small_file", "stat_file")
OLD_LABELS = dict(zip(OLD_STEPS, BIG + SMALL))
CUT = "the output was cut (a full disk, an output cap, juicefs bench stopped?)"


@dataclass
class Seen:
    """What an output showed of juicefs bench's end: the parser fills it line by line."""

    finished: bool = False  # `Benchmark finished!`
    params: bool = False  # the BlockSize ... NumThreads line
    time_used: bool = False  # `Time used:` (>= 1.0: counters were read, their rows follow in the table)
    header: bool = False  # the table's ITEM | VALUE | COST row
    top_border: str | None = None
    closed: bool = False  # a border the same as the top one came after the last row
    labels: list[str] = field(default_factory=list)  # the table's rows read, by their ITEM
    bad_rows: list[str] = field(default_factory=list)  # table rows cut off or malformed
    old_steps: list[str] = field(default_factory=list)  # the old free text's OLD_STEPS read
    old_counters: bool = False  # an old counters' line (FUSE operation: N, avg: ...)
    old_used: bool = False  # the old `Used:` line
    old_partial: bool = False  # the last line starts like an old result line but did not read as one
    last: str = ""  # the last line that is not blank

    def row(self, label: str) -> None:
        self.labels.append(label)
        self.closed = False

    def border(self, line: str, after_rows: bool) -> None:
        if self.top_border is None:
            self.top_border = line
        elif after_rows:
            self.closed = line == self.top_border


def incomplete(seen: Seen, meta: dict) -> str | None:
    """Why the output is not a whole juicefs bench output (None: whole, or not one at all)."""
    table = seen.finished or seen.params or seen.time_used or seen.header or seen.labels
    if table and (why := _table(seen, meta)):
        return why
    if seen.old_steps or seen.old_counters or seen.old_used:
        return _old(seen)
    return None


def _cut(seen: Seen, why: str) -> str:
    return f"{why}; it ends with {seen.last[:80]!r}: {CUT}"


def _expected(seen: Seen, meta: dict) -> list[str]:
    """The rows the table must have: those its parameters and its `Time used` line call for, and the
    rest of every group one of whose rows it has."""
    def wanted(group: tuple[str, ...], *sizes: str) -> bool:
        if any(meta.get(s) == 0 for s in sizes):
            return False
        return seen.params or any(label in seen.labels for label in group)

    out = [*BIG] if wanted(BIG, "BigFileSize") else []
    out += SMALL if wanted(SMALL, "SmallFileSize", "SmallFileCount") else ()
    out += COUNTERS if seen.time_used or any(label in seen.labels for label in COUNTERS) else ()
    return out


def _table(seen: Seen, meta: dict) -> str | None:
    missing = [label for label in _expected(seen, meta) if label not in seen.labels]
    lacking = f" (missing: {', '.join(missing)})" if missing else ""
    if not seen.labels:
        return _cut(seen, f"the output ends before the rows of its result table{lacking}")
    if not seen.closed:
        return _cut(seen, f"the result table is cut off after its {len(seen.labels)} rows, with no closing "
                          f"border line{lacking}")
    if seen.bad_rows:
        return f"a row of the result table is cut off or malformed: {seen.bad_rows[0][:80]!r}"
    if missing:
        return (f"the result table has no row {', '.join(missing)}, which juicefs bench prints for the options "
                "it ran with (an edited output?)")
    return None


def _old(seen: Seen) -> str | None:
    if seen.old_counters and not seen.old_used:
        return _cut(seen, "the client's counters end with no 'Used:' line, which juicefs bench prints last")
    if seen.old_partial:
        return _cut(seen, "its last result line is cut off")
    if seen.old_used or not seen.old_steps:
        return None
    last = max(OLD_STEPS.index(s) for s in seen.old_steps)
    missing = [OLD_LABELS[s] for s in OLD_STEPS[last + 1:]]
    return _cut(seen, f"the results stop early: no {', '.join(missing)}") if missing else None
