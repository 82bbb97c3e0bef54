"""When a difference is worth stating: `settings: {stats: {min_effect, time_floor}}` of a scenario."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fsbench.config import schema as s
from fsbench.core.units import parse_fraction

#: a difference smaller than this share of the larger value is not stated, however significant: on a shared
#: 2-core machine, run-to-run drift of a few % is common (docs/benchmarks.md), and a reader acts on 10 %
MIN_EFFECT = 0.10
#: a latency difference below this many seconds is not stated: a cached 1-byte read through a JuiceFS mount
#: (no metadata engine involved) averaged 10 to 21 µs across the engines of one meta-engines run here, so
#: a gap under 20 µs is the mount's floor, not the engine
TIME_FLOOR = 20e-6


def _share(value: object, path: tuple, lm, issues: list) -> object:
    """'10%' or 0.1 -> 0.1, between 0 and 1."""
    try:
        share = parse_fraction(value)
    except (TypeError, ValueError):
        share = -1.0
    if not 0.0 <= share < 1.0:
        issues.append(lm.issue(path, f"expected a share such as 10% (0% to 99%), got {value!r}"))
        return None
    return share


SECTION = s.Struct({
    "min_effect": s.Key(_share, default=MIN_EFFECT,
                        doc="a difference is stated only beyond this share of the larger value (and significant)"),
    "time_floor": s.Key(s.duration, default=TIME_FLOOR,
                        doc="a latency difference is stated only beyond this time (e.g. 20us)"),
}, what="stats settings (min_effect, time_floor)")


@dataclass(frozen=True)
class Floors:
    """How big a significant difference must be to be stated."""

    min_effect: float = MIN_EFFECT
    time_floor_s: float = TIME_FLOOR

    @classmethod
    def of(cls, checked: Mapping | None) -> Floors:
        """From the checked (or the run's scenario.yaml) section; absent keys keep their defaults."""
        c = {k: v for k, v in (checked or {}).items() if v is not None}
        d = cls()
        try:
            effect = float(str(c.get("min_effect", d.min_effect)).rstrip("%")) / (
                100 if str(c.get("min_effect", "")).endswith("%") else 1)
            from fsbench.core.units import parse_duration

            floor = parse_duration(c.get("time_floor", d.time_floor_s))
        except (TypeError, ValueError):
            return d
        return cls(effect, floor)
