"""CSV cells a spreadsheet cannot run: text that would start a formula is written with a leading quote.

Names in results.csv, cases.csv and hosts.csv come from job files, tool outputs, sweep values and
remote hosts; opened in a spreadsheet, a cell such as `=HYPERLINK(...)` or `@SUM(1)` would be
evaluated. The rule (OWASP's "CSV injection" advice): a text cell starting with = + - @ a tab or a
carriage return is written with a `'` in front, which spreadsheets show as text and hide. A text
cell that already starts with `'` gets one more, so reading strips exactly one and gives back what
was written. Two choices, on purpose:

- a text cell that is a plain decimal number (`-1`, `+2.5`, `-3e6`, a sweep value written as text)
  is left as it is: a spreadsheet reads it as that number and runs nothing, and readers keep
  getting a number;
- numbers (int, float columns) are never touched, and Parquet files keep the raw text: they are
  typed tables for pandas and notebooks, which no spreadsheet evaluates.

Every reader of these CSV files in fsbench (load_results, the report, compare, --resume) strips the
guard, so notebooks and reports see the real names.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas

GUARD = "'"
#: first characters a spreadsheet reads as a formula (or that hide one), and the guard itself
TRIGGERS = ("=", "+", "-", "@", "\t", "\r", GUARD)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")


def guard(value: object) -> object:
    """The value as written to a CSV cell: text that would start a formula gets a leading quote."""
    if isinstance(value, str) and value[:1] in TRIGGERS and not _NUMBER.match(value):
        return GUARD + value
    return value


def unguard(value: object) -> object:
    """The value a guarded CSV cell stands for (guard's inverse)."""
    if isinstance(value, str) and value.startswith(GUARD):
        return value[1:]
    return value


def _text_columns(df: "pandas.DataFrame") -> list:
    import pandas as pd

    return [c for c in df.columns if pd.api.types.is_object_dtype(df[c]) or pd.api.types.is_string_dtype(df[c])]


def guard_frame(df: "pandas.DataFrame") -> "pandas.DataFrame":
    """A copy of a table whose text cells are guarded (number columns unchanged)."""
    out = df.copy()
    for col in _text_columns(out):
        out[col] = out[col].map(guard)
    return out


def unguard_frame(df: "pandas.DataFrame") -> "pandas.DataFrame":
    """A table read from a guarded CSV with the guards stripped (in place; returned for chaining)."""
    for col in _text_columns(df):
        df[col] = df[col].map(unguard)
    return df


def guard_row(row: dict) -> dict:
    """A CSV row (csv.DictWriter) with its text cells guarded."""
    return {k: guard(v) for k, v in row.items()}


def unguard_row(row: dict) -> dict:
    """A row read by csv.DictReader with the guards stripped."""
    return {k: unguard(v) for k, v in row.items()}
