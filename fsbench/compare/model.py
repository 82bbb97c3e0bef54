"""The result of a comparison: one row per run and measurement, verdict counts, environment changes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from fsbench.core.stats_settings import Floors

BETTER, WORSE, SAME = "better", "worse", "same"
NOT_COMPARABLE, MISSING, NEW, FAILED = "not comparable", "missing", "new", "failed"
#: every verdict, in the order reports list them
VERDICTS = (WORSE, FAILED, NOT_COMPARABLE, MISSING, NEW, BETTER, SAME)
#: marks for people: emoji for Markdown (GitHub renders them), plain glyphs for HTML (no emoji font needed)
MARKS = {BETTER: "✅", WORSE: "❌", SAME: "≈", NOT_COMPARABLE: "⚠", MISSING: "➖", NEW: "➕", FAILED: "💥"}
TEXT_MARKS = {BETTER: "✔", WORSE: "✘", SAME: "≈", NOT_COMPARABLE: "⚠", MISSING: "−", NEW: "+", FAILED: "‼"}

#: confidence of a better / worse / same verdict
SIGNIFICANT, NOT_SIGNIFICANT, UNTESTED = "significant", "not significant", "untested"
MIN_REPETITIONS = 3  # Welch's t-test runs only where both sides have at least this many values

COLUMNS = ["run", "reference", "target", "workload", "tool", "point", "job", "operation", "metric", "stat", "unit",
           "direction", "n_a", "mean_a", "std_a", "n_b", "mean_b", "std_b", "ratio", "change", "tolerance",
           "beyond_band", "beyond_floors", "p_value", "q_value", "confidence", "sure", "verdict", "detail"]


@dataclass
class RunInfo:
    """Who a side of the comparison is: label, path and manifest facts."""

    label: str
    path: str = ""
    scenario: str = ""
    started: str = ""
    status: str = ""
    fsbench_version: str = ""


@dataclass
class Comparison:
    """Runs compared with the first (the reference): `frame` has one row per run and measurement."""

    reference: RunInfo
    runs: list[RunInfo]
    frame: pd.DataFrame
    tolerances: dict[str, float]
    alpha: float
    metrics: list[str] | None = None
    #: per compared run: (what, reference value, run value) for host facts and versions that differ
    environment: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    #: per compared run: the reference's report conclusions it contradicts (fsbench.compare.contradict)
    conclusions: dict[str, dict] = field(default_factory=dict)
    #: the practical floors applied (the reference run's settings.stats)
    floors: Floors = field(default_factory=Floors)
    #: per compared run: measurements, tested, untested, discoveries, untested_changes (fsbench.compare.gate)
    tests: dict[str, dict] = field(default_factory=dict)

    @property
    def summary(self) -> dict[str, dict[str, int]]:
        """Counts per verdict for each compared run (every verdict present, zeros included)."""
        out: dict[str, dict[str, int]] = {}
        for run in self.runs:
            sub = self.frame[self.frame["run"] == run.label] if not self.frame.empty else self.frame
            counts = sub["verdict"].value_counts().to_dict() if not sub.empty else {}
            out[run.label] = {v: int(counts.get(v, 0)) for v in VERDICTS}
        return out

    def rows(self, verdicts: Iterable[str]) -> pd.DataFrame:
        """The rows whose verdict is one of verdicts."""
        return self.frame[self.frame["verdict"].isin(list(verdicts))]


def exit_code(comparison: Comparison, fail_on: Iterable[str] = (WORSE,), untested: bool = False) -> int:
    """1 when some measurement has a verdict in fail_on (a CI gate), else 0.

    A better or worse verdict without a test (fewer than 3 repetitions on a side) counts only with
    `untested=True`: it has no error rate, so across many measurements noise alone would fail the gate."""
    wanted = list(fail_on)
    unknown = [v for v in wanted if v not in VERDICTS]
    if unknown:
        raise ValueError(f"unknown verdict(s) {unknown}; verdicts are {', '.join(VERDICTS)}")
    return 1 if not gated(comparison, wanted, untested).empty else 0


def gated(comparison: Comparison, fail_on: Iterable[str], untested: bool = False) -> pd.DataFrame:
    """The rows that fail a gate on these verdicts (untested better / worse only when asked)."""
    rows = comparison.rows(fail_on)
    if untested or rows.empty:
        return rows
    return rows[~(rows["verdict"].isin([BETTER, WORSE]) & (rows["confidence"] == UNTESTED))]
