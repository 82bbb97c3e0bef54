"""The published findings a scenario restates (`report.findings`), checked against this run's numbers.

A seed study states differences ("S3A renames are far slower than HDFS", "RBD beats CephFS at one thread,
CephFS wins at 64"). A scenario that reproduces it names each one as a measurement (workload, operation,
metric, swept point), two targets and the expected direction (`higher`, `lower` or `same`, optionally by at
least a factor). The verdict uses the conclusions' own rule (fsbench.analysis.difference): a difference is
taken as shown only where it is significant at 95 % (paired by round where both targets ran the same
rounds) and beyond the practical floors, so a finding is said to hold, or not, only where a rerun would say
the same; otherwise it is *not decided*, with the interval that was too wide and what would decide it.

  holds           the difference is stated, in the seed's direction (and at least the seed's factor, or
                  an interval that still reaches it); `same`: the whole 95 % interval lies within the floor
  does not hold   a difference stated the other way; one stated the seed's way but whose whole interval
                  stays short of the seed's factor; or, for `higher`/`lower`, a 95 % interval within the
                  floor (no difference worth acting on); `same`: a difference is stated
  not decided     none of those: the interval is too wide to tell (more rounds would narrow it)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from fsbench.analysis.difference import NONE, Difference, beyond_floors, compare
from fsbench.core.stats import t_quantile
from fsbench.core.stats_settings import Floors

HOLDS, FAILS, OPEN = "holds", "does not hold", "not decided"
#: units of a time: the floors' time_floor applies to them (latencies)
TIME_UNITS = {"s", "ms", "us", "µs", "ns"}


@dataclass(frozen=True)
class Finding:
    """One finding's verdict here: the seed's words, what was compared, the ratio with the interval of the
    test that decided, and the verdict with its reason."""

    claim: str
    what: str
    verdict: str
    reason: str
    ratio: float = math.nan
    low: float = math.nan
    high: float = math.nan
    method: str = ""
    n: int = 0

    def as_dict(self) -> dict:
        return {"claim": self.claim, "what": self.what, "verdict": self.verdict, "reason": self.reason,
                "ratio": self.ratio, "low": self.low, "high": self.high, "method": self.method, "n": self.n}


def num(x: float) -> str:
    """A ratio as the summary writes it: 0.183, 2.41, 12."""
    return f"{x:.3g}" if abs(x) < 10 else f"{x:.0f}"


def ratio_words(d: Difference) -> str:
    """'0.183× [0.150–0.224], paired by round over 3 rounds' (the interval of the test that decided)."""
    text = f"{num(d.ratio)}×"
    if math.isfinite(d.low) and math.isfinite(d.high):
        text += f" [{num(d.low)}–{num(d.high)}]"
    if d.method == NONE:
        return text + ", a single run each (no spread)"
    return text + f", {d.method} over {d.n} {'rounds' if d.method.startswith('paired') else 'runs'}"


def _point(spec: Mapping) -> str:
    at = spec.get("at") or {}
    return ", ".join(f"{k}={v}" for k, v in at.items())


def describe(spec: Mapping) -> str:
    """'s3a ÷ hdfs: rename rate (nnbench, maps=20)'."""
    where = ", ".join(x for x in (spec["workload"], _point(spec)) if x)
    return f"{spec['target']} ÷ {spec['versus']}: {spec['operation']} {spec['metric']} ({where})"


def _values(summary: pd.DataFrame, spec: Mapping, target: str) -> tuple[dict | None, str]:
    """The summary's figures of one target for the finding's measurement (the conclusions' value dict), or
    None and why."""
    if summary.empty:
        return None, "no results"
    df = summary[(summary["target"] == target) & (summary["workload"] == spec["workload"])
                 & (summary["operation"].astype(str) == str(spec["operation"]))
                 & (summary["metric"] == spec["metric"])]
    if "stat" in df:
        df = df[df["stat"].isin(["value", "mean"])]
    if spec.get("job"):
        df = df[df["job"].astype(str) == str(spec["job"])]
    if "host" in df:
        df = df[df["host"].isin(["all", ""])] if df["host"].isin(["all", ""]).any() else df
    for k, v in (spec.get("at") or {}).items():
        col = f"param_{k}"
        if col not in df:
            return None, f"{spec['workload']} has no swept {k}"
        df = df[df[col].astype(str) == str(v)]
    if df.empty:
        at = _point(spec)
        return None, f"{target} has no {spec['operation']} {spec['metric']}{' at ' + at if at else ''} in this run"
    if len(df) > 1:
        return None, f"{len(df)} measurements of {target} match; name the job"
    r = df.iloc[0]
    if not float(r["mean"]) > 0:
        return None, f"{target}'s value is not positive"
    out = {"mean": float(r["mean"]), "std": float(r.get("std") or 0.0), "n": int(r.get("n") or 1),
           "unit": str(r.get("unit") or "")}
    for k in ("log_mean", "log_var"):
        if k in r and r[k] == r[k]:
            out[k] = float(r[k])
    if isinstance(r.get("reps"), tuple):
        out["reps"] = r["reps"]
        out["prior"] = (r.get("prior_df", math.nan), r.get("prior_var", math.nan))
    if str(r.get("validity") or "") == "flagged":
        out["flagged"] = str(r.get("validity_detail") or "flagged")
    return out, ""


def check(summary: pd.DataFrame, spec: Mapping, floors: Floors) -> Finding:
    """The verdict of one finding (`spec`: a `report.findings` entry) on this run's summary."""
    claim, what = str(spec.get("claim") or ""), describe(spec)
    a, why_a = _values(summary, spec, str(spec["versus"]))
    b, why_b = _values(summary, spec, str(spec["target"]))
    if a is None or b is None:
        return Finding(claim, what, OPEN, f"not measured: {why_b or why_a}")
    flagged = b.get("flagged") or a.get("flagged")
    if flagged:
        return Finding(claim, what, OPEN, f"a value is flagged by the validity checks ({flagged.split(':')[0]}): "
                                          "it measures something else than its label")
    d = compare(a, b)
    is_time = a["unit"] in TIME_UNITS
    stated = d.significant and beyond_floors(a["mean"], b["mean"], floors, is_time)
    verdict, reason = _verdict(spec, d, stated, floors, is_time, a["mean"])
    return Finding(claim, what, verdict, f"{ratio_words(d)}: {reason}", d.ratio, d.low, d.high, d.method, d.n)


def _within_floor(d: Difference, floors: Floors, is_time: bool, base: float) -> bool:
    """Whether the whole 95 % interval of b / a lies within the practical floor (equivalent for practice)."""
    if not (math.isfinite(d.low) and math.isfinite(d.high)):
        return False
    if is_time and base * abs(d.high - 1) <= floors.time_floor_s and base * abs(1 - d.low) <= floors.time_floor_s:
        return True
    f = floors.min_effect
    return d.low >= 1 - f and d.high <= 1 / (1 - f)


def _verdict(spec: Mapping, d: Difference, stated: bool, floors: Floors, is_time: bool,
             base: float) -> tuple[str, str]:
    expect = str(spec["expect"])
    within = _within_floor(d, floors, is_time, base)
    if d.method == NONE and not stated:
        return OPEN, "one run per target cannot tell a difference from noise: run the cases in rounds"
    if expect == "same":
        if stated:
            return FAILS, f"a difference beyond the {floors.min_effect:.0%} floor, significant at 95 %"
        if within:
            return HOLDS, f"the whole interval within the {floors.min_effect:.0%} floor"
        return OPEN, (f"no difference shown, but the interval reaches beyond the {floors.min_effect:.0%} floor: "
                      "more rounds would narrow it")
    up = expect == "higher"
    factor = float(spec.get("by") or 1.0)
    goal = factor if up else 1 / factor
    if stated and (d.ratio > 1) != up:
        return FAILS, f"the other way: {spec['target']} {'lower' if up else 'higher'}, significant at 95 %"
    if stated:
        if factor <= 1:
            return HOLDS, "significant at 95 % and beyond the floors"
        reaches = (d.ratio >= goal) if up else (d.ratio <= goal)
        if reaches:
            return HOLDS, f"significant, and beyond the seed's {num(factor)}×"
        bound = d.high if up else d.low
        short = math.isfinite(bound) and ((bound < goal) if up else (bound > goal))
        if short:
            return FAILS, (f"{'higher' if up else 'lower'} as the seed says, but by less than its {num(factor)}× "
                           "(the whole interval short of it)")
        return HOLDS, f"{'higher' if up else 'lower'} as the seed says; its {num(factor)}× within the interval"
    if within:
        return FAILS, f"no difference here: the whole interval within the {floors.min_effect:.0%} floor"
    k = rounds_to_decide(d, floors)
    more = (f"about {k} rounds at this spread would decide it" if k else
            f"more than {MOST_ROUNDS} rounds at this spread: longer runs per case (or a quieter machine) would")
    return OPEN, f"not significant at 95 % or within the floors: {more}"


#: rounds suggested at most
MOST_ROUNDS = 30


def rounds_to_decide(d: Difference, floors: Floors) -> int | None:
    """How many rounds (or runs per side) would narrow this interval, at its observed spread, enough to
    decide: either to exclude 1 at the observed ratio, or to fit within the floor; None beyond MOST_ROUNDS
    or where the interval is not known."""
    if not (math.isfinite(d.low) and math.isfinite(d.high) and d.low > 0 and d.n >= 2 and d.ratio > 0):
        return None
    df = d.df or d.n - 1  # a moderated test's own; the family's share (df - (n - 1)) stays with more rounds
    half = (math.log(d.high) - math.log(d.low)) / 2
    sd = half / t_quantile(0.975, df) * math.sqrt(d.n)
    m = abs(math.log(d.ratio))
    goal = max(m, math.log(1 / (1 - floors.min_effect)) - m)  # the looser of the two ways to decide
    if sd <= 0:
        return d.n
    for k in range(max(3, d.n + 1), MOST_ROUNDS + 1):
        if t_quantile(0.975, df - d.n + k) * sd / math.sqrt(k) < goal:
            return k
    return None


def check_all(summary: pd.DataFrame, specs: list[Mapping], floors: Floors) -> list[dict]:
    """Every finding's verdict, in the scenario's order."""
    return [check(summary, spec, floors).as_dict() for spec in specs]
