"""The rows of an mdtest output: its SUMMARY tables (rate, time) and IO500 result lines, each value checked
(cut mid-number, not finite, NA) with a warning for what is left out."""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field

from fsbench.core.tidy import ParseResult, measurement, snake

TOOL = "mdtest"
_STATS = ("max", "min", "mean", "stddev")
_NUMBER = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?$")
# mdtest prints "%14.3f": a line cut mid-number never matches this, so a final line without
# its newline is only trusted when every value has exactly this shape
_PRINTF_3F = re.compile(r"^-?[0-9]+\.[0-9]{3}$|^NA$")
_MISSING = {"na", "nan", "-nan", "+nan", "inf", "-inf", "+inf"}
_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9 ()/_.-]*$")
_IO500_FACTOR = {"gib/s": ("bandwidth", 2.0**30), "kiops": ("rate", 1000.0)}
#: warnings about single lines (and error lines remembered) before they are only counted
MAX_WARNINGS = 20


@dataclass
class Block:
    """One SUMMARY table being read."""

    kind: str
    iterations: int | None
    tasks: int | None
    line_no: int
    rows: dict[str, list[float | None]] = field(default_factory=dict)
    #: files or directories each file or directory phase handled per iteration (the `N tasks, M ...` line)
    items: int | None = None
    #: directories of the tree phases per iteration (from the command line), None when unknown
    tree_dirs: int | None = None


@dataclass
class State:
    """Everything seen so far in one output."""

    result: ParseResult = field(default_factory=ParseResult)
    block: Block | None = None
    blocks_seen: int = 0
    tasks: int | None = None
    items: int | None = None
    tasks_line: str | None = None  # the last "N tasks, M files" line not yet followed by a block
    started: bool = False
    finished: bool = False
    usage: bool = False
    iteration: int = 0
    errors: list[str] = field(default_factory=list)
    io500_last: str | None = None
    line_warnings: int = 0


def warn(st: State, text: str) -> None:
    """A warning about one line; past MAX_WARNINGS they are only counted."""
    if st.line_warnings < MAX_WARNINGS:
        st.result.warnings.append(text)
    st.line_warnings += 1


def add_row(st: State, block: Block, s: str, no: int, cut: bool) -> None:
    """One row of a SUMMARY table: its label and its last four numbers (max, min, mean, stddev)."""
    tokens = s.split()
    n = 0
    while n < len(tokens) and (_NUMBER.match(tokens[-1 - n]) or tokens[-1 - n].lower() in _MISSING):
        n += 1
    label = " ".join(tokens[: len(tokens) - n]).rstrip(":").strip()
    looks_like_row = bool(tokens) and tokens[0] in ("Directory", "File", "Tree")
    if n not in (4, 7) or not _LABEL.match(label):
        if looks_like_row:
            warn(st, f"line {no}: incomplete SUMMARY row skipped: {s!r}")
        return
    if cut and not all(_PRINTF_3F.match(t) for t in tokens[-n:]):
        warn(st, f"line {no}: the output ends in the middle of this row, skipped: {s!r}")
        return
    if label in block.rows:
        warn(st, f"line {no}: second '{label}' row in one SUMMARY block ignored")
        return
    # with --showRankStatistics the first three numbers are per-rank; the last four match a plain run
    block.rows[label] = [_value(st, t, label, no) for t in tokens[-4:]]


def _value(st: State, token: str, label: str, no: int) -> float | None:
    if token.upper() == "NA":
        return None  # mdtest's own "not available" (3.3.0 stonewall row): no row, no warning
    x = float(token) if _NUMBER.match(token) else math.nan
    if not math.isfinite(x):
        warn(st, f"line {no}: '{label}' has a non-finite value {token!r}; no row for it")
        return None
    return x


def close_block(st: State, at_eof: bool = False) -> None:
    """Turn the SUMMARY block being read into rows (at_eof: say when the output ends inside it)."""
    block, st.block = st.block, None
    if block is None:
        return
    where = f"SUMMARY {block.kind} block at line {block.line_no}"
    if not block.rows:
        st.result.warnings.append(f"{where} has no rows (output cut short?)")
        return
    if at_eof and not st.finished and list(block.rows)[-1] != "Tree removal":
        # every version prints Tree removal last: a table ending elsewhere at EOF was cut off
        st.result.warnings.append(
            f"the output ends inside the {where}: kept its {len(block.rows)} complete rows,"
            " later rows are missing"
        )
    metric = block.kind  # "rate" (op/s) or "time" (s: the numbers are seconds whatever the label says)
    for label, values in block.rows.items():
        items = block.tree_dirs if label.startswith("Tree") else block.items
        for stat, value in zip(_STATS, values):
            if value is not None:
                st.result.rows.append(
                    measurement(TOOL, snake(label), metric, value, stat=stat,
                                tasks=block.tasks, iterations=block.iterations, items=items)
                )


#: mdtest's options with a value (IOR 4.0's option table; 3.x's are a subset): a value never counts as a flag.
#: -D, -E, -L, -S and -Z are flags (they were read as taking a value, which swallowed the next flag)
_WITH_VALUE = set("abBdefGiIlnNpsVwWxz")


def tree_dirs(command_line: str, tasks: int | None) -> int | None:
    """The directories mdtest's tree phases make per iteration: (b^(z+1) - 1) / (b - 1) per tree (z + 1 when
    b is 1), one tree per task with -u else one; None when the command line cannot be read."""
    flags = read_flags(command_line)
    if flags is None or tasks is None:
        return None
    try:
        b, z = int(flags.get("b", "1")), int(flags.get("z", "0"))
    except ValueError:
        return None
    if b < 0 or z < 0 or z > 64:
        return None
    per_tree = 1 if b < 1 else (z + 1 if b == 1 else (b ** (z + 1) - 1) // (b - 1))
    return per_tree * (tasks if "u" in flags else 1)


def read_flags(command_line: str) -> dict[str, str] | None:
    """mdtest's single-letter flags on its printed command line (`Command line used:`), each with its value
    ("" for a flag without one); long options and operands skipped; None when the line cannot be read."""
    try:
        argv = shlex.split(command_line)[1:]
    except ValueError:
        return None
    if not argv:
        return None
    flags: dict[str, str] = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--") or not a.startswith("-") or len(a) < 2:
            i += 1  # a long option (--posix.odirect) or an operand: not the tree's
            continue
        letters = a[1:]
        for j, ch in enumerate(letters):
            if ch in _WITH_VALUE:
                rest = letters[j + 1:]
                if not rest and i + 1 < len(argv):
                    i += 1
                    rest = argv[i]
                flags[ch] = rest
                break
            flags[ch] = ""
        i += 1
    return flags


def io500_line(st: State, m: re.Match[str], cut: bool) -> None:
    """The rows of one IO500 `[RESULT]` line: its rate or bandwidth, and its time."""
    invalid, phase, value, unit, seconds = m.groups()
    operation = snake(phase)
    st.io500_last = operation
    if cut or not (_NUMBER.match(value) and _NUMBER.match(seconds)):
        st.result.warnings.append(f"IO500 result line for {phase} is incomplete, skipped")
        return
    metric, factor = _IO500_FACTOR[unit.lower()]
    x, t = float(value) * factor, float(seconds)
    if not (math.isfinite(x) and math.isfinite(t)):
        st.result.warnings.append(f"IO500 result line for {phase} has a non-finite value, skipped")
        return
    if any(r.get("operation") == operation and r["tool"] == "io500" for r in st.result.rows):
        st.result.warnings.append(f"more than one IO500 result for {operation} (several runs in one file?)")
    for name, v in ((metric, x), ("time", t)):
        st.result.rows.append(measurement("io500", operation, name, v, valid=invalid is None))
