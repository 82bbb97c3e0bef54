"""Each summary row's family prior (fsbench.analysis.moderated): the spread of round-to-round differences
that the measurements of its kind show together in this run.

A family is one tool's metric in one unit and statistic (metabench's latency_mean in s, fio's bandwidth in
B/s...), over the run's workloads, operations, points and targets. Its pairs are every two targets of one
measurement that ran the same 3 rounds or more: the sample variance of their per-round log ratios, on
rounds - 1 degrees of freedom. Each measurement's prior is its family's centred on its own pairs
(moderated.Prior.centred: the family says how much to trust one pair, the measurement how noisy it is).
The rows get `prior_df` and `prior_var` (NaN where the family has too few pairs), which the paired test
reads (fsbench.analysis.difference.paired).
"""

from __future__ import annotations

import math
from itertools import combinations

import pandas as pd

from fsbench.analysis.difference import pairs
from fsbench.analysis.moderated import Prior, fit
from fsbench.core.stats import mean_std

FAMILY = ["tool", "metric", "unit", "stat"]

Variances = list[tuple[float, float]]


def family_priors(summary: pd.DataFrame) -> dict[tuple, Prior]:
    """family -> its prior, for the families with enough pairs of 3 rounds or more."""
    return _fitted(_variances(summary))


def measurement_priors(summary: pd.DataFrame) -> dict[tuple, Prior]:
    """(family, measurement) -> its family's prior centred on the measurement's own pairs (Prior.centred)."""
    found = _variances(summary)
    return {(fam, m): prior.centred(vs) for fam, prior in _fitted(found).items() for m, vs in found[fam].items()}


def _fitted(found: dict[tuple, dict[tuple, Variances]]) -> dict[tuple, Prior]:
    return {fam: p for fam, ms in found.items() if (p := fit(v for m in ms.values() for v in m))}


def with_priors(summary: pd.DataFrame) -> pd.DataFrame:
    """summary with `prior_df` and `prior_var`: its measurement's prior, NaN where its family has none."""
    priors = measurement_priors(summary)
    family = [c for c in FAMILY if c in summary.columns]
    cols = family + _measurement(summary)
    n = len(family)
    got = [priors.get((_tuple(k[:n]), _tuple(k[n:]))) for k in summary[cols].itertuples(index=False, name=None)
           ] if family else []
    return summary.assign(prior_df=[p.df if p else math.nan for p in got] or math.nan,
                          prior_var=[p.var if p else math.nan for p in got] or math.nan)


def _measurement(summary: pd.DataFrame) -> list[str]:
    """The columns that tell one measurement from another within a family (targets aside)."""
    return [c for c in summary.columns if c in ("workload", "job", "operation") or c.startswith("param_")]


def _variances(summary: pd.DataFrame) -> dict[tuple, dict[tuple, Variances]]:
    """family -> measurement -> its pairs' (variance, degrees of freedom): every two targets of it that ran the
    same 3 rounds or more."""
    if summary.empty or "reps" not in summary.columns or "target" not in summary.columns:
        return {}
    family = [c for c in FAMILY if c in summary.columns]
    key = _measurement(summary)
    found: dict[tuple, dict[tuple, Variances]] = {}
    for fam, rows in summary.groupby(family, sort=False, dropna=False):
        groups = rows.groupby(key, sort=False, dropna=False) if key else [((), rows)]
        for m, measurement in groups:
            reps = [r for r in measurement["reps"].tolist() if isinstance(r, tuple) and len(r) >= 3]
            for a, b in combinations(reps, 2):
                d = [math.log(y) - math.log(x) for x, y in pairs({"reps": a}, {"reps": b})]
                if len(d) >= 3:
                    found.setdefault(_tuple(fam), {}).setdefault(_tuple(m), []).append((mean_std(d)[1] ** 2,
                                                                                      len(d) - 1))
    return found


def _tuple(key: object) -> tuple:
    """A group's key as a tuple, a missing value (NaN, a different object each time, equal to none) as None."""
    return tuple(None if pd.isna(k) else k for k in (key if isinstance(key, tuple) else (key,)))
