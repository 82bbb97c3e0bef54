"""The files of one vdbench output directory: which report gives the numbers, read as a flatfile or as
tables, and the host reports summary.html links."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from fsbench.core.errors import ParseError
from fsbench.tools.vdbench.flatfile import parse_flatfile
from fsbench.tools.vdbench.model import RdBlock
from fsbench.tools.vdbench.summary import parse_tables
from fsbench.tools.vdbench.text import read_lines, strip_tags

STANDARD = ("flatfile.html", "summary.html", "totals.html", "logfile.html")
_CONSOLE_SUFFIXES = (".log", ".txt", ".out")
_HOST_LINK = re.compile(r'HREF="([A-Za-z0-9_.-]+)\.html"', re.IGNORECASE)
#: how much of the end of a report is read to find vdbench's completion line
_TAIL = 64 << 10


class OutputDir:
    """Sibling files of one output directory, read line by line on demand (None: absent or unreadable)."""

    def __init__(self, directory: Path):
        self.directory = directory

    def exists(self, name: str) -> bool:
        """Whether the directory holds a regular file of that name."""
        try:
            return (self.directory / name).is_file()
        except OSError:
            return False

    def lines(self, name: str) -> Iterator[str] | None:
        """The lines of a file, read on demand; None when it is absent or unreadable."""
        if not self.exists(name):
            return None
        try:
            return read_lines(self.directory / name)
        except ParseError:
            return None

    def contains(self, name: str, needle: str, *, tail: bool = False) -> bool:
        """Whether a file holds a string (tail: only in its last _TAIL bytes, where vdbench ends a run)."""
        p = self.directory / name
        try:
            with p.open("rb") as f:
                if tail:
                    f.seek(0, 2)
                    f.seek(max(0, f.tell() - _TAIL))
                    return needle.encode() in f.read()
                data = needle.encode()
                carry = b""
                while block := f.read(1 << 20):
                    if data in carry + block:
                        return True
                    carry = block[-len(data):]
        except OSError:
            return False
        return False


def _looks_like_flatfile(lines: Iterator[str] | None) -> bool:
    """Whether the first line that is not a comment is a flatfile header (Run ... Interval)."""
    for i, raw in enumerate(lines or ()):
        line = strip_tags(raw).strip()
        if line and not line.startswith("*"):
            names = {t.lower() for t in line.split()}
            return "run" in names and "interval" in names
        if i >= 200:
            break
    return False


def read_report(d: OutputDir, path: Path, warnings: list[str], keep_intervals: bool) -> tuple[list[RdBlock], bool]:
    """Blocks of one file and whether it was read as a flatfile."""
    flat = "flatfile" in path.name.lower() or _looks_like_flatfile(d.lines(path.name))
    lines = read_lines(path)
    if flat:
        return parse_flatfile(lines, warnings, path.name, keep_intervals), True
    return parse_tables(lines, warnings, path.name, keep_intervals), False


def candidates(d: OutputDir, forced: Path | None) -> list[Path]:
    """The files to read the numbers from, in order: the one given, else the standard reports and console logs."""
    if forced is not None:
        return [forced]
    out = [d.directory / n for n in STANDARD]
    try:
        extra = sorted(p for p in d.directory.iterdir() if p.suffix.lower() in _CONSOLE_SUFFIXES)
    except OSError:
        extra = []
    return out + [p for p in extra if d.exists(p.name) and d.contains(p.name, "Starting RD=")]


def linked_hosts(summary: Iterator[str] | None) -> list[str]:
    """Host names linked from summary.html's 'Link to HOST reports:' line (and its continuations)."""
    hosts: list[str] = []
    inside = False
    for line in summary or ():
        if "Starting RD=" in line:
            break  # the links are all above the first RD
        if "Link to HOST reports" in line:
            inside = True
        elif not (inside and line[:1].isspace() and "HREF" in line.upper()):
            inside = False
        if inside:
            hosts += [h for h in _HOST_LINK.findall(line) if h not in hosts]
    return hosts
