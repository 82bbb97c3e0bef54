"""Whether two prepare steps lay out the same files: the layout-relevant part of a prepare invocation."""

from __future__ import annotations

import re

from fsbench.api.tools import Invocation

#: options that decide how files are read, never which files there are, their sizes or their content
#: (a case sweeping one of these reads the files the previous case's prepare step laid out)
NOT_LAYOUT = frozenset({
    "iodepth", "iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete", "iodepth_batch_complete_min",
    "iodepth_batch_complete_max", "iodepth_low", "runtime", "time_based", "ramp_time", "startdelay",
    "thinktime", "thinktime_blocks", "thinktime_spin", "rate", "rate_iops", "rate_min", "rate_iops_min",
    "rate_process", "rate_cycle"})
_KEY = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=|$)")


def layout_key(prep: Invocation) -> str:
    """The prepare invocation without comments and NOT_LAYOUT options: equal keys lay out equal files."""
    files = {name: "\n".join(line for line in text.splitlines() if _keeps(line))
             for name, text in sorted(prep.files.items())}
    return repr((prep.argv, prep.steps, files, sorted(prep.env.items()), prep.servers))


def _keeps(line: str) -> bool:
    stripped = line.strip()
    if not stripped or stripped[0] in "#;":
        return False
    m = _KEY.match(stripped)
    return not (m and m.group(1) in NOT_LAYOUT)
