"""Which of fio's output formats a file holds (JSON, terse, normal text), and the parser for it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult
from fsbench.tools.common import path_lines
from fsbench.tools.fio import parse_json

_TERSE = re.compile(r"^(?:[23]|4|5);fio-", re.MULTILINE)
# a line that opens a JSON object: `{` alone (fio's layout) or followed by a key (one-line JSON)
_JSON = re.compile(r"^[ \t\ufeff]*\{[ \t]*(?:\"|\r?$)", re.MULTILINE)
#: how much of a file is read to tell its format (fio's text preamble before JSON is a few lines)
SNIFF = 1 << 20


def parse_any(text: str | os.PathLike, source: str | None = None) -> ParseResult:
    """Pick the parser by what the output holds: a JSON object line, terse lines, or the normal layout.

    `text` is the output itself, or the path of a file, which is then read as a stream (JSON in
    chunks, text line by line) instead of as one string.
    """
    if isinstance(text, str):
        src = source or "<string>"
        kind = _kind(text)
        if kind == "json":
            return parse_json.parse_text(text, src)
        from fsbench.tools.fio import parse_normal, parse_terse

        return (parse_terse if kind == "terse" else parse_normal).parse_text(text, src)
    path = text if isinstance(text, Path) else Path(text)
    src = source or str(path)
    try:
        return _parse_file(path, src)
    except OSError as exc:
        raise ParseError("fio", src, f"cannot read: {exc.strerror or exc}") from None


def _head(path: Path) -> bytes:
    """The file's first SNIFF bytes (all of a shorter one), read as bytes in as many as its size asks for:
    a text file's utf-8-sig decoder is Python code, and a read of SNIFF bytes at once makes a buffer of
    that size for every small output (together a fifth of ingesting 1,000 of them)."""
    parts: list[bytes] = []
    got = 0
    with path.open("rb", buffering=0) as f:
        want = min(SNIFF, os.fstat(f.fileno()).st_size + 1)  # one byte more than its size: its end is seen
        while got < SNIFF:
            part = f.read(want)
            if not part:
                break
            parts.append(part)
            got += len(part)
            want = SNIFF - got  # it grew, or the read was short: the rest of the sniff
    return b"".join(parts)


def _kind(head: str) -> str:
    if _JSON.search(head):
        return "json"
    return "terse" if _TERSE.search(head) else "normal"


def _parse_file(path: Path, source: str) -> ParseResult:
    from fsbench.tools.fio import parse_normal, parse_terse

    data = _head(path)
    # a byte-order mark dropped, undecodable bytes U+FFFD (never an exception), line ends as they are
    head = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    kind = _kind(head)
    if kind == "json":  # a file shorter than the sniff was read whole: its text, not a second read
        return parse_json.parse_text(head, source) if len(data) < SNIFF else parse_json.parse_path(path, source)
    parser = parse_terse if kind == "terse" else parse_normal
    # universal line ends, as text_lines
    return parser.parse_lines(path_lines("fio", path, encoding="utf-8-sig"), source)
