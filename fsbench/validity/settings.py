"""The validity thresholds: `settings: {validity: {...}}` of a scenario, with defaults."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.config import schema as s
from fsbench.core.units import parse_fraction


def _share(value: object, path: tuple, lm, issues: list) -> object:
    """'50%' or 0.5 -> 0.5, between 0 and 1."""
    try:
        share = parse_fraction(value)
    except (TypeError, ValueError):
        share = -1.0
    if not 0.0 <= share <= 1.0:
        issues.append(lm.issue(path, f"expected a share such as 50% (0% to 100%), got {value!r}"))
        return None
    return share


SECTION = s.Struct({
    "cache_ratio": s.Key(_share, default=0.5,
                         doc="a read whose backend served less than this share of the tool's bytes is flagged "
                             "'read served from cache'"),
    "durable_ratio": s.Key(_share, default=0.7,
                           doc="a write whose backend had less than this share of the tool's bytes when the tool "
                               "ended, or whose durable bandwidth is below this share of the tool's, is flagged "
                               "'write not durable in the timed window'"),
    "settle": s.Key(s.duration, default=30.0,
                    doc="after the tool, how long fsbench waits at most for the backend to go quiet"),
    "quiet": s.Key(s.duration, default=1.0, doc="the backend is quiet when its counters stay still this long"),
    "page_cache_share": s.Key(_share, default=0.5,
                              doc="where no backend counts what it served: a buffered read of a working set under "
                                  "this share of the host's memory, with no page cache drop before it (or read "
                                  "more than once), is flagged 'working set fits in the page cache'"),
    "reread_margin": s.Key(_share, default=0.05,
                           doc="a tool that read more than its working set by this share read some bytes twice"),
}, what="validity thresholds")


@dataclass(frozen=True)
class Thresholds:
    """The checks' settings (see SECTION for each one's meaning)."""

    cache_ratio: float = 0.5
    durable_ratio: float = 0.7
    settle_s: float = 30.0
    quiet_s: float = 1.0
    page_cache_share: float = 0.5
    reread_margin: float = 0.05

    @classmethod
    def of(cls, checked: dict | None) -> "Thresholds":
        """From the checked section (keys absent or None keep their defaults)."""
        c = {k: v for k, v in (checked or {}).items() if v is not None}
        d = cls()
        return cls(cache_ratio=float(c.get("cache_ratio", d.cache_ratio)),
                   durable_ratio=float(c.get("durable_ratio", d.durable_ratio)),
                   settle_s=float(c.get("settle", d.settle_s)), quiet_s=float(c.get("quiet", d.quiet_s)),
                   page_cache_share=float(c.get("page_cache_share", d.page_cache_share)),
                   reread_margin=float(c.get("reread_margin", d.reread_margin)))
