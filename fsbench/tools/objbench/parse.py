"""Parse `juicefs objbench` output: its functional checks and its performance table, into tidy rows.

Functional checks (`| basic | put an object | pass |`): one row each, operation = the check in
snake_case, metric `functional` (unit `result`): 1 pass, 0 not supported, -1 failed; the printed
result is kept in a `result` column and a failure also becomes a warning (juicefs cuts long messages
to the table's width: `failed to get object with the offset out of r...`).

Performance (`| upload objects | 262.84 MiB/s | 30.44 ms/object |`): operation = the item in
snake_case; MiB/s -> bandwidth (B/s), objects/s -> rate (op/s), ms/object -> latency_mean (s); the
list item's cost is per list request (`4.66 ms/ 66 objects`: one request returning 66 objects).
An item the store does not support (`not support`) gives a row of the metric `supported` (unit
`result`, 0: not supported), shown as the guide's table shows it, and a warning. The parameter line
goes to meta.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from fsbench.core.errors import ParseError
from fsbench.core.tidy import OUTCOME_UNIT, ParseResult, measurement, snake, vet
from fsbench.core.units import is_whole_number, parse_size
from fsbench.tools.common import FirstText, parse_file_with, text_lines

TOOL = "juicefs-objbench"
FUNCTIONAL = "functional"
#: a performance item's outcome where the store cannot do it (0: not supported)
SUPPORTED = "supported"
RESULT_UNIT = OUTCOME_UNIT
_N = r"\d+(?:\.\d+)?"
_VALUE = re.compile(rf"^({_N})\s*(?:([KMGTP]i?B)/s|(objects/s))$")
_COST = re.compile(rf"^({_N})\s*(s|ms|us|µs)/\s*(?:(\d+)\s*)?objects?$")
_EXP = {"s": 0, "ms": -3, "us": -6, "µs": -6}
_PARAM = re.compile(r"([a-z-]+|NumThreads):\s*([0-9.]+\s*[KMGT]?i?B|\d+)")
_NOT_SUPPORTED = "not support"


def parse_path(path: str | Path) -> ParseResult:
    """Read a file as a stream of lines and parse it; ParseError when it cannot be read or holds no result."""
    return parse_file_with(parse_lines, TOOL, path)


def parse_text(text: str, source: str = "<string>") -> ParseResult:
    """Both tables of one run held in a string; a run cut off keeps what it printed."""
    return parse_lines(text.splitlines(), source)


def parse_lines(lines: Iterable[str], source: str = "<string>") -> ParseResult:
    """Both tables of one run read line by line (split as str.splitlines() splits a text)."""
    out = ParseResult(meta={"functional": 0, "performance": 0})
    table = ""  # CATEGORY (the functional checks) or ITEM (performance), from the last header row
    first = FirstText()
    for _raw, line in text_lines(lines, first):
        if line.startswith("Benchmark finished!"):
            for key, value in _PARAM.findall(line):
                out.meta[key] = parse_size(value) if not is_whole_number(value) else float(value)
        elif line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not line.endswith("|") or len(cells) != 3:
                out.warnings.append(f"objbench: table row cut off or malformed, left out: {line[:80]!r}")
            elif cells[0] in ("CATEGORY", "ITEM"):
                table = cells[0]
            elif table == "CATEGORY":
                _functional(cells, out)
            elif table == "ITEM":
                _performance(cells, out)
    vet(out)
    if not out.rows:
        start = first.line()
        raise ParseError(TOOL, source, "no juicefs objbench result table found" +
                         (f"; the output starts with: {start!r}" if start is not None else ": the output is empty"))
    return out


def _functional(cells: list[str], out: ParseResult) -> None:
    category, test, result = cells
    value = 1.0 if result == "pass" else 0.0 if result == _NOT_SUPPORTED else -1.0
    out.rows.append(measurement(TOOL, snake(test), FUNCTIONAL, value, unit=RESULT_UNIT, job=category,
                                result=result))
    out.meta["functional"] += 1
    if value < 0:
        out.warnings.append(f"objbench: {test} failed: {result}")


def _performance(cells: list[str], out: ParseResult) -> None:
    item, value, cost = cells
    operation = snake(item)
    if value == _NOT_SUPPORTED:
        out.rows.append(measurement(TOOL, operation, SUPPORTED, 0.0, unit=RESULT_UNIT))
        out.warnings.append(f"objbench: {item} is not supported by this object store")
        return
    v = _VALUE.match(value)
    if not v:
        out.warnings.append(f"objbench: {item}: value {value!r} not understood, row left out")
        return
    out.meta["performance"] += 1
    number = float(v.group(1))
    if v.group(2):
        out.rows.append(measurement(TOOL, operation, "bandwidth", number * parse_size("1" + v.group(2))))
    else:
        out.rows.append(measurement(TOOL, operation, "rate", number))
    if c := _COST.match(cost):
        out.rows.append(measurement(TOOL, operation, "latency_mean", float(f"{c.group(1)}e{_EXP[c.group(2)]}")))
    else:
        out.warnings.append(f"objbench: {item}: cost {cost!r} not understood")
