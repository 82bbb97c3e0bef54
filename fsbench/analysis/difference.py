"""Whether two targets' values of one measurement differ, and by how much: paired by round where both ran
the same rounds (settings.order: rounds), else Welch on the logarithms, else the tool's own spread over
repetitions it summarised (mdtest's iterations). The spread of the calls one run timed is not used: it does
not cover drift between runs (two runs of meta-engines put one engine at 0.22x and 1.16x the baseline, each
"significant" by the spread of its 30 calls).

Paired by round, the test is the one of what a rerun would find (`paired`): the rounds' spread moderated by
the family's (fsbench.analysis.moderated), the interval widened by a rerun's own spread.

A difference is *stated* only when it is significant at 95 % AND larger than the practical floors
(fsbench.core.stats_settings: min_effect of the larger value, and time_floor for latencies), so a
conclusion says what would hold on a rerun, not what the noise of one run happened to show.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from fsbench.analysis.moderated import Prior
from fsbench.core.stats import LEVEL, LogSummary, Ratio, log_ratio, mean_std, t_quantile, t_two_sided_p
from fsbench.core.stats_settings import Floors

ALPHA = 1 - LEVEL
#: a rerun's mean log ratio varies by this run's mean's variance plus its own (the same again)
RERUN = 2.0
#: how a difference was judged (said beside it where it matters)
PAIRED, WELCH, NONE = "paired by round", "Welch", "no spread"


@dataclass(frozen=True)
class Difference:
    """b / a (ratio of geometric means, or of means), its 95 % interval, p, and how it was tested."""

    ratio: float
    low: float
    high: float
    p: float
    method: str
    n: int = 0  # rounds paired, or the smaller side's count
    df: float = 0.0  # the test's degrees of freedom where it is not n - 1 (a moderated paired test)

    @property
    def significant(self) -> bool:
        return self.p == self.p and self.p < ALPHA


def pairs(a: Mapping, b: Mapping) -> list[tuple[float, float]]:
    """The (a, b) values of the rounds both sides ran (their `reps`: ((round, value), ...)), positive only."""
    ra, rb = dict(a.get("reps") or ()), dict(b.get("reps") or ())
    return [(float(ra[r]), float(rb[r])) for r in sorted(set(ra) & set(rb))
            if float(ra[r]) > 0 and float(rb[r]) > 0]


def paired_t(d: Sequence[float], level: float = LEVEL, prior: Prior | None = None,
             rerun: float = 1.0) -> tuple[float, float, float, float, float]:
    """Mean of paired differences, its t interval and two-sided p, and the degrees of freedom: the paired
    t-test (df n-1). With `prior`, the differences' variance is moderated by it (fsbench.analysis.moderated);
    with `rerun`, the mean's variance counts that many times (2: where a rerun's mean would fall)."""
    n = len(d)
    m, sd = mean_std(d)
    var, df = sd * sd, float(n - 1)
    if prior is not None:
        var, df = prior.moderate(var, df)
    if var == 0:
        return m, m, m, 1.0 if m == 0 else 0.0, df
    se = math.sqrt(rerun * var / n)
    half = t_quantile(1 - (1 - level) / 2, df) * se
    return m, m - half, m + half, t_two_sided_p(m / se, df), df


def paired(ab: list[tuple[float, float]], level: float = LEVEL, prior: Prior | None = None) -> Difference:
    """b / a from the per-round log ratios, as a rerun would find it: common drift cancels round by round,
    the spread of the rounds is moderated by the family's (`prior`, fsbench.analysis.moderated), and the
    interval is where a rerun's ratio would fall: its variance is this run's mean's plus the rerun's own
    (RERUN times the mean's), so a difference is said only where a rerun of the same rounds would most likely
    find it too. The interval and p printed beside a ratio are this test's."""
    m, low, high, p, df = paired_t([math.log(y) - math.log(x) for x, y in ab], level, prior, RERUN)
    return Difference(math.exp(m), math.exp(low), math.exp(high), p, PAIRED, len(ab), df)


def prior_of(*values: Mapping) -> Prior | None:
    """The family prior a value carries (`prior`: (df, var), fsbench.analysis.priors), if any."""
    for v in values:
        got = v.get("prior")
        if got and all(x == x for x in got):
            return Prior(float(got[0]), float(got[1]))
    return None


def compare(a: Mapping, b: Mapping) -> Difference:
    """b / a of two targets' values (the conclusions' measurement values: mean, std, n, reps, log_mean,
    log_var)."""
    ab = pairs(a, b)
    if len(ab) >= 3:
        return paired(ab, prior=prior_of(a, b))
    if int(a.get("n", 1)) >= 2 and int(b.get("n", 1)) >= 2 and "log_mean" in a and "log_mean" in b:
        r = _log_ratio(LogSummary(int(a["n"]), a["log_mean"], a["log_var"]),
                       LogSummary(int(b["n"]), b["log_mean"], b["log_var"]))
        return Difference(r.ratio, r.low, r.high, r.p, WELCH, min(int(a["n"]), int(b["n"])))
    ratio = b["mean"] / a["mean"] if a["mean"] else math.nan
    if a.get("std") and b.get("std") and int(a.get("n", 1)) >= 2 and int(b.get("n", 1)) >= 2:
        w = _welch_from((a["mean"], a["std"], a["n"]), (b["mean"], b["std"], b["n"]))
        return Difference(ratio, math.nan, math.nan, w, WELCH, min(int(a["n"]), int(b["n"])))
    return Difference(ratio, math.nan, math.nan, math.nan, NONE, 1)


@lru_cache(maxsize=1 << 16)
def _log_ratio(a: LogSummary, b: LogSummary) -> Ratio:
    """log_ratio, remembered: a report's conclusions and summary page ask about the same pairs again (a
    10,000-case report: 9,000 questions about 2,400 pairs, a twentieth of its time one at a time)."""
    return log_ratio(a, b)


def _welch_from(a: tuple, b: tuple) -> float:
    """Welch's p from (mean, sd, n) of each side."""
    (ma, sa, na), (mb, sb, nb) = a, b
    va, vb = sa * sa / na, sb * sb / nb
    if va + vb == 0:
        return 1.0 if ma == mb else 0.0
    t = (mb - ma) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / ((va * va / (na - 1) if va else 0.0) + (vb * vb / (nb - 1) if vb else 0.0))
    return t_two_sided_p(t, df)


def beyond_floors(a_mean: float, b_mean: float, floors: Floors, is_time: bool) -> bool:
    """Whether a gap between two values is big enough to act on: more than min_effect of the larger, and
    for a time (latency) more than time_floor too."""
    gap = abs(a_mean - b_mean)
    if gap <= floors.min_effect * max(abs(a_mean), abs(b_mean)):
        return False
    return not is_time or gap > floors.time_floor_s


def stated(a: Mapping, b: Mapping, floors: Floors, is_time: bool) -> bool:
    """Whether a conclusion may say a and b differ: significant and beyond the floors."""
    return beyond_floors(float(a["mean"]), float(b["mean"]), floors, is_time) and compare(a, b).significant


