"""Whether a run directory's files are what fsbench wrote: each damaged one named, with what is wrong and
what to do."""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path

from fsbench.core.errors import RunDirError
from fsbench.run.run_files import RESTORE as _RESTORE
from fsbench.run.run_files import read_run_bytes, read_run_text

#: the results columns every reader needs (a table from an older fsbench may lack the others)
RESULT_KEYS = ("case_id", "target", "workload", "operation", "metric", "unit", "value")
#: a number as pandas reads it from a CSV cell (fsbench writes no other; NaN and infinities are left out)
_NUMBER_CELL = re.compile(r"\s*[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?)\s*\Z", re.IGNORECASE)
#: the run notes (fsbench.run.notes): the report reads them too
NOTES = ("placement.csv", "run-warnings.csv")


def _check_csv(path: Path, required: tuple[str, ...], numeric: tuple[str, ...] = ()) -> None:
    """A CSV file fsbench wrote: UTF-8, well quoted, with the required columns (absent is fine), and a
    number (or nothing) in every cell of the numeric columns. Read through fsbench.run.run_files: a named
    pipe or a device is refused before a byte is read."""
    if not os.path.lexists(path):  # a dangling link too: refused by the read, not taken for no file
        return
    text = read_run_text(path)
    try:
        with io.StringIO(text, newline="") as fh:
            reader = csv.reader(fh, strict=True)
            header = next(reader, [])
            numbers = [(i, name) for i, name in enumerate(header) if name in numeric]
            for row in reader:  # read through: a broken quote or a bad byte further down counts too
                for i, name in numbers:
                    cell = row[i] if i < len(row) else ""
                    if cell and not _NUMBER_CELL.match(cell):
                        raise RunDirError(f"{path}: damaged: line {reader.line_num}: {name} {cell[:40]!r} is not a "
                                          f"number; {_RESTORE}")
    except csv.Error as exc:
        raise RunDirError(f"{path}: damaged: not CSV as fsbench writes it (line {reader.line_num}: {exc}); "
                          f"{_RESTORE}") from None
    missing = [c for c in required if c not in header] if header else []
    if missing:
        raise RunDirError(f"{path}: damaged: no column {', '.join(missing)} (it has {', '.join(header[:8])}"
                          f"{'...' if len(header) > 8 else ''}); {_RESTORE}")


def _check_parquet(path: Path) -> None:
    """results.parquet: a Parquet file with the columns every reader needs."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = pa.BufferReader(read_run_bytes(path))  # the bytes read bounded: pyarrow never opens the file
    try:
        schema = pq.ParquetFile(data).schema_arrow
    except Exception as exc:  # noqa: BLE001 - pyarrow's own errors (ArrowInvalid...) for a file that is no Parquet
        raise RunDirError(f"{path}: damaged: not a Parquet file ({exc}); delete it to use results.csv, or "
                          f"{_RESTORE}") from None
    missing = [c for c in RESULT_KEYS if c not in schema.names]
    if missing:
        raise RunDirError(f"{path}: damaged: no column {', '.join(missing)}; {_RESTORE}")
    kind = schema.field("value").type
    if not (pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_null(kind)):
        raise RunDirError(f"{path}: damaged: its value column holds {kind}, not numbers; delete it to use "
                          f"results.csv, or {_RESTORE}")


def check_cases(path: Path) -> None:
    """Refuse a cases.csv that is not what fsbench wrote (--resume reads it; the rest it writes anew)."""
    _check_csv(path / "cases.csv", ("case_id", "target", "workload", "status"))


def check_files(path: Path) -> None:
    """Refuse a run directory whose tables are not what fsbench wrote, naming the file and what is wrong.

    manifest.json is checked by RunDir.open; scenario.yaml must be a mapping, cases.csv, hosts.csv and the run
    notes CSV in UTF-8 (cases.csv with its key columns), results.parquet a Parquet file and results.csv CSV,
    both with the columns every reader needs; each a regular file of a bounded size. The report, compare and
    --resume read them whole later; this keeps their errors plain.
    """
    scenario = path / "scenario.yaml"
    if os.path.lexists(scenario):
        from fsbench.config.yamllines import load_data
        from fsbench.core.errors import ScenarioError

        try:
            data = load_data(scenario)
        except ScenarioError as exc:
            raise RunDirError(f"{scenario}: damaged: {exc}; {_RESTORE}") from None
        if not isinstance(data, dict):
            raise RunDirError(f"{scenario}: damaged: a YAML {type(data).__name__}, where fsbench writes the "
                              f"resolved scenario (a mapping); {_RESTORE}")
        for key in ("targets", "workloads"):
            if not isinstance(data.get(key, {}), dict):
                raise RunDirError(f"{scenario}: damaged: {key} is a {type(data[key]).__name__}, not a mapping; "
                                  f"{_RESTORE}")
    check_cases(path)
    for name in ("hosts.csv", *NOTES):
        _check_csv(path / name, ())
    pq, csvf = path / "results.parquet", path / "results.csv"
    if os.path.lexists(pq):
        _check_parquet(pq)
    else:
        _check_csv(csvf, RESULT_KEYS, numeric=("value",))
