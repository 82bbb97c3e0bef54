"""fio output files for `fsbench ingest`."""

from __future__ import annotations

from pathlib import Path

from fsbench.tidy import ParseResult


def parse_path(path: Path) -> ParseResult:
    """Any fio output file: JSON, json+, json,normal, normal or terse."""
    from fsbench.tools.fio import FioAdapter

    return FioAdapter().parse_file(path)
