"""The statistics of fsbench, with the standard library only (no scipy): Welch's t-test, Student-t
confidence intervals of a mean, intervals of a ratio to a reference, and the warm-up test.

The report and `fsbench compare` both use these, so a difference means the same in both."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Welch:
    """Result of Welch's unequal-variances t-test: statistic, degrees of freedom, two-sided p."""

    t: float
    df: float
    p: float


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value, NaN for none)."""
    if not values:
        return math.nan, math.nan
    return statistics.fmean(values), math.sqrt(_variance(values)) if len(values) > 1 else 0.0


def _variance(values: Sequence[float]) -> float:
    """Sample variance in floats, two passes with exact sums (statistics.variance's fractions cost 50x more)."""
    m = math.fsum(values) / len(values)
    return math.fsum((x - m) * (x - m) for x in values) / (len(values) - 1)


def welch(a: Sequence[float], b: Sequence[float]) -> Welch:
    """Two-sided Welch's t-test of mean(a) == mean(b); needs at least two values per side."""
    if len(a) < 2 or len(b) < 2:
        raise ValueError("Welch's t-test needs at least two values on each side")
    ma, sa = mean_std(a)
    mb, sb = mean_std(b)
    va, vb = sa * sa / len(a), sb * sb / len(b)
    se2 = va + vb
    if se2 == 0:
        # both sides constant: the limit of the test is certainty either way
        same = math.isclose(ma, mb, rel_tol=1e-12, abs_tol=0.0)
        return Welch(0.0 if same else math.copysign(math.inf, mb - ma), math.inf, 1.0 if same else 0.0)
    t = (mb - ma) / math.sqrt(se2)
    df = se2 * se2 / ((va * va / (len(a) - 1) if va else 0.0) + (vb * vb / (len(b) - 1) if vb else 0.0))
    return Welch(t, df, t_two_sided_p(t, df))


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with df degrees of freedom (df may be fractional)."""
    if math.isinf(t):
        return 0.0
    if math.isinf(df):
        return math.erfc(abs(t) / math.sqrt(2))
    x = df / (df + t * t)
    return min(1.0, max(0.0, betainc(df / 2, 0.5, x)))


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b), by its continued fraction (Numerical Recipes 6.4)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln_front)
    # the fraction converges fast only on this side of the mean; use the symmetry otherwise
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def _betacf(a: float, b: float, x: float, eps: float = 1e-14, max_iter: int = 500) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, max_iter + 1):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


# -- intervals ------------------------------------------------------------------------------------------

#: the confidence level of every interval fsbench shows
LEVEL = 0.95


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The p-quantile (p > 0.5) of Student's t with df degrees of freedom, by safeguarded Newton on the tail.

    A report asks for thousands (a Welch df per ratio): starting from the Cornish-Fisher expansion,
    Newton takes 2 to 4 tail evaluations where bisection took 40; repeated (p, df) pairs are remembered.
    """
    if not 0.5 < p < 1:
        raise ValueError(f"t_quantile needs 0.5 < p < 1, got {p}")
    z = _normal_quantile(p)
    if math.isinf(df):
        return z
    tail = 2 * (1 - p)  # two-sided tail probability at the quantile
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    x = max(z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2), 1e-3)
    lo, hi = 0.0, math.inf
    for _ in range(400):
        f = t_two_sided_p(x, df) - tail  # decreasing in x
        if f > 0:
            lo = x
        else:
            hi = x
        slope = -2 * math.exp(log_c - (df + 1) / 2 * math.log1p(x * x / df))  # d/dx of the two-sided tail
        step = x - f / slope if slope else math.nan
        if f == 0 or abs(step - x) <= 1e-13 * x:
            return step if step == step else x
        # where Newton would leave the bracket: bisect it, or double while it has no upper end
        x = step if lo < step < hi else (lo + hi) / 2 if hi < math.inf else 2 * x
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return x


@lru_cache(maxsize=64)
def _normal_quantile(p: float) -> float:
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erfc(mid / math.sqrt(2)) > 2 * (1 - p) else (lo, mid)
    return (lo + hi) / 2


@dataclass(frozen=True)
class Interval:
    """A mean and its two-sided t confidence interval (half-width 0 for one value, NaN for none)."""

    mean: float
    half: float
    n: int

    @property
    def relative(self) -> float:
        """Half-width as a fraction of the mean (NaN where the mean is 0)."""
        return abs(self.half / self.mean) if self.mean else math.nan

    @property
    def low(self) -> float:
        return self.mean - self.half

    @property
    def high(self) -> float:
        return self.mean + self.half


def mean_ci(values: Sequence[float], level: float = LEVEL) -> Interval:
    """Student-t interval of the mean: mean ± t(1-α/2, n-1) · s / √n (no interval from one value)."""
    m, s = mean_std(values)
    n = len(values)
    if n < 2:
        return Interval(m, math.nan if n == 0 else math.inf, n)
    return Interval(m, t_quantile(1 - (1 - level) / 2, n - 1) * s / math.sqrt(n), n)


def relative_half_width(n: int, cv: float, level: float = LEVEL) -> float:
    """The relative half-width of a mean's t interval from n values whose coefficient of variation is cv."""
    if n < 2:
        return math.inf
    return t_quantile(1 - (1 - level) / 2, n - 1) * cv / math.sqrt(n)


def repetitions_for(cv: float, target: float, level: float = LEVEL, most: int = 1000) -> int | None:
    """How many repetitions bring the relative half-width to target at this spread (None: more than most)."""
    for n in range(2, most + 1):
        if relative_half_width(n, cv, level) <= target:
            return n
    return None


# -- ratios to a reference ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LogSummary:
    """What the ratio tests need of one side: n, mean and sample variance of the logarithms."""

    n: int
    mean: float
    var: float

    @classmethod
    def of(cls, values: Sequence[float]) -> LogSummary | None:
        """None where some value is not positive (no logarithm) or there is none."""
        if not values or min(values) <= 0:
            return None
        logs = [math.log(x) for x in values]
        return cls(len(logs), statistics.fmean(logs), _variance(logs) if len(logs) > 1 else 0.0)


@dataclass(frozen=True)
class Ratio:
    """b / a as the ratio of geometric means, its confidence interval and Welch's two-sided p."""

    ratio: float
    low: float
    high: float
    p: float

    def significant(self, alpha: float = 1 - LEVEL) -> bool:
        """Whether the ratio differs from 1 at level alpha (the interval excludes 1)."""
        return self.p == self.p and self.p < alpha


def log_ratio(a: LogSummary, b: LogSummary, level: float = LEVEL) -> Ratio:
    """The ratio b/a by Welch's t on the logarithms: exp(Δ ± t·se), with Welch-Satterthwaite df.

    Storage figures vary by factors, so the interval is built on log scale and is asymmetric around
    the ratio (1.10 [0.95–1.27]); with fewer than two values on a side there is no interval (NaN).
    """
    ratio = math.exp(b.mean - a.mean)
    if a.n < 2 or b.n < 2:
        return Ratio(ratio, math.nan, math.nan, math.nan)
    va, vb = a.var / a.n, b.var / b.n
    se2 = va + vb
    if se2 == 0:
        same = math.isclose(a.mean, b.mean, rel_tol=0.0, abs_tol=1e-12)
        return Ratio(ratio, ratio, ratio, 1.0 if same else 0.0)
    df = se2 * se2 / ((va * va / (a.n - 1) if va else 0.0) + (vb * vb / (b.n - 1) if vb else 0.0))
    t = (b.mean - a.mean) / math.sqrt(se2)
    half = t_quantile(1 - (1 - level) / 2, df) * math.sqrt(se2)
    return Ratio(ratio, math.exp(b.mean - a.mean - half), math.exp(b.mean - a.mean + half), t_two_sided_p(t, df))


# -- many tests at once ---------------------------------------------------------------------------------

def bh_adjust(ps: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q), in the order given; NaN (untested) stays NaN and is not
    counted among the tests. Calling q < alpha significant keeps the expected share of false discoveries
    among them at or below alpha (independent or positively dependent tests)."""
    tested = sorted((p, i) for i, p in enumerate(ps) if p == p)
    m = len(tested)
    out = [math.nan] * len(ps)
    running = 1.0
    for rank in range(m, 0, -1):  # from the largest p down: q_(k) = min over j >= k of p_(j) * m / j
        p, i = tested[rank - 1]
        running = min(running, p * m / rank)
        out[i] = running
    return out


# -- warm-up ----------------------------------------------------------------------------------------------

#: a first repetition this many robust standard deviations from the others' median is a warm-up
WARMUP_K = 4.0
#: and at least this far off relative to it (identical repetitions have no spread to count in)
WARMUP_FLOOR = 0.10


def is_warmup(values: Sequence[float], k: float = WARMUP_K, floor: float = WARMUP_FLOOR) -> bool:
    """Whether the first of values (in repetition order) is far off the others: more than k robust SDs
    (1.4826 · MAD) and more than floor of their median away from their median; needs three others."""
    if len(values) < 4:
        return False
    first, rest = values[0], list(values[1:])
    med = statistics.median(rest)
    mad = 1.4826 * statistics.median(abs(x - med) for x in rest)
    off = abs(first - med)
    return off > k * mad and off > floor * abs(med)
