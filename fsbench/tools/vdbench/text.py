"""Text helpers shared by the vdbench readers: reading, tag stripping, numbers, RD start lines, failures.

Reports are read line by line (a long run's summary.html or flatfile.html holds one row per
interval: hundreds of MB), never as one string.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from fsbench.core.errors import ParseError
from fsbench.tools.common import file_lines, open_text
from fsbench.tools.vdbench.model import Record

TOOL = "vdbench"
COMPLETED = "Vdbench execution completed successfully"

_TAG = re.compile(r"<[^>]*>")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?")
_NON_FINITE = re.compile(r"[-+]?(?:nan|inf(?:inity)?)", re.IGNORECASE)
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
# an I/O error as vdbench logs it (errorlog.html, console), raw and file-system runs alike:
# "hd1-0: 10:12:05.209 op: read   lun: /dev/sdc   lba:  81604378624 0x12FFC5F000 xfer:     4096 errno: EIO: 'I/O error'"
_IO_ERROR = re.compile(
    r"\bop:\s+(read|write)\s+lun:\s+(\S.*?)\s+lba:\s+(\d+)\b.*?\bxfer(?:size)?:\s+(\d+)\s+errno:\s+(\S.*?)\s*$"
)
# the file-system report of the same error: "Read error using file /mnt/x/vdb_f0001.file"
_FILE_ERROR = re.compile(r"\b(Read|Write) error using file (\S.*?)\s*$")
_VALIDATION = re.compile(r"Data Validation error|At least one Data Validation error|Time of first corruption")
# what only a run that got past its parameters prints (status.html, logfile.html, the console)
_RUNNING = re.compile(r"Starting slaves|Slaves connected|Starting slave:|All slaves are now connected"
                      r"|\bStarting\s+rd=|Starting RD=")


def read_lines(path: Path) -> Iterator[str]:
    """A file's lines, each with its line end (undecodable bytes replaced, an overlong line cut to
    tools.common.MAX_LINE characters); ParseError when it cannot be opened (at once) or read."""
    return _lines_of(open_text(TOOL, path), str(path))


def _lines_of(f: TextIO, source: str) -> Iterator[str]:
    with f:
        try:
            yield from file_lines(f)
        except OSError as exc:
            raise ParseError(TOOL, source, f"cannot read the file: {exc.strerror or exc}") from None


def complete_lines(lines: Iterable[str], warnings: list[str], source: str) -> Iterator[str]:
    """The lines without their line ends and without an unterminated last line: a file cut
    mid-write may end inside a number ("1.1" of "1.110"), and vdbench ends every line it writes."""
    for line in lines:
        if line.endswith(("\n", "\r")):
            yield line.rstrip("\r\n")
            continue
        last = strip_tags(line).strip()
        if last:
            warnings.append(f"{source}: last line has no line end (file cut mid-write?); skipped: {last[:80]!r}")


def strip_tags(line: str) -> str:
    """A report line without its HTML tags (anchors, <i><b>, <title>, <pre>)."""
    return _TAG.sub("", line) if "<" in line else line


def number(token: str) -> float | None:
    """A finite float from a table cell, None for 'n/a', garbage, nan or overflowing values."""
    if not _NUMBER.fullmatch(token):
        return None
    value = float(token)
    return value if math.isfinite(value) else None


def non_finite(token: str) -> bool:
    """Whether a cell is a number that is not finite: NaN, infinity, or one that overflows (1e999)."""
    return bool(_NON_FINITE.fullmatch(token)) or (bool(_NUMBER.fullmatch(token)) and not math.isfinite(float(token)))


def interval_label(token: str) -> bool:
    """Whether a token can label a table row: an interval number or avg_F-L (digits bounded, so
    that int() never meets a number it refuses)."""
    return bool(_LABEL.fullmatch(token))


_LABEL = re.compile(r"\d{1,9}|avg_\d{1,9}-\d{1,9}")


def start_line(line: str) -> tuple[str, str, dict[str, str]] | None:
    """(time, RD name, for-loop values) of a 'Starting RD=' line (tags already stripped)."""
    if "Starting RD=" not in line:
        return None
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


def find_version(lines: Iterable[str]) -> str | None:
    """'vdbench50407' from a 'Vdbench distribution: vdbench50407' line, if any (near the top)."""
    for i, line in enumerate(lines):
        if m := _VERSION.search(line):
            return m.group(1)
        if i > 200:  # vdbench prints it on the second line; do not read a huge log to the end
            return None
    return None


@dataclass
class Failures:
    """What vdbench logged about failures beyond its fatal exception: I/O and validation errors."""

    reads: int = 0
    writes: int = 0
    first: str = ""  # "read of /dev/sdc at lba 81604378624 (4096 bytes): EIO: 'I/O error'"
    validation: bool = False
    running: bool = False  # the run got past its parameters (slaves started, an RD started)
    fatal: str | None = None  # the message of the first Java exception vdbench printed

    @property
    def io(self) -> int:
        """How many I/O errors were logged."""
        return self.reads + self.writes

    def scan(self, lines: Iterable[str], *, count_io: bool = True) -> None:
        """Read one file's lines (count_io=False: only the other signals, for a file that repeats
        the I/O error lines of one already counted)."""
        file_errors: list[tuple[str, str]] = []
        for line in lines:
            if "op:" in line and count_io and (m := _IO_ERROR.search(line)):
                if m.group(1) == "read":
                    self.reads += 1
                else:
                    self.writes += 1
                if not self.first:
                    self.first = (f"{m.group(1)} of {m.group(2).strip()} at lba {m.group(3)} "
                                  f"({m.group(4)} bytes): {m.group(5)}")
            elif "error using file" in line and count_io and (m := _FILE_ERROR.search(line)):
                file_errors.append((m.group(1).lower(), m.group(2)))
            elif "Data Validation" in line or "corruption" in line:
                self.validation = self.validation or bool(_VALIDATION.search(line))
            if not self.running and ("Start" in line or "lave" in line):
                self.running = bool(_RUNNING.search(line))
            if self.fatal is None and ("Exception" in line or "Error" in line) and \
                    (m := _EXCEPTION.match(strip_tags(line).strip())):
                self.fatal = m.group(1).strip()
        if count_io and not self.io and file_errors:  # a console that only has the file-system form
            for op, _name in file_errors:
                self.reads += op == "read"
                self.writes += op == "write"
            self.first = f"{file_errors[0][0]} of {file_errors[0][1]}"

    def reason(self, fatal: str | None) -> str | None:
        """Why the run stopped, in words (None when nothing points at I/O or validation errors)."""
        if self.validation:
            text = "vdbench stopped on Data Validation errors (data read back differs from what it wrote)"
        elif self.io:
            kinds = " and ".join(f"{n} {op} error{'s' if n > 1 else ''}"
                                 for op, n in (("read", self.reads), ("write", self.writes)) if n)
            text = f"vdbench stopped on I/O errors of the storage ({kinds}; the first: {self.first})"
        else:
            return None
        return f"{text}: {fatal}" if fatal else text


def fill(record: Record, tokens: list[str], keys: list[tuple[int, str]], setdefault: bool = False) -> int:
    """Put a row's cells into its record (keys: column index -> canonical key); the number of cells
    that hold NaN or infinity (no value is read there)."""
    bad = 0
    values = record.values
    for i, key in keys:
        v = number(tokens[i])
        if v is not None:
            if not (setdefault and key in values):
                values[key] = v
        elif non_finite(tokens[i]):
            bad += 1
    return bad


class IntervalTail(list[Record]):
    """An RD's interval records when their rows are not wanted: only the last one is kept (its
    number tells a new for-loop RD apart), every one is counted (len), so a run of a million
    intervals costs one record of memory."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def append(self, record: Record) -> None:
        self.seen += 1
        self[:] = [record]

    def __len__(self) -> int:
        return self.seen
