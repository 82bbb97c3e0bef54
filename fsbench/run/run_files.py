"""Reading a run directory's files: each through the bounded, regular-file reader scenario inputs use.

A run directory is data anyone may have copied, edited or planted files in. `report`, `compare` and
`--resume` read its manifest and tables through here: a named pipe (which would block the reader for ever),
a device or a link to one (/dev/zero never ends) is refused before a byte is read, nothing is read past a
bound, pandas gets the bytes rather than the path (so it never opens the file itself), and JSON nested
deeper than fsbench writes is refused instead of exhausting the stack. Every refusal is a RunDirError
naming the file, what is wrong with it and what to do.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsbench.config.files import kind_of, read_bytes_bounded
from fsbench.core.errors import RunDirError

if TYPE_CHECKING:
    import pandas

#: what to do about a run directory file that is not what fsbench wrote
RESTORE = ("restore the run directory from a copy, or rebuild its tables from the tools' outputs kept in "
           "raw/ (fsbench ingest TOOL FILES --run-dir NEW)")
#: results.csv and results.parquet: a million rows (10,000 cases of 100 measurements) is about 250 MB of CSV
MAX_RESULTS_BYTES = 2**30
#: every other file (manifest.json, cases.csv, hosts.csv, the run notes, a case's rows.json): 10,000 cases
#: with long reasons and warnings stay under 20 MB
MAX_RUN_FILE_BYTES = 64 * 2**20
#: fsbench's JSON is two levels deep (the manifest, rows.json); far deeper was not written by it
MAX_JSON_DEPTH = 32


def limit_for(path: Path) -> int:
    """The most fsbench reads of a run directory file: the results tables may be large, the rest are not."""
    return MAX_RESULTS_BYTES if path.name.startswith("results.") else MAX_RUN_FILE_BYTES


def read_run_bytes(path: Path, limit: int | None = None) -> bytes:
    """A run directory file's bytes: a regular file (also through a link) read to a bound, else RunDirError."""
    bound = limit_for(path) if limit is None else limit
    try:
        data = read_bytes_bounded(path, bound)
    except OSError as exc:
        raise RunDirError(f"{path}: cannot read it: {_why(path, exc)}") from None
    if len(data) > bound:
        raise RunDirError(f"{path}: larger than {_size(bound)}, more than fsbench reads of a run directory's "
                          f"{'results table' if bound == MAX_RESULTS_BYTES else 'file'}: if fsbench wrote it, "
                          f"read it with your own tools; else {RESTORE}")
    return data


def read_run_text(path: Path) -> str:
    """A run directory file's text (UTF-8, as fsbench writes it)."""
    try:
        return read_run_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RunDirError(f"{path}: damaged: not UTF-8 text ({exc.reason}); {RESTORE}") from None


def read_run_json(path: Path) -> Any:
    """A run directory's JSON file, refused when damaged or nested deeper than fsbench writes it."""
    try:
        data = json.loads(read_run_bytes(path).decode("utf-8"))
    except RecursionError:  # the C decoder gives up on a few thousand levels: the stack is whole again here
        raise RunDirError(f"{path}: damaged: JSON nested too deeply to read (fsbench writes at most "
                          f"{MAX_JSON_DEPTH} levels); {RESTORE}") from None
    except ValueError as exc:  # UnicodeDecodeError too: fsbench writes its JSON in UTF-8
        raise RunDirError(f"{path}: damaged: not JSON ({exc}); {RESTORE}") from None
    if _too_deep(data):  # its readers may walk it recursively: refuse it before they do
        raise RunDirError(f"{path}: damaged: JSON nested more than {MAX_JSON_DEPTH} levels deep, where fsbench "
                          f"writes a few; {RESTORE}")
    return data


def read_run_rows(path: Path) -> list[dict]:
    """The rows of a run directory's CSV file as dicts of text; [] when there is no such file."""
    if not os.path.lexists(path):
        return []
    try:
        return list(csv.DictReader(io.StringIO(read_run_text(path), newline="")))
    except csv.Error as exc:
        raise RunDirError(f"{path}: damaged: not CSV as fsbench writes it ({exc}); {RESTORE}") from None


def read_run_csv(path: Path, **options: Any) -> "pandas.DataFrame":
    """A run directory's CSV table in pandas, from the bytes read here (pandas never opens the file)."""
    import pandas as pd

    data = read_run_bytes(path)
    try:
        return pd.read_csv(io.BytesIO(data), **options)
    except (ValueError, UnicodeDecodeError) as exc:  # pandas' ParserError and EmptyDataError are ValueErrors
        raise RunDirError(f"{path}: damaged: not CSV as fsbench writes it ({exc}); {RESTORE}") from None


def read_run_parquet(path: Path) -> "pandas.DataFrame":
    """results.parquet in pandas, from the bytes read here."""
    import pandas as pd

    data = read_run_bytes(path)
    try:
        return pd.read_parquet(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - pyarrow's own errors (ArrowInvalid...) for a file that is no Parquet
        raise RunDirError(f"{path}: damaged: not a Parquet file ({exc}); delete it to use results.csv, or "
                          f"{RESTORE}") from None


def _why(path: Path, exc: OSError) -> str:
    """Why a file cannot be read, in words: 'a named pipe (FIFO), not a plain file', and where a link goes."""
    why = str(exc.strerror or exc)
    if not why.startswith("not a regular file"):  # no such file, no permission...
        return why
    try:
        kind = kind_of(os.stat(path).st_mode)
    except OSError:
        kind = "this"
    link = f"a link to {os.readlink(path)}, " if path.is_symlink() else ""
    return (f"{link}{kind}, not a plain file: reading it could block for ever or never end, and fsbench writes "
            f"only plain files there; put back the file fsbench wrote, or {RESTORE}")


def _too_deep(data: object) -> bool:
    """Whether lists and objects nest deeper than MAX_JSON_DEPTH in parsed JSON (walked without recursion)."""
    todo = [(data, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, (dict, list)):
            if level > MAX_JSON_DEPTH:
                return True
            todo += [(child, level + 1) for child in (item.values() if isinstance(item, dict) else item)]
    return False


def _size(n: int) -> str:
    return f"{n // 2**30} GiB" if n % 2**30 == 0 else f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n:,} bytes"
