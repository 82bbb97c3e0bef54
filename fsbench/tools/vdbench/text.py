"""Text helpers shared by the vdbench readers: reading, tag stripping, numbers, RD start lines."""

from __future__ import annotations

import math
import re
from pathlib import Path

from fsbench.errors import ParseError

TOOL = "vdbench"
COMPLETED = "Vdbench execution completed successfully"

_TAG = re.compile(r"<[^>]*>")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?")
# "15:25:29.001 Starting RD=rd1; elapsed=6000; fwdrate=max. For loops: None" (tags stripped);
# the console prints the same without the time's milliseconds in some builds, hence \.?\d*
_START = re.compile(r"^(\d{1,2}:\d\d:\d\d\.?\d*)\s+Starting RD=([^;\s]+)(.*)$")
_LOOPS = re.compile(r"For loops:\s*(.*)$")
_LOOP_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(\S+)")
_VERSION = re.compile(r"Vdbench distribution:\s*(vdbench[0-9A-Za-z_.]+)")
# java.lang.RuntimeException: Unexpected EOF in parameter file.
_EXCEPTION = re.compile(
    r"^(?:Exception in thread \"[^\"]*\"\s+)?(?:[A-Za-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error):\s*(\S.*)$"
)


def read_text(path: Path) -> str:
    """A file's text (undecodable bytes replaced); ParseError when it cannot be read."""
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise ParseError(TOOL, str(path), f"cannot read the file: {exc.strerror or exc}") from exc


def complete_lines(text: str, warnings: list[str], source: str) -> list[str]:
    """The text's lines without an unterminated last line: a file cut mid-write may end inside a
    number ("1.1" of "1.110"), and vdbench ends every line it writes with a newline."""
    lines = text.splitlines()
    if lines and not text.endswith(("\n", "\r")):
        last = strip_tags(lines.pop()).strip()
        if last:
            warnings.append(f"{source}: last line has no line end (file cut mid-write?); skipped: {last[:80]!r}")
    return lines


def strip_tags(line: str) -> str:
    """A report line without its HTML tags (anchors, <i><b>, <title>, <pre>)."""
    return _TAG.sub("", line)


def number(token: str) -> float | None:
    """A finite float from a table cell, None for 'n/a', garbage, nan or overflowing values."""
    if not _NUMBER.fullmatch(token):
        return None
    value = float(token)
    return value if math.isfinite(value) else None


def start_line(line: str) -> tuple[str, str, dict[str, str]] | None:
    """(time, RD name, for-loop values) of a 'Starting RD=' line (tags already stripped)."""
    m = _START.match(line.strip())
    if not m:
        return None
    return m.group(1), m.group(2), parse_loops(m.group(3))


def parse_loops(text: str) -> dict[str, str]:
    """'... For loops: threads=2 iorate=max' -> {'threads': '2', 'iorate': 'max'}; None -> {}."""
    m = _LOOPS.search(text)
    if not m:
        return {}
    return {k.lower(): v for k, v in _LOOP_PAIR.findall(m.group(1))}


def find_version(text: str) -> str | None:
    """'vdbench50407' from a 'Vdbench distribution: vdbench50407' line, if any."""
    m = _VERSION.search(text)
    return m.group(1) if m else None


def find_error(text: str) -> str | None:
    """The message of the first Java exception vdbench printed (its fatal error), if any."""
    for line in text.splitlines():
        m = _EXCEPTION.match(strip_tags(line).strip())
        if m:
            return m.group(1).strip()
    return None
