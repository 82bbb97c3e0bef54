"""Pieces several tool adapters share: reading outputs as streams of lines, option checks.

Every parser reads files through these, line by line, so a huge output (a runaway stdout, a verbose
run of days) costs memory for what it holds, not for its text.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import TextIO

from fsbench.api.tools import OptionIssue
from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult

#: a parser of one output read as lines (each with its line end; a last line cut short has none)
LineParser = Callable[[Iterable[str], str], ParseResult]

#: characters of one line read from a file: no tool prints a longer one, so the rest of it is junk,
#: and holding it would cost memory for nothing
MAX_LINE = 1 << 20


def file_lines(f: TextIO, limit: int = MAX_LINE) -> Iterator[str]:
    """The lines of an open text file, each with its line end; a line longer than `limit` keeps only
    its start (and its line end)."""
    while line := f.readline(limit):
        if len(line) == limit and not line.endswith("\n"):
            while (more := f.readline(limit)) and not more.endswith("\n"):
                pass  # the rest of an overlong line
            line += "\n" if more else ""
        yield line


def open_text(tool: str, path: str | Path, *, newline: str | None = None, encoding: str = "utf-8") -> TextIO:
    """A file opened for reading as text (undecodable bytes become U+FFFD); ParseError naming the tool
    and the file when it cannot be opened."""
    try:
        return Path(path).open(encoding=encoding, errors="replace", newline=newline)
    except OSError as exc:
        raise ParseError(tool, str(path), f"cannot read the file: {exc.strerror or exc}") from None


def path_lines(tool: str, path: str | Path, *, newline: str | None = None, encoding: str = "utf-8",
               missing_ok: bool = False) -> Iterator[str]:
    """The lines of a file read as a stream (see file_lines), opened on the first line asked for;
    nothing when missing_ok and the file is absent; ParseError when it cannot be read."""
    if missing_ok and not Path(path).exists():
        return
    f = open_text(tool, path, newline=newline, encoding=encoding)
    with f:
        try:
            yield from file_lines(f)
        except OSError as exc:  # an I/O error in the middle (EIO, a file on a mount that went away)
            raise ParseError(tool, str(path), f"cannot read the file: {exc.strerror or exc}") from None


def split_lines(lines: Iterable[str]) -> Iterator[str]:
    """Lines of a text read with universal line ends, split as str.splitlines() splits a whole text
    (also at \\v, \\f, \\x1c-\\x1e, \\x85, U+2028, U+2029), without their line ends."""
    for line in lines:
        yield from line.splitlines()


#: a terminal escape sequence (colours, cursor moves) that juicefs prints in its tables and progress bars
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def text_lines(lines: Iterable[str], first: FirstText) -> Iterator[tuple[str, str]]:
    """(raw line, its text without escape sequences and outer blanks) for every line that is not blank,
    each also shown to `first`: the loop juicefs's table outputs are read in."""
    for raw in split_lines(lines):
        plain = ANSI.sub("", raw)
        line = plain.strip()
        if line:
            first.see(plain)
            yield raw, line


class FirstText:
    """The start of an output's first line that is not blank, as `text.strip().splitlines()[0][:width]` gives
    it, gathered line by line: for saying what an output without results starts with."""

    def __init__(self, width: int = 200):
        self.width = width
        self._first: str | None = None
        self._more = False

    def see(self, line: str) -> None:
        """One more line that is not blank."""
        if self._first is None:
            self._first = line.lstrip()
        else:
            self._more = True

    def line(self) -> str | None:
        """The start of the first line that is not blank (None: every line was blank)."""
        if self._first is None:
            return None
        return (self._first if self._more else self._first.rstrip())[:self.width]


def parse_file_with(parse_lines: LineParser, tool: str, path: str | Path) -> ParseResult:
    """Parse a file read as a stream of lines; ParseError (naming the tool and file) when it cannot be read."""
    return parse_lines(path_lines(tool, path), str(path))


def parse_stdout_then_both(parse_lines: LineParser, tool: str, raw_dir: Path) -> ParseResult:
    """A case's table on stdout; where a version logs it to stderr instead, both streams one after the
    other (stdout's lines, then stderr's), each read as a stream; an absent stream is empty."""
    stdout, stderr = raw_dir / "stdout", raw_dir / "stderr"
    try:
        return parse_lines(path_lines(tool, stdout, missing_ok=True), str(stdout))
    except ParseError:
        if not _has_text(stderr):
            raise  # stdout alone again: the same error
        both = chain(path_lines(tool, stdout, missing_ok=True), path_lines(tool, stderr, missing_ok=True))
        return parse_lines(both, str(stdout))


def _has_text(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def last_lines(tool: str, path: str | Path, n: int) -> list[str]:
    """The last n lines that are not blank of a file (stripped; none when it is absent or unreadable), read
    as a stream: what a tool said last on its stderr."""
    try:
        return list(deque((s for line in path_lines(tool, path, missing_ok=True) if (s := line.strip())), maxlen=n))
    except ParseError:
        return []


def unknown_options(options: dict, known: dict[str, str], tool: str) -> list[OptionIssue]:
    """Issues for option names the adapter does not know, listing the ones it does."""
    import difflib

    out = []
    for key in options:
        if key not in known:
            close = difflib.get_close_matches(key, list(known), n=1)
            out.append(OptionIssue(key, f"unknown {tool} option {key!r}",
                                   (f"did you mean {close[0]!r}? " if close else "")
                                   + "known: " + ", ".join(f"{k} ({v})" for k, v in known.items())))
    return out


def leaves_folder(name: str) -> str:
    """Why a relative file name given to a tool would leave the folder it is resolved in ('' if it stays)."""
    if not name.strip():
        return "the name is empty"
    if name.startswith("/"):
        return "it is absolute"
    if ".." in name.split("/"):
        return "it climbs out with '..'"
    return ""
