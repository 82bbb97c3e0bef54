"""Golden files: expected tidy rows of a parser for one input file, as CSV.

Set FSBENCH_REGEN_GOLDEN=1 to (re)write the expected files from the current parser;
review the diff before committing: a golden file is a claim about the input, not a copy
of whatever the parser said.
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path

from fsbench.core.tidy import MEASUREMENT_COLUMNS

REGEN = os.environ.get("FSBENCH_REGEN_GOLDEN") == "1"


def _columns(rows: list[dict]) -> list[str]:
    extra = sorted({k for r in rows for k in r} - set(MEASUREMENT_COLUMNS))
    return MEASUREMENT_COLUMNS + extra


def rows_to_csv(rows: list[dict]) -> str:
    """Serialise rows in a stable, diff-friendly way (floats as repr)."""
    cols = _columns(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([repr(r[c]) if isinstance(r.get(c), float) else r.get(c, "") for c in cols])
    return buf.getvalue()


def _read(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        fa, fb = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(fa, fb, rel_tol=1e-9, abs_tol=1e-12)


def check_golden(rows: list[dict], expected: Path) -> None:
    """Assert rows equal the golden file (or rewrite it when regenerating)."""
    text = rows_to_csv(rows)
    if REGEN or not expected.exists():
        if not REGEN:
            raise AssertionError(f"golden file {expected} missing; run with FSBENCH_REGEN_GOLDEN=1")
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_text(text)
        return
    want = _read(expected)
    got = list(csv.DictReader(io.StringIO(text)))
    assert len(got) == len(want), f"{expected.name}: {len(got)} rows, golden has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert set(g) == set(w), f"{expected.name} row {i}: columns {sorted(g)} != {sorted(w)}"
        bad = [k for k in w if not _same(g[k], w[k])]
        assert not bad, f"{expected.name} row {i}: {[(k, g[k], w[k]) for k in bad]}"
