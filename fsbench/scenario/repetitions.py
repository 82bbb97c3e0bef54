"""How many times a case runs: a fixed count, or adaptive (min to max, until the interval is narrow enough).

`repetitions: 3` runs each case three times. `repetitions: {min: 3, max: 10, target_ci: 5%, budget: 20m}`
runs it at least `min` times, then again while the 95 % confidence interval of its primary metrics is wider
than `target_ci` of their mean (half-width), up to `max` and while the repetitions of that case (same target,
workload and sweep point) have taken less than `budget` in all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fsbench.config import schema as s
from fsbench.core.stats import LEVEL, is_warmup, mean_ci

MAX_REPETITIONS = 1_000
DEFAULT_TARGET_CI = 0.05

#: why an adaptive case stopped repeating (repetitions.csv's `stop` column)
STOP_FIXED, STOP_CONVERGED, STOP_MAX, STOP_BUDGET, STOP_NO_VALUES = (
    "fixed", "converged", "max", "budget", "no-values")


@dataclass(frozen=True, eq=False)
class Repetitions:
    """min to max repetitions of each case; more than min only while the interval is wider than target_ci.

    A fixed count equals its number (`settings.repetitions == 3`), as it did when it was a plain integer."""

    min: int = 1
    max: int = 1
    target_ci: float = DEFAULT_TARGET_CI
    budget_s: float | None = None

    def _key(self) -> tuple:
        return (self.min, self.max, self.target_ci, self.budget_s)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int) and not isinstance(other, bool):
            return not self.adaptive and self.min == other
        return isinstance(other, Repetitions) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self.min) if not self.adaptive else hash(self._key())

    @property
    def adaptive(self) -> bool:
        return self.max > self.min

    def describe(self) -> str:
        """'3' or '3 to 10 (until ±5% at 95%, within 20m)' for plans and messages."""
        if not self.adaptive:
            return str(self.min)
        budget = f", within {self.budget_s:g}s" if self.budget_s else ""
        return f"{self.min} to {self.max} (until ±{self.target_ci * 100:g}% at {LEVEL:.0%}{budget})"


_ADAPTIVE = s.Struct({
    "min": s.Key(s.integer(1, MAX_REPETITIONS), default=3, doc="repetitions always run"),
    "max": s.Key(s.integer(1, MAX_REPETITIONS), default=10, doc="repetitions at most"),
    "target_ci": s.Key(s.string, default="5%", doc="stop once the 95% interval's half-width is within this "
                                                   "fraction of the mean (5% or 0.05)"),
    "budget": s.Key(s.duration, doc="stop once the case's repetitions took this long in all (e.g. 20m)"),
}, what="repetitions mapping (min, max, target_ci, budget)")


def check(value: object, path: tuple, lm, issues: list) -> Repetitions | None:
    """`3`, or {min, max, target_ci, budget} -> Repetitions."""
    if not isinstance(value, Mapping):
        n = s.integer(1, MAX_REPETITIONS)(value, path, lm, issues)
        return None if n is None else Repetitions(n, n)
    before = len(issues)
    out = _ADAPTIVE(dict(value), path, lm, issues)
    if out is None or len(issues) > before:
        return None
    text = str(out["target_ci"])
    try:
        target = float(text.rstrip("%")) / 100 if text.endswith("%") else float(text)
    except ValueError:
        target = math.nan
    if not 0 < target < 1:
        issues.append(lm.issue(path + ("target_ci",), f"expected a percentage between 0 and 100%, got {text!r}",
                               "e.g. target_ci: 5%"))
        return None
    if out["max"] < out["min"]:
        issues.append(lm.issue(path + ("max",), f"max ({out['max']}) is less than min ({out['min']})",
                               "max is the most repetitions of a case, at least min"))
        return None
    return Repetitions(out["min"], out["max"], target, out.get("budget"))


@dataclass(frozen=True)
class Decision:
    """Whether to run one more repetition of a case, and why (or why not)."""

    more: bool
    stop: str
    detail: str
    widest: float = math.nan  # the widest relative half-width over the primary metrics


def decide(spec: Repetitions, done: int, spent_s: float, values: Mapping[str, Sequence[float]],
           exclude_warmup: bool = False) -> Decision:
    """After `done` ok repetitions that took spent_s, with each primary metric's values in repetition
    order: one more repetition or stop (converged, max, budget)."""
    if not spec.adaptive:
        return Decision(done < spec.min, STOP_FIXED, f"fixed at {spec.min}")
    if done < spec.min:
        return Decision(True, "", f"{done} of at least {spec.min}")
    widest = math.nan
    for vals in values.values():
        vals = list(vals)
        if exclude_warmup and is_warmup(vals):
            vals = vals[1:]
        rel = mean_ci(vals).relative if len(vals) >= 2 else math.inf
        widest = rel if widest != widest else max(widest, rel if rel == rel else math.inf)
    if widest != widest:
        return Decision(False, STOP_NO_VALUES, f"no primary metric to judge after {done} repetitions")
    where = f"±{widest * 100:.1f}% at {LEVEL:.0%} after {done} repetitions"
    if widest <= spec.target_ci:
        return Decision(False, STOP_CONVERGED, f"{where}, within ±{spec.target_ci * 100:g}%", widest)
    if done >= spec.max:
        return Decision(False, STOP_MAX, f"{where}, still wider than ±{spec.target_ci * 100:g}% at max", widest)
    # one more repetition takes about as long as the average one: stop before it would overrun the budget
    if spec.budget_s is not None and spent_s + spent_s / max(done, 1) > spec.budget_s:
        return Decision(False, STOP_BUDGET, f"{where}: another repetition would overrun the budget of "
                                            f"{spec.budget_s:g}s ({spent_s:.0f}s spent)", widest)
    return Decision(True, "", f"{where}, wider than ±{spec.target_ci * 100:g}%", widest)


#: the reason of a repetition an adaptive case did not need (status skipped): not a problem, not a failure
NOT_NEEDED = "not needed"
#: how a case's own values combine across its jobs and hosts where no aggregate (host `all`) is given
_ADDITIVE = {"bandwidth", "iops", "rate", "ops", "io_bytes"}


def not_needed(status: str, reason: str) -> bool:
    """Whether a case record is an adaptive repetition that was not needed (its case stopped earlier)."""
    return status == "skipped" and str(reason).startswith(NOT_NEEDED)


def primary_values(reps: Sequence[Sequence[Mapping]], primary: Sequence[str]) -> dict[str, list[float]]:
    """Per job and operation, its first primary metric's value per repetition (rows of each ok repetition,
    in order), keyed job/operation/metric; hosts' aggregate where the tool gave one, else hosts combined."""
    out: dict[str, list[float]] = {}
    per_rep: list[dict[str, float]] = []
    for rows in reps:
        picked = [r for r in rows if r.get("metric") in primary and str(r.get("stat") or "value") in ("value", "mean")
                  and isinstance(r.get("value"), (int, float)) and math.isfinite(float(r["value"]))]
        has_all = {(r.get("operation"), r.get("metric")) for r in picked if r.get("host") == "all"}
        sums: dict[str, list[float]] = {}
        for r in picked:
            if (r.get("operation"), r.get("metric")) in has_all and r.get("host") != "all":
                continue
            key = f"{r.get('job') or ''}/{r.get('operation')}/{r.get('metric')}"
            sums.setdefault(key, []).append(float(r["value"]))
        per_rep.append({k: (sum(v) if k.rsplit("/", 1)[-1] in _ADDITIVE else sum(v) / len(v))
                        for k, v in sums.items()})
    # per job and operation, its first primary metric: the figure a reader compares (the conclusions' too);
    # fio's microsecond latencies swing by tens of % at a steady, paced bandwidth
    chosen: dict[str, str] = {}
    for k in dict.fromkeys(k for d in per_rep for k in d):
        where, metric = k.rsplit("/", 1)
        if where not in chosen or primary.index(metric) < primary.index(chosen[where]):
            chosen[where] = metric
    for where, metric in chosen.items():
        k = f"{where}/{metric}"
        vals = [d[k] for d in per_rep if k in d]
        if len(vals) == len(per_rep):  # a measurement every repetition has
            out[k] = vals
    return out
