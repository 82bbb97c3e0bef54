"""Pieces several tool adapters share: reading a case's stdout and stderr, option checks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fsbench.errors import ParseError
from fsbench.tidy import ParseResult
from fsbench.tools.base import OptionIssue

TextParser = Callable[[str, str], ParseResult]


def read_stream(raw_dir: Path, name: str) -> str:
    """A captured stream of the case ('' when absent)."""
    f = raw_dir / name
    return f.read_text(errors="replace") if f.exists() else ""


def parse_file_with(parse_text: TextParser, tool: str, path: str | Path) -> ParseResult:
    """Read a file and parse its text; ParseError (naming the tool and file) when it cannot be read."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as exc:
        raise ParseError(tool, str(path), f"cannot read: {exc.strerror}") from None
    return parse_text(text, str(path))


def parse_stdout_then_both(parse_text: TextParser, raw_dir: Path) -> ParseResult:
    """A case's table on stdout; where a version logs it to stderr instead, both streams together."""
    out = read_stream(raw_dir, "stdout")
    try:
        return parse_text(out, str(raw_dir / "stdout"))
    except ParseError:
        return parse_text(out + "\n" + read_stream(raw_dir, "stderr"), str(raw_dir / "stdout"))


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
