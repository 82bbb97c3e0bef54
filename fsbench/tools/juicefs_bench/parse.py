"""Parse `juicefs bench` output, old free text (<= 0.15) and the >= 1.0 table, into tidy rows.

Rows (tool "juicefs-bench", host "", job ""): operation = snake_case item label (`write_big_file`,
`stat_file`, `fuse_operation`, ...; the old `Get object first byte` keeps its own name, it is not the
same measurement as the table's `Get object`); MiB/s -> "bandwidth" B/s, files/s -> "rate" op/s,
N operations -> "ops" count, cost per file / per op -> "latency_mean" s; the Time used / Used line ->
operation "total" with "runtime" s, "cpu_usage" % and "memory_peak" B. The parameter line (or the
sizes in old result lines) goes to meta as BlockSize / BigFileSize / SmallFileSize (bytes),
SmallFileCount and NumThreads (counts). ANSI colours, `\\r` progress bars, indentation and log lines
are tolerated. No result at all raises ParseError, and so does an output that is not whole (a table cut
off, or without the rows its parameters call for: complete.py), naming what is missing; no other
exception escapes.

Verdicts: on a terminal juicefs bench colours each VALUE and COST green, yellow or red against its own
limits (which scale with -p). Where the output holds those colours (fsbench runs it under a
pseudo-terminal for this), each row gets a `verdict` column: good (green), fair (yellow), poor (red),
the VALUE's colour on its bandwidth/rate row and the COST's on its latency_mean row.

Counts that are not measurements of a cost: juicefs prints the cost per operation of an item with
0 operations as `0.00 ms/op` (and a negative count, the difference of the client's counters when
they went backwards, with whatever cost). A cost over no operation is no latency, so its
latency_mean row is LEFT OUT, with a warning naming the item; the count itself is a row (0 is a
true count; a negative one is kept as printed and flagged in its `warnings` column, see
tidy.check_row).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from fsbench.core.errors import ParseError
from fsbench.core.tidy import WARNINGS, ParseResult, measurement, snake, vet
from fsbench.core.units import parse_size
from fsbench.tools.common import FirstText, parse_file_with, text_lines
from fsbench.tools.juicefs_bench.complete import Seen, incomplete

TOOL = "juicefs-bench"
_N = r"-?\d+(?:\.\d+)?"
_SIZE = r"\d+(?:\.\d+)?\s*[KMGTP]?i?B"
#: juicefs bench's colours of a cell: the SGR code before its number (1;32m green, 1;33m yellow, 1;31m red)
_COLOUR = re.compile(r"\x1b\[(?:\d;)?3([123])m")
VERDICTS = {"2": "good", "3": "fair", "1": "poor"}
VERDICT = "verdict"
_PARAM = re.compile(rf"\b(BlockSize|BigFileSize|SmallFileSize|SmallFileCount|NumThreads):\s*({_SIZE}|\d+)\b")
_TOTAL = re.compile(
    rf"^(?:Time used|Used):\s*({_N})\s*s,\s*CPU:\s*({_N})\s*%,\s*(?:Memory|MEM):\s*({_N})\s*([KMGTP]?i?B)\b"
)
_VALUE = re.compile(rf"^({_N})\s*(?:([KMGTP]i?B)/s|(files/s)|(operations))$")
_COST = re.compile(rf"^({_N})\s*(s|ms|us|µs)/(?:file|op)$")
_EXP = {"s": 0, "ms": -3, "us": -6, "µs": -6}  # power of ten of each unit in seconds
_BORDER = re.compile(r"^\+[-+]+$")
_OLD_BIG = re.compile(rf"^(Written|Read) a big file \(({_SIZE})\):\s*\(({_N})\s*MiB/s\)")
_OLD_SMALL = re.compile(
    rf"^(Written|Read) (\d+) small files \(({_SIZE})\):\s*({_N})\s*files/s,\s*({_N})\s*ms for each file"
)
_OLD_STAT = re.compile(rf"^Stated (\d+) files:\s*({_N})\s*files/s,\s*({_N})\s*ms for each file")
_OLD_METRIC = re.compile(rf"^([A-Za-z][A-Za-z ]*?):\s*({_N}),\s*avg:\s*({_N})\s*ms$")
#: how every old result line starts: a last line that starts so and did not read as one was cut
_OLD_START = re.compile(r"^(?:Written|Read|Stated|FUSE operation|Update meta|Put object|Get object|Delete object"
                        r"|Write into cache|Read from cache|Used)\b")
_LOG = re.compile(r"<(WARNING|ERROR|FATAL)>:\s*(.*?)\s*(?:\[[^\]]*\])?$")
_PROGRESS = re.compile(r"\b(?:blocks|files)(?: count)?:\s*\d+\s*/\s*\d+")
_OLD_NAMES = {"Written": "write", "Read": "read"}


def parse_path(path: str | Path) -> ParseResult:
    """Read a file as a stream of lines and parse it; ParseError when it cannot be read or holds no result."""
    return parse_file_with(parse_lines, TOOL, path)


def parse_text(text: str, source: str = "<string>") -> ParseResult:
    """Parse one `juicefs bench` output held in a string, either generation."""
    return parse_lines(text.splitlines(), source)


def parse_lines(lines: Iterable[str], source: str = "<string>") -> ParseResult:
    """Parse one `juicefs bench` output read line by line (split as str.splitlines() splits a text)."""
    state = _State()
    first = FirstText()
    for raw, line in text_lines(lines, first):
        try:
            state.feed(line, raw)
        except (ValueError, OverflowError) as exc:
            state.out.warnings.append(f"cannot read {line[:80]!r} ({exc})")
    out = vet(state.finish())
    if why := incomplete(state.seen, out.meta):
        raise ParseError(TOOL, source, why)
    if not out.rows:
        raise ParseError(TOOL, source, _no_result_reason(first.line(), state.progress))
    return out


def _colour_of(cell: str) -> str:
    """The verdict of a table cell's colour ('' when it has none)."""
    m = _COLOUR.search(cell)
    return VERDICTS[m.group(1)] if m else ""


def _scaled(number: str, exp10: int) -> float:
    """'38.80' ms -> 0.0388 s: scaling in the exponent gives the float nearest the printed decimal."""
    return float(f"{number}e{exp10}")


def _no_result_reason(first: str | None, progress: bool) -> str:
    if first is None:
        return "the output is empty: juicefs bench printed no result"
    if progress:
        return ("the output ends inside the progress bars, before any result "
                "(benchmark interrupted, or the output cut off?)")
    return f"no juicefs bench result (table or 'Written a big file' lines) found; the output starts with: {first!r}"


class _State:
    """What has been read so far: rows, warnings, and where the result table stands."""

    def __init__(self) -> None:
        self.out = ParseResult(meta={"format": ""})
        self.logs: Counter = Counter()
        self.table_open = False  # a row was read and no border after it yet
        self.progress = False
        self.seen = Seen()

    def add(self, operation: str, metric: str, value: float, verdict: str = "") -> None:
        # a value that is not finite reaches tidy.vet, which leaves it out with a warning
        row = measurement(TOOL, operation, metric, value)
        if verdict:
            row[VERDICT] = verdict
        self.out.rows.append(row)

    def feed(self, line: str, raw: str = "") -> None:
        self.seen.last, self.seen.old_partial = line, False
        if m := _LOG.search(line):
            self.logs[f"<{m.group(1)}>: {m.group(2)}"] += 1
        elif line.startswith("|"):
            self._table_row(line, raw)
        elif _BORDER.match(line):
            self.seen.border(line, self.table_open)
            self.table_open = False
        elif line == "Benchmark finished!":
            self.seen.finished = True
        elif m := _TOTAL.match(line):
            self.seen.time_used = line.startswith("Time used")
            self.seen.old_used = not self.seen.time_used
            self.add("total", "runtime", float(m.group(1)))
            self.add("total", "cpu_usage", float(m.group(2)))
            self.add("total", "memory_peak", parse_size(m.group(3) + m.group(4)))
        elif line.startswith("BlockSize:"):
            self.seen.params = True
            for key, value in _PARAM.findall(line):
                self.out.meta[key] = parse_size(value)
        elif _PROGRESS.search(line):
            self.progress = True
        else:
            self._old_line(line)

    def _table_row(self, line: str, raw: str = "") -> None:
        cells = [c.strip() for c in line.strip("|").split("|")]
        colours = [_colour_of(c) for c in raw.strip().strip("|").split("|")] if "\x1b" in raw else []
        value_verdict, cost_verdict = (colours[1], colours[2]) if len(colours) == 3 else ("", "")
        if cells and cells[0].upper() == "ITEM":
            self.seen.header = True
            return
        if not line.endswith("|") or len(cells) != 3:
            self.seen.bad_rows.append(line)
            return
        self.out.meta["format"] = "table"
        self.table_open = True
        label, value, cost = cells
        self.seen.row(label)
        operation = snake(label)
        if not (v := _VALUE.match(value)):
            self.out.warnings.append(f"{operation}: value {value!r} not understood, row left out")
            return
        number = float(v.group(1))
        if v.group(2):
            self.add(operation, "bandwidth", number * parse_size("1" + v.group(2)), value_verdict)
        elif v.group(3):
            self.add(operation, "rate", number, value_verdict)
        else:
            self._count(operation, number, value_verdict)
            if number <= 0:
                self._no_cost(operation, number)
                return
        if c := _COST.match(cost):
            self.add(operation, "latency_mean", _scaled(c.group(1), _EXP[c.group(2)]), cost_verdict)
        else:
            self.out.warnings.append(f"{operation}: cost {cost!r} not understood")

    def _no_cost(self, operation: str, count: float) -> None:
        self.out.warnings.append(f"{operation}: a cost over {count:g} operations is not a latency; "
                                 "no latency_mean row")

    def _count(self, operation: str, number: float, verdict: str = "") -> None:
        self.add(operation, "ops", number, verdict)
        if number < 0 and self.out.rows and self.out.rows[-1]["operation"] == operation:
            why = (f"negative count {number:g} kept as printed (juicefs reports the difference of the "
                   "client's counters, which went backwards)")
            self.out.rows[-1][WARNINGS] = why
            self.out.warnings.append(f"{operation}: {why}")

    def _old_line(self, line: str) -> None:
        """The free-text results of juicefs <= 0.15."""
        if m := _OLD_BIG.match(line):
            operation = f"{_OLD_NAMES[m.group(1)]}_big_file"
            self.seen.old_steps.append(operation)
            self.out.meta["BigFileSize"] = parse_size(m.group(2))
            self.add(operation, "bandwidth", float(m.group(3)) * 2**20)
        elif m := _OLD_SMALL.match(line):
            operation = f"{_OLD_NAMES[m.group(1)]}_small_file"
            self.seen.old_steps.append(operation)
            self.out.meta["SmallFileCount"] = float(m.group(2))
            self.out.meta["SmallFileSize"] = parse_size(m.group(3))
            self.add(operation, "rate", float(m.group(4)))
            self.add(operation, "latency_mean", _scaled(m.group(5), -3))
        elif m := _OLD_STAT.match(line):
            self.seen.old_steps.append("stat_file")
            self.add("stat_file", "rate", float(m.group(2)))
            self.add("stat_file", "latency_mean", _scaled(m.group(3), -3))
        elif m := _OLD_METRIC.match(line):
            operation = snake(m.group(1))
            self.seen.old_counters = True
            count = float(m.group(2))
            self._count(operation, count)
            if count <= 0:
                self._no_cost(operation, count)
            else:
                self.add(operation, "latency_mean", _scaled(m.group(3), -3))
        else:
            self.seen.old_partial = bool(_OLD_START.match(line))
            return
        self.out.meta["format"] = self.out.meta["format"] or "text"

    def finish(self) -> ParseResult:
        """Warnings about what was logged; the result."""
        for message, count in self.logs.items():
            self.out.warnings.append(f"juicefs logged {message}" + (f" ({count} times)" if count > 1 else ""))
        return self.out
