"""Each summary row's family prior (fsbench.analysis.moderated): the spread of round-to-round differences
that the measurements of its kind show together in this run.

A family is one tool's metric in one unit and statistic (metabench's latency_mean in s, fio's bandwidth in
B/s...), over the run's workloads, operations, points and targets. Its pairs are every two targets of one
measurement that ran the same 3 rounds or more: the sample variance of their per-round log ratios, on
rounds - 1 degrees of freedom. The rows get `prior_df` and `prior_var` (NaN where the family has too few
pairs), which the paired test reads (fsbench.analysis.difference.paired).
"""

from __future__ import annotations

import math
from itertools import combinations

import pandas as pd

from fsbench.analysis.difference import pairs
from fsbench.analysis.moderated import Prior, fit
from fsbench.core.stats import mean_std

FAMILY = ["tool", "metric", "unit", "stat"]


def family_priors(summary: pd.DataFrame) -> dict[tuple, Prior]:
    """family -> its prior, for the families with enough pairs of 3 rounds or more."""
    if summary.empty or "reps" not in summary.columns or "target" not in summary.columns:
        return {}
    family = [c for c in FAMILY if c in summary.columns]
    key = [c for c in summary.columns if c in ("workload", "job", "operation") or c.startswith("param_")]
    found: dict[tuple, list[tuple[float, float]]] = {}
    for fam, rows in summary.groupby(family, sort=False, dropna=False):
        fam = fam if isinstance(fam, tuple) else (fam,)
        groups = rows.groupby(key, sort=False, dropna=False) if key else [((), rows)]
        for _, measurement in groups:
            reps = [r for r in measurement["reps"].tolist() if isinstance(r, tuple) and len(r) >= 3]
            for a, b in combinations(reps, 2):
                d = [math.log(y) - math.log(x) for x, y in pairs({"reps": a}, {"reps": b})]
                if len(d) >= 3:
                    found.setdefault(fam, []).append((mean_std(d)[1] ** 2, len(d) - 1))
    return {fam: p for fam, v in found.items() if (p := fit(v)) is not None}


def with_priors(summary: pd.DataFrame) -> pd.DataFrame:
    """summary with `prior_df` and `prior_var`: its family's prior, NaN where there is none."""
    priors = family_priors(summary)
    family = [c for c in FAMILY if c in summary.columns]
    got = [priors.get(tuple(k)) for k in summary[family].itertuples(index=False, name=None)] if family else []
    return summary.assign(prior_df=[p.df if p else math.nan for p in got] or math.nan,
                          prior_var=[p.var if p else math.nan for p in got] or math.nan)
