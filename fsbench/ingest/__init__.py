"""`fsbench ingest`: existing tool outputs -> tidy rows, one bad file never hiding the others."""

from __future__ import annotations

import csv
import stat
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import TextIO

from fsbench.core.csv_cells import guard_row
from fsbench.core.errors import FsbenchError, ParseError
from fsbench.core.tidy import MEASUREMENT_COLUMNS, ParseResult
from fsbench.tools import TOOLS


class UnknownTool(FsbenchError):
    """`fsbench ingest` was given a tool it has no parser for."""

    exit_code = 2


def parser_for(tool: str) -> Callable[[Path], ParseResult]:
    """The parser of a tool's existing outputs (its plug-in's parse_file)."""
    if tool not in TOOLS:
        raise UnknownTool(f"no parser for {tool!r}; known: {', '.join(TOOLS.names())}")
    return TOOLS.get(tool).parse_file


def unreadable(tool: str, path: Path) -> ParseError | None:
    """Why path is no tool output (a device, a pipe: reading /dev/zero never ends), or None."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return ParseError(tool, str(path), f"cannot read it: {exc.strerror or exc}")
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return ParseError(tool, str(path), "not a regular file (a device, a pipe or a socket): give the tool's "
                                       "output file or folder")


def ingest_files(tool: str, files: list[str], warn: Callable[[str], None] | None = None,
                 ) -> tuple[list[dict], list[ParseError]]:
    """Rows of every usable file (with a `source` column) and the errors of the others; warn gets what was
    left out of a usable one (rows with NaN or infinite values, a truncated output), file by file."""
    parse = parser_for(tool)
    rows: list[dict] = []
    errors: list[ParseError] = []
    for f in files:
        path = Path(f)  # once: making Paths was a tenth of ingesting 1,000 small files
        refused = unreadable(tool, path)
        if refused is not None:
            errors.append(refused)
            continue
        try:
            result = parse(path)
        except ParseError as exc:
            errors.append(exc)
            continue
        except Exception as exc:  # noqa: BLE001 - a parser bug must not hide the other files' rows
            errors.append(ParseError(tool, f, f"internal parser error ({type(exc).__name__}: {exc})"))
            continue
        for w in result.warnings:
            if warn is not None:
                warn(f"{f}: {w}")
        for r in result.rows:  # in place: a huge output's rows are not copied
            r["source"] = f
        rows.extend(result.rows)
    return rows, errors


def write_rows(rows: list[dict], output: str | None, stdout: TextIO) -> None:
    """CSV to stdout, or OUT as .csv / .parquet (columns: source, the measurement ones, then the
    extra columns in name order). CSV text cells are guarded against formulas (fsbench.core.csv_cells);
    Parquet keeps them as they are."""
    first = ["source"] + MEASUREMENT_COLUMNS
    columns = first + sorted(set().union(*rows) - set(first)) if rows else first
    if output is not None and output.endswith(".parquet"):
        import pandas as pd

        pd.DataFrame(rows, columns=columns).to_parquet(output, index=False)
        return
    # CSV row by row: a DataFrame of millions of rows would cost several times their memory
    with (open(output, "w", newline="") if output else nullcontext(stdout)) as fh:
        writer = csv.DictWriter(fh, columns, restval="", extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(guard_row(r) for r in rows)  # a spreadsheet runs no job name as a formula
