"""Whether a run directory's files are what fsbench wrote: each damaged one named, with what is wrong and
what to do."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from fsbench.core.errors import RunDirError

#: what to do about a run directory file that is not what fsbench wrote
_RESTORE = ("restore the run directory from a copy, or rebuild its tables from the tools' outputs kept in "
            "raw/ (fsbench ingest TOOL FILES --run-dir NEW)")
#: the results columns every reader needs (a table from an older fsbench may lack the others)
RESULT_KEYS = ("case_id", "target", "workload", "operation", "metric", "unit", "value")
#: a number as pandas reads it from a CSV cell (fsbench writes no other; NaN and infinities are left out)
_NUMBER_CELL = re.compile(r"\s*[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?)\s*\Z", re.IGNORECASE)
#: manifest.json is a page; a bigger one was not written by fsbench
MAX_TABLE_BYTES = 64 * 2**20


def _check_csv(path: Path, required: tuple[str, ...], numeric: tuple[str, ...] = ()) -> None:
    """A CSV file fsbench wrote: UTF-8, well quoted, with the required columns (absent is fine), and a
    number (or nothing) in every cell of the numeric columns."""
    if not path.exists():
        return
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh, strict=True)
            header = next(reader, [])
            numbers = [(i, name) for i, name in enumerate(header) if name in numeric]
            for row in reader:  # read through: a broken quote or a bad byte further down counts too
                for i, name in numbers:
                    cell = row[i] if i < len(row) else ""
                    if cell and not _NUMBER_CELL.match(cell):
                        raise RunDirError(f"{path}: damaged: line {reader.line_num}: {name} {cell[:40]!r} is not a "
                                          f"number; {_RESTORE}")
    except UnicodeDecodeError as exc:
        raise RunDirError(f"{path}: damaged: not UTF-8 text ({exc.reason}); {_RESTORE}") from None
    except csv.Error as exc:
        raise RunDirError(f"{path}: damaged: not CSV as fsbench writes it (line {reader.line_num}: {exc}); "
                          f"{_RESTORE}") from None
    except OSError as exc:
        raise RunDirError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    missing = [c for c in required if c not in header] if header else []
    if missing:
        raise RunDirError(f"{path}: damaged: no column {', '.join(missing)} (it has {', '.join(header[:8])}"
                          f"{'...' if len(header) > 8 else ''}); {_RESTORE}")


def _check_parquet(path: Path) -> None:
    """results.parquet: a Parquet file with the columns every reader needs."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        names = pq.ParquetFile(path).schema_arrow.names
    except OSError as exc:
        raise RunDirError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except Exception as exc:  # noqa: BLE001 - pyarrow's own errors (ArrowInvalid...) for a file that is no Parquet
        raise RunDirError(f"{path}: damaged: not a Parquet file ({exc}); delete it to use results.csv, or "
                          f"{_RESTORE}") from None
    missing = [c for c in RESULT_KEYS if c not in names]
    if missing:
        raise RunDirError(f"{path}: damaged: no column {', '.join(missing)}; {_RESTORE}")
    kind = pq.ParquetFile(path).schema_arrow.field("value").type
    if not (pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_null(kind)):
        raise RunDirError(f"{path}: damaged: its value column holds {kind}, not numbers; delete it to use "
                          f"results.csv, or {_RESTORE}")


def check_cases(path: Path) -> None:
    """Refuse a cases.csv that is not what fsbench wrote (--resume reads it; the rest it writes anew)."""
    _check_csv(path / "cases.csv", ("case_id", "target", "workload", "status"))


def check_files(path: Path) -> None:
    """Refuse a run directory whose tables are not what fsbench wrote, naming the file and what is wrong.

    scenario.yaml must be a mapping, cases.csv and hosts.csv CSV in UTF-8 (cases.csv with its key
    columns), results.parquet a Parquet file and results.csv CSV, both with the columns every reader needs. The
    report, compare and --resume read them whole later; this keeps their errors plain.
    """
    scenario = path / "scenario.yaml"
    if scenario.exists():
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
    _check_csv(path / "hosts.csv", ())
    pq, csvf = path / "results.parquet", path / "results.csv"
    if pq.exists():
        _check_parquet(pq)
    elif csvf.exists():
        _check_csv(csvf, RESULT_KEYS, numeric=("value",))
