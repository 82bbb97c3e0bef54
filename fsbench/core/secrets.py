"""Secrets by reference, never copied: resolved from the environment or a file, masked everywhere.

A scenario names its secrets (`secrets: {db: {env: FSB_DB_PASSWORD}}`) and uses them as
`${secrets.db}`. In shell commands the placeholder becomes a reference to an environment variable
(`"$FSBENCH_SECRET_DB"`) that the transport passes beside the command, so the value is in no argv
(locally: the process environment; over SSH: a 0600 file read and removed by the wrapper). Every
text fsbench writes or prints goes through `redact`: known secret values, the password part of
any URL (`mysql://user:****@host`) and parameters named like secrets (`?password=****`,
`sslpassword=****`, `--token=****`) are masked. Files are masked in a stream, whatever their size;
binary files (the results' parquet) get known values overwritten in place with as many `*`.

The set of known values is process-wide on purpose: masking must reach every path out, exception
messages included, and a secret resolved once stays secret for the rest of the process.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from fsbench.core.secret_files import redact_file, redact_tree
from fsbench.core.secret_known import MASK, has_secrets, masked, remember, remember_written, spans, written_whole
from fsbench.core.secret_refs import (
    SECRET_WORDS,
    SecretRef,
    env_name,
    is_secret_key,
    is_secret_placeholder,
    placeholder_env,
    secret_env,
)
from fsbench.core.secret_urls import secret_param_spans, split_url_password, url_password_spans

if TYPE_CHECKING:
    import pandas

#: what the rest of fsbench imports from here (every writer of text, tables and files masks through this module)
__all__ = ["MASK", "SECRET_WORDS", "SecretRef", "env_name", "has_secrets", "is_secret_key", "is_secret_placeholder",
           "placeholder_env", "redact", "redact_data", "redact_file", "redact_frame", "redact_rows", "redact_tree",
           "redact_value", "remember", "remember_written", "secret_env", "secret_param_spans", "split_url_password",
           "url_password_spans"]


def redact(text: str) -> str:
    """text with every known secret and every URL password masked."""
    if not text or (not has_secrets() and "://" not in text and "=" not in text):
        return text
    return masked(text, spans(text))


def redact_value(value: object) -> object:
    """A table cell with its text masked (numbers and the rest as they are)."""
    return redact(value) if isinstance(value, str) else value


def redact_data(value: object) -> object:
    """Plain data (a resolved scenario) with every text masked, keys included.

    Masking the data before it becomes YAML keeps the YAML valid: a value that is all secret
    becomes the text '****', where masking the YAML text would leave an alias (`key: ****`).
    """
    return _redact_data(value, False)


def _redact_data(value: object, whole: bool) -> object:
    """whole: a value here that is a short secret written in the scenario is masked too (the
    `variables:` section, a key that names a secret), where elsewhere it may be a kind or a path."""
    if isinstance(value, dict):
        return {redact_value(k): _redact_data(v, whole or k == "variables" or is_secret_key(k))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact_data(v, whole) for v in value]
    if whole and isinstance(value, str) and written_whole(value):
        return MASK
    return redact_value(value)


def redact_rows(rows: Iterable[dict]) -> list[dict]:
    """Rows of a table (hosts.csv) with every text cell masked."""
    return [{k: redact_value(v) for k, v in row.items()} for row in rows]


def redact_frame(df: "pandas.DataFrame") -> "pandas.DataFrame":
    """A results table with every text column masked: parquet is binary, so it is masked before writing."""
    import pandas as pd

    out = df.copy()
    for col in out.columns:
        if pd.api.types.is_object_dtype(out[col]) or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(redact_value)
    return out
