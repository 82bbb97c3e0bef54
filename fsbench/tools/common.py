"""Pieces several tool adapters share: reading a case's stdout and stderr, option checks."""

from __future__ import annotations

from pathlib import Path

from fsbench.tools.base import OptionIssue


def read_stream(raw_dir: Path, name: str) -> str:
    """A captured stream of the case ('' when absent)."""
    f = raw_dir / name
    return f.read_text(errors="replace") if f.exists() else ""


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
