"""The run directory's tables: cases.csv, hosts.csv, results.csv and results.parquet (masked, spreadsheet-safe)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

from fsbench.core.csv_cells import guard_frame, guard_row
from fsbench.core.secrets import redact, redact_frame, redact_rows
from fsbench.core.tidy import COLUMNS

CASE_COLUMNS = ["case_id", "index", "target", "workload", "tool", "repetition", "status", "reason",
                "exit_status", "started", "ended", "duration_s", "tool_wall_s", "estimate_s", "hosts", "warnings"]


def write_cases(path: Path, records: list[dict]) -> None:
    """cases.csv: one row per case with its status and parameters (param_<name>)."""
    params = []
    for r in records:
        for k in r.get("params", {}):
            if k not in params:
                params.append(k)
    cols = CASE_COLUMNS + [f"param_{p}" for p in params]
    tmp = path / "cases.csv.tmp"
    with tmp.open("w", newline="") as fh:
        w = csv.DictWriter(fh, cols, extrasaction="ignore")
        w.writeheader()
        for r in records:
            row = {**r, **{f"param_{k}": v for k, v in r.get("params", {}).items()}}
            w.writerow(guard_row({k: redact(v) if isinstance(v, str) else v for k, v in row.items()}))
    os.replace(tmp, path / "cases.csv")

def write_hosts(path: Path, hosts: list[dict]) -> None:
    """hosts.csv: one row per host with its facts."""
    cols: list[str] = []
    for h in hosts:
        cols += [k for k in h if k not in cols]
    with (path / "hosts.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, cols)
        w.writeheader()
        w.writerows(guard_row(r) for r in redact_rows(hosts))

def write_results(path: Path, rows: list[dict]) -> None:
    """results.csv and results.parquet from all rows."""
    import pandas as pd

    df = pd.DataFrame(rows)
    extra = [c for c in df.columns if c not in COLUMNS]
    df = redact_frame(df.reindex(columns=COLUMNS + extra))  # parquet is binary: masked before it is written
    guard_frame(df).to_csv(path / "results.csv", index=False)  # a spreadsheet runs no name as a formula
    try:  # parquet keeps the names as they are: typed, for pandas, never evaluated
        df.to_parquet(path / "results.parquet", index=False)
    except ImportError:  # pyarrow is a dependency; a broken install must not lose results.csv
        pass
