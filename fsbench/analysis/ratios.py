"""fsbench.core.stats.log_ratio for a whole column of ratios at once (numpy), for the report's summary.

A 10,000-case report asks for 37,500 ratio intervals, each with its own Welch degrees of freedom, so no
quantile repeats: one at a time that was a quarter of the report. The arithmetic is the scalar one step
for step (the continued fraction, the bracketed Newton from the Cornish-Fisher start), each element
stopping where the scalar would; a unit test holds the two to 1e-12. Elements the scalar code treats
specially (infinite t or degrees of freedom) are handed to it.
"""

from __future__ import annotations

import math

import numpy as np

from fsbench.core import stats

TINY = 1e-300


def log_ratios(n: np.ndarray, log_mean: np.ndarray, log_var: np.ndarray, base_n: np.ndarray,
               base_log_mean: np.ndarray, base_log_var: np.ndarray,
               level: float = stats.LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, p) of stats.log_ratio(base, this) per element; NaN where a side has fewer than two
    values or a figure is missing."""
    n, lm, lv, bn, blm, blv = (np.asarray(x, dtype=float) for x in (n, log_mean, log_var, base_n, base_log_mean,
                                                                    base_log_var))
    low, high, p = (np.full(n.shape, math.nan) for _ in range(3))
    ok = ~(np.isnan(n) | np.isnan(lm) | np.isnan(lv) | np.isnan(bn) | np.isnan(blm) | np.isnan(blv))
    ok &= (n >= 2) & (bn >= 2)
    n, bn = np.trunc(n), np.trunc(bn)  # the scalar takes int(n)
    with np.errstate(all="ignore"):
        va, vb = blv / bn, lv / n
        se2 = va + vb
        diff = lm - blm
        flat = ok & (se2 == 0)  # both sides constant: the limit of the test is certainty either way
        ratio = np.exp(diff)
        low[flat], high[flat] = ratio[flat], ratio[flat]
        p[flat] = np.where(np.abs(blm[flat] - lm[flat]) <= 1e-12, 1.0, 0.0)
        spread = ok & (se2 != 0)
        df = se2 * se2 / (np.where(va != 0, va * va / (bn - 1), 0.0) + np.where(vb != 0, vb * vb / (n - 1), 0.0))
        t = diff / np.sqrt(se2)
    plain = spread & np.isfinite(df) & np.isfinite(t)
    for i in np.flatnonzero(spread & ~plain):  # the scalar code's special cases, as it decides them
        r = stats.log_ratio(stats.LogSummary(int(bn[i]), float(blm[i]), float(blv[i])),
                            stats.LogSummary(int(n[i]), float(lm[i]), float(lv[i])), level)
        low[i], high[i], p[i] = r.low, r.high, r.p
    if plain.any():
        d, tt, s, dd = df[plain], t[plain], se2[plain], diff[plain]
        half = t_quantiles(1 - (1 - level) / 2, d) * np.sqrt(s)
        low[plain], high[plain] = np.exp(dd - half), np.exp(dd + half)
        p[plain] = two_sided_p(tt, d)
    return low, high, p


def two_sided_p(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """stats.t_two_sided_p per element (finite t and df)."""
    x = df / (df + t * t)
    return np.minimum(1.0, np.maximum(0.0, betainc(df / 2, 0.5, x, _lgammas(df / 2, 0.5))))


def _lgammas(a: np.ndarray, b: float) -> np.ndarray:
    """lgamma(a + b) - lgamma(a) - lgamma(b), as the scalar betainc sums them (math's lgamma: numpy has none)."""
    lb = math.lgamma(b)
    return np.array([math.lgamma(x + b) - math.lgamma(x) - lb for x in a.tolist()])


def betainc(a: np.ndarray, b: float, x: np.ndarray, lgammas: np.ndarray) -> np.ndarray:
    """stats.betainc(a, b, x) per element, lgammas from _lgammas(a, b)."""
    out = np.where(x <= 0, 0.0, 1.0)
    inside = (x > 0) & (x < 1)
    if not inside.any():
        return out
    a_, x_, lg = a[inside], x[inside], lgammas[inside]
    b_ = np.full(a_.shape, b)
    front = np.exp(lg + a_ * np.log(x_) + b_ * np.log1p(-x_))
    direct = x_ < (a_ + 1) / (a_ + b_ + 2)  # the fraction converges fast only on this side of the mean
    cf = _betacf(np.where(direct, a_, b_), np.where(direct, b_, a_), np.where(direct, x_, 1.0 - x_))
    out[inside] = np.where(direct, front * cf / a_, 1.0 - front * cf / b_)
    return out


def _betacf(a: np.ndarray, b: np.ndarray, x: np.ndarray, eps: float = 1e-14, max_iter: int = 500) -> np.ndarray:
    """stats._betacf per element: Lentz's continued fraction, each element frozen once it has converged."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones(a.shape)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) > TINY, d, TINY)
    h = d.copy()
    active = np.ones(a.shape, dtype=bool)
    for m in range(1, max_iter + 1):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            nd = 1.0 + aa * d
            nd = 1.0 / np.where(np.abs(nd) > TINY, nd, TINY)
            nc = 1.0 + aa / c
            nc = np.where(np.abs(nc) > TINY, nc, TINY)
            d, c, h = np.where(active, nd, d), np.where(active, nc, c), np.where(active, h * nd * nc, h)
        active &= ~(np.abs(d * c - 1.0) < eps)
        if not active.any():
            break
    return h


def t_quantiles(p: float, df: np.ndarray) -> np.ndarray:
    """stats.t_quantile(p, df) per element of finite df: the same safeguarded Newton, element by element."""
    z = stats.t_quantile(p, math.inf)
    tail = 2 * (1 - p)
    half, lg = df / 2, _lgammas(df / 2, 0.5)
    log_c = np.array([math.lgamma((v + 1) / 2) - math.lgamma(v / 2) - 0.5 * math.log(v * math.pi)
                      for v in df.tolist()])
    x = np.maximum(z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2), 1e-3)
    lo, hi = np.zeros(df.shape), np.full(df.shape, math.inf)
    out = np.full(df.shape, math.nan)
    active = np.ones(df.shape, dtype=bool)
    for _ in range(400):
        i = np.flatnonzero(active)
        if not len(i):
            break
        xi, dfi = x[i], df[i]
        f = betainc(half[i], 0.5, dfi / (dfi + xi * xi), lg[i])
        f = np.minimum(1.0, np.maximum(0.0, f)) - tail  # decreasing in x
        lo[i] = np.where(f > 0, xi, lo[i])
        hi[i] = np.where(f > 0, hi[i], xi)
        slope = -2 * np.exp(log_c[i] - (dfi + 1) / 2 * np.log1p(xi * xi / dfi))  # d/dx of the two-sided tail
        with np.errstate(all="ignore"):
            step = np.where(slope != 0, xi - f / slope, math.nan)
        done = (f == 0) | (np.abs(step - xi) <= 1e-13 * xi)
        out[i[done]] = np.where(step[done] == step[done], step[done], xi[done])
        lo_i, hi_i = lo[i], hi[i]
        inside = (lo_i < step) & (step < hi_i)
        nx = np.where(inside, step, np.where(hi_i < math.inf, (lo_i + hi_i) / 2, 2 * xi))
        x[i] = np.where(done, xi, nx)
        narrow = ~done & (hi_i - lo_i < 1e-12 * np.maximum(1.0, hi_i))
        out[i[narrow]] = x[i[narrow]]
        active[i[done | narrow]] = False
    left = active & np.isnan(out)
    out[left] = x[left]
    return out
