"""`fsbench ingest`: existing tool outputs -> tidy rows, one bad file never hiding the others."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable, TextIO

from fsbench.errors import FsbenchError, ParseError
from fsbench.tidy import MEASUREMENT_COLUMNS, ParseResult

#: tool name -> "module:function" of a parse(Path) -> ParseResult that streams the file
PARSERS = {
    "fio": "fsbench.tools.fio:parse_any",
    "mdtest": "fsbench.tools.mdtest.parse:parse_path",
    "vdbench": "fsbench.tools.vdbench.parse:parse_path",
    "juicefs-bench": "fsbench.tools.juicefs_bench.parse:parse_path",
}


class UnknownTool(FsbenchError):
    """`fsbench ingest` was given a tool it has no parser for."""

    exit_code = 2


def parser_for(tool: str) -> Callable[[Path], ParseResult]:
    """The parse_path function of a tool."""
    if tool not in PARSERS:
        raise UnknownTool(f"no parser for {tool!r}; known: {', '.join(PARSERS)}")
    module, _, function = PARSERS[tool].partition(":")
    return getattr(importlib.import_module(module), function)


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
        except Exception as exc:  # noqa: BLE001 - a parser bug must not hide the other files' rows
            errors.append(ParseError(tool, f, f"internal parser error ({type(exc).__name__}: {exc})"))
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
