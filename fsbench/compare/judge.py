"""The verdict on one measurement: better, worse or same, and how confident it is."""

from __future__ import annotations

import math
from collections.abc import Sequence

from fsbench.api.tools import better_big
from fsbench.compare.model import BETTER, MIN_REPETITIONS, NOT_SIGNIFICANT, SAME, SIGNIFICANT, UNTESTED, WORSE
from fsbench.compare.tolerance import format_tolerance
from fsbench.core.stats import mean_std, welch
from fsbench.tools import TOOLS


def direction(metric: str, tool: str = "") -> str:
    """'higher' when a bigger value is better (throughputs, and what the tool's plug-in declares so),
    'lower' for latencies, times and the rest."""
    plugin = TOOLS.get(tool) if tool in TOOLS else None
    return "higher" if better_big(metric, plugin) else "lower"


def judge(a: Sequence[float], b: Sequence[float], metric: str, tolerance: float, alpha: float,
          tool: str = "") -> dict:
    """Compare repetitions of one measurement in the reference (a) and another run (b).

    A change counts only when it is outside the tolerance band (relative to the reference mean)
    and, where both sides have at least three repetitions, significant by Welch's t-test
    (p < alpha); outside the band but not significant is `same`, as in asv.
    """
    ma, sa = mean_std(a)
    mb, sb = mean_std(b)
    if ma != 0:
        ratio = mb / ma
        change = ratio - 1
    else:
        ratio = math.nan
        change = 0.0 if mb == 0 else math.copysign(math.inf, mb)
    # rounding keeps a change of exactly the band (1.05 / 1.0 - 1 = 0.0500000001) inside it
    rounded = round(change, 12) if math.isfinite(change) else change
    higher = direction(metric, tool) == "higher"
    improved = rounded > tolerance if higher else rounded < -tolerance
    regressed = rounded < -tolerance if higher else rounded > tolerance
    p = math.nan
    confidence = UNTESTED
    if len(a) >= MIN_REPETITIONS and len(b) >= MIN_REPETITIONS:
        p = significance(a, b)
        confidence = SIGNIFICANT if p < alpha else NOT_SIGNIFICANT
    band = f"±{format_tolerance(tolerance)}"
    if not (improved or regressed):
        verdict, detail = SAME, f"within {band}"
    elif confidence == NOT_SIGNIFICANT:
        verdict = SAME
        detail = f"outside {band} but not significant (p = {p:.2g} ≥ α = {alpha:g})"
    else:
        verdict = BETTER if improved else WORSE
        detail = (f"outside {band}, p = {p:.2g}" if confidence == SIGNIFICANT else
                  f"outside {band}; untested: fewer than {MIN_REPETITIONS} repetitions "
                  f"(n = {len(a)} vs {len(b)})")
    return {"n_a": len(a), "mean_a": ma, "std_a": sa, "n_b": len(b), "mean_b": mb, "std_b": sb,
            "ratio": ratio, "change": change, "tolerance": tolerance, "beyond_band": improved or regressed,
            "p_value": p, "confidence": confidence, "verdict": verdict, "detail": detail}


def significance(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p of Welch's t-test on the logarithms of the values (on the values if some are <= 0).

    Storage measurements vary by factors, not by amounts (page-cache writes: 15 GiB/s, then 2 GiB/s
    on a busy host); on the raw scale one fast repetition swamps the test, so that even a hundredfold
    slowdown is "not significant" with three repetitions. Logarithms test the ratio, as the bands do.
    """
    if min(a) > 0 and min(b) > 0:
        return welch([math.log(x) for x in a], [math.log(x) for x in b]).p
    return welch(a, b).p


def describe(values: Sequence[float]) -> dict:
    """n, mean and standard deviation of one side (for rows that get no verdict by numbers)."""
    m, s = mean_std(values)
    return {"n": len(values), "mean": m, "std": s}
