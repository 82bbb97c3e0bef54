"""Moderated variances for tests on a few rounds: each pair's spread shrunk toward its family's.

Three rounds give a paired difference two degrees of freedom: its sample variance is itself so uncertain
that a pair whose three rounds happen to agree looks certain, and a rerun then shows another order. The
measurements of one kind in a run (metabench's per-call latencies, fio's bandwidths...) show together how
much such differences vary from round to round, so the run estimates that spread from all of them and each
pair's variance is pulled toward it: the empirical-Bayes "moderated t" of Smyth (2004, limma). A pair's
variance s^2 on d degrees of freedom becomes (d0 s0^2 + d s^2) / (d0 + d) on d0 + d degrees of freedom,
with s0^2 and d0 fitted by the moments of log s^2 over the family. A family whose variances agree gets a
large d0 (each pair is judged by the common spread), one whose variances differ widely a small d0 (each
pair mostly by its own).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

#: a family needs this many pair variances before its spread is trusted as a prior
MIN_PAIRS = 5
#: degrees of freedom beyond which the family's variance counts as known (the t test becomes a z test)
MAX_DF = 1e6


@dataclass(frozen=True)
class Prior:
    """A family's spread: the variance var of one round's log difference, worth df degrees of freedom."""

    df: float
    var: float

    def centred(self, variances: Iterable[tuple[float, float]]) -> Prior:
        """This prior with its variance pooled with one measurement's own pairs' (variance, degrees of
        freedom), its weight unchanged: the pairs of a measurement share its noise (a tree creation of 8
        directories swings from round to round far more than the file creations of its family), and where the
        family's variances differ (a finite df) that is what shows which way. A known variance stays."""
        vs = [(v, d) for v, d in variances if d > 0 and math.isfinite(v)]
        own = sum(d for _, d in vs)
        if self.df >= MAX_DF or not own or not self.df > 0:
            return self
        return Prior(self.df, (self.df * self.var + sum(v * d for v, d in vs)) / (self.df + own))

    def moderate(self, var: float, df: float) -> tuple[float, float]:
        """A pair's (variance, degrees of freedom) shrunk toward this prior."""
        if not self.df > 0 or not self.var > 0:
            return var, df
        return (self.df * self.var + df * var) / (self.df + df), min(self.df + df, MAX_DF)


def digamma(x: float) -> float:
    """psi(x) for x > 0: the recurrence up to 6, then the asymptotic series."""
    acc = 0.0
    while x < 6:
        acc -= 1 / x
        x += 1
    f = 1 / (x * x)
    return acc + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


def trigamma(x: float) -> float:
    """psi'(x) for x > 0: the recurrence up to 6, then the asymptotic series."""
    acc = 0.0
    while x < 6:
        acc += 1 / (x * x)
        x += 1
    f = 1 / (x * x)
    return acc + 1 / x + f / 2 + f / x * (1 / 6 - f * (1 / 30 - f * (1 / 42 - f / 30)))


def trigamma_inverse(y: float) -> float:
    """The x > 0 with trigamma(x) == y (trigamma falls from infinity to 0): bisection on log x."""
    lo, hi = 1e-8, 1e8
    while hi / lo > 1 + 1e-12:
        mid = math.sqrt(lo * hi)
        if trigamma(mid) > y:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def fit(variances: Iterable[tuple[float, float]]) -> Prior | None:
    """A family's prior from its pairs' (sample variance, degrees of freedom); None with too few.

    By the moments of log s^2: E = log s0^2 + psi(d/2) - log(d/2) - psi(d0/2) + log(d0/2) and
    Var = psi'(d/2) + psi'(d0/2). A zero variance (rounds that agree to the last digit) has no logarithm
    and is left out of the fit."""
    vs = [(v, d) for v, d in variances if v > 0 and d > 0 and math.isfinite(v)]
    if len(vs) < MIN_PAIRS:
        return None
    e = [math.log(v) - digamma(d / 2) + math.log(d / 2) for v, d in vs]
    mean = statistics.fmean(e)
    extra = statistics.variance(e) - statistics.fmean(trigamma(d / 2) for _, d in vs)
    if extra <= 0:  # the variances agree no less than chance alone would let them
        return Prior(MAX_DF, math.exp(mean))
    d0 = 2 * trigamma_inverse(extra)
    return Prior(d0, math.exp(mean + digamma(d0 / 2) - math.log(d0 / 2)))
