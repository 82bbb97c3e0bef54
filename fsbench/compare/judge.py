"""The verdict on one measurement: better, worse or same, and how sure it is."""

from __future__ import annotations

import math
from collections.abc import Sequence

from fsbench.analysis.difference import beyond_floors
from fsbench.api.tools import better_big
from fsbench.compare.model import BETTER, MIN_REPETITIONS, NOT_SIGNIFICANT, SAME, SIGNIFICANT, UNTESTED, WORSE
from fsbench.compare.tolerance import format_tolerance
from fsbench.core.stats import mean_std, welch
from fsbench.core.stats_settings import Floors
from fsbench.tools import TOOLS

#: no floors: only the band and the test decide (judge's default, for a measurement judged on its own)
NO_FLOORS = Floors(0.0, 0.0)


def direction(metric: str, tool: str = "") -> str:
    """'higher' when a bigger value is better (throughputs, and what the tool's plug-in declares so),
    'lower' for latencies, times and the rest."""
    plugin = TOOLS.get(tool) if tool in TOOLS else None
    return "higher" if better_big(metric, plugin) else "lower"


def is_time(metric: str, unit: str) -> bool:
    """Whether a measurement is a time (a latency), which the time floor applies to (as in the report)."""
    return unit == "s" or "latency" in metric or metric.startswith("clat")


def judge(a: Sequence[float], b: Sequence[float], metric: str, tolerance: float, alpha: float,
          tool: str = "", floors: Floors = NO_FLOORS, unit: str = "") -> dict:
    """Compare repetitions of one measurement in the reference (a) and another run (b).

    A change counts only when it is outside the tolerance band (relative to the reference mean), beyond
    the practical floors (min_effect of the larger value, time_floor for times) and, where both sides have
    at least three repetitions, significant by Welch's t-test on the logarithms. Judged alone its q is its
    p; `fdr.adjust` decides again with the q of all the measurements of a compared run.
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
    floored = ma == ma and mb == mb and beyond_floors(ma, mb, floors, is_time(metric, unit))
    p = significance(a, b) if len(a) >= MIN_REPETITIONS and len(b) >= MIN_REPETITIONS else math.nan
    row = {"n_a": len(a), "mean_a": ma, "std_a": sa, "n_b": len(b), "mean_b": mb, "std_b": sb,
           "ratio": ratio, "change": change, "tolerance": tolerance, "beyond_band": improved or regressed,
           "beyond_floors": floored, "improved": improved, "p_value": p, "q_value": p}
    return decide(row, alpha, floors)


def decide(row: dict, alpha: float, floors: Floors = NO_FLOORS) -> dict:
    """The verdict, confidence and words of a judged row from its band, floors and q (adjusted p)."""
    q, band = row["q_value"], f"±{format_tolerance(row['tolerance'])}"
    confidence = UNTESTED if q != q else SIGNIFICANT if q < alpha else NOT_SIGNIFICANT
    tests = f"p {_num(row['p_value'])}, q {_num(q)}" if q == q else ""
    if not row["beyond_band"]:
        verdict, detail, sure = SAME, f"within {band}", "no change beyond the band"
    elif not row["beyond_floors"]:
        verdict, detail = SAME, f"outside {band} but within the floors ({_floors(floors)})"
        sure = "no change worth acting on"
    elif confidence == NOT_SIGNIFICANT:
        verdict, detail = SAME, f"outside {band} and the floors but not significant ({tests} ≥ α = {alpha:g})"
        sure = "unsure: more repetitions would tell"
    else:
        verdict = BETTER if row["improved"] else WORSE
        if confidence == SIGNIFICANT:
            detail, sure = f"outside {band} and the floors, {tests}", sureness(q, alpha)
        else:
            detail = (f"outside {band} and the floors; untested: fewer than {MIN_REPETITIONS} repetitions "
                      f"(n = {row['n_a']} vs {row['n_b']})")
            sure = "untested: no test, so no error rate"
    if row.get("note"):  # repetitions that never ran, said beside whatever was judged on the rest
        detail = f"{detail}; {row['note']}"
    return {**row, "confidence": confidence, "verdict": verdict, "detail": detail, "sure": sure}


def sureness(q: float, alpha: float) -> str:
    """Words for a significant verdict's q: the false-discovery rate at which it would still be called."""
    if q < alpha / 50:
        return "very sure"
    return "sure" if q < alpha / 5 else "fairly sure"


def _floors(floors: Floors) -> str:
    return f"{format_tolerance(floors.min_effect)} of the larger value, {floors.time_floor_s * 1e6:g} µs for times"


def _num(x: float) -> str:
    return "< 0.001" if x < 0.001 else f"= {x:.2g}"


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
