"""`fsbench ingest`: existing tool outputs -> tidy rows, one bad file never hiding the others."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, TextIO

from fsbench.errors import FsbenchError, ParseError
from fsbench.tidy import MEASUREMENT_COLUMNS, ParseResult
from fsbench.tools import TOOLS

class UnknownTool(FsbenchError):
    """`fsbench ingest` was given a tool it has no parser for."""

    exit_code = 2


def parser_for(tool: str) -> Callable[[Path], ParseResult]:
    """The parser of a tool's existing outputs (its plug-in's parse_file)."""
    if tool not in TOOLS:
        raise UnknownTool(f"no parser for {tool!r}; known: {', '.join(TOOLS.names())}")
    return TOOLS.get(tool).parse_file


def ingest_files(tool: str, files: list[str]) -> tuple[list[dict], list[ParseError]]:
    """Rows of every usable file (with a `source` column) and the errors of the others."""
    parse = parser_for(tool)
    rows: list[dict] = []
    errors: list[ParseError] = []
    for f in files:
        try:
            result = parse(Path(f))
        except ParseError as exc:
            errors.append(exc)
            continue
        rows.extend({"source": f, **r} for r in result.rows)
    return rows, errors


def write_rows(rows: list[dict], output: str | None, stdout: TextIO) -> None:
    """CSV to stdout, or OUT as .csv / .parquet."""
    import pandas as pd

    df = pd.DataFrame(rows)
    cols = ["source"] + MEASUREMENT_COLUMNS
    df = df.reindex(columns=cols + [c for c in df.columns if c not in cols])
    if output is None:
        df.to_csv(stdout, index=False)
    elif output.endswith(".parquet"):
        df.to_parquet(output, index=False)
    else:
        df.to_csv(output, index=False)
