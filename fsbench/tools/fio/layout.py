"""Whether two prepare steps lay out the same files (the layout-relevant part of a prepare invocation), and
one step that lays out the files of several."""

from __future__ import annotations

import re
from pathlib import Path

from fsbench.api.tools import Invocation
from fsbench.tools.fio.jobfile import parse_jobfile

#: options that decide how files are read, never which files there are, their sizes or their content
#: (a case sweeping one of these reads the files the previous case's prepare step laid out)
NOT_LAYOUT = frozenset({
    "iodepth", "iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete", "iodepth_batch_complete_min",
    "iodepth_batch_complete_max", "iodepth_low", "runtime", "time_based", "ramp_time", "startdelay",
    "thinktime", "thinktime_blocks", "thinktime_spin", "rate", "rate_iops", "rate_min", "rate_iops_min",
    "rate_process", "rate_cycle"})
_KEY = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=|$)")


def layout_key(prep: Invocation, ignore: frozenset[str] = NOT_LAYOUT) -> str:
    """The prepare invocation without comments and `ignore`d options: equal keys lay out equal files."""
    files = {name: "\n".join(line for line in text.splitlines() if _keeps(line, ignore))
             for name, text in sorted(prep.files.items())}
    return repr((prep.argv, prep.steps, files, sorted(prep.env.items()), prep.servers))


def cover(preps: list[Invocation]) -> Invocation | None:
    """The one of preps whose files hold every other's, or None.

    fio's n-th clone of a job (numjobs) has the same files however many clones there are: its own
    ($jobnum in the file names fsbench gives a dataset), or the one file the clones share. So of steps
    that differ in numjobs alone, the one with at least as many clones of each job as every other lays
    out all their files. Steps that differ in anything else, or whose numjobs is not a plain number, have
    no cover here."""
    if not preps or any(p.controller or p.per_host or p.servers for p in preps):
        return None
    if len({layout_key(p, NOT_LAYOUT | {"numjobs"}) for p in preps}) != 1:
        return None
    clones = [c for c in (_clones(p) for p in preps) if c is not None]
    if len(clones) != len(preps) or len({len(c) for c in clones}) != 1:
        return None
    for prep, mine in zip(preps, clones, strict=True):
        if all(all(a >= b for a, b in zip(mine, other, strict=True)) for other in clones):
            return prep
    return None


def _clones(prep: Invocation) -> list[int] | None:
    """numjobs of each job of each job file, in order (None: one is not a plain number)."""
    out: list[int] = []
    for name, text in sorted(prep.files.items()):
        jf = parse_jobfile(text, name, env={}, read=_rendered)
        if jf.problems:
            return None
        for _job, opts in jf.jobs():
            value = str(opts.get("numjobs") or "1").strip()
            if not value.isascii() or not value.isdigit():
                return None
            out.append(int(value))
    return out


def _rendered(path: Path) -> str:
    raise OSError(f"{path}: a rendered job file includes nothing")  # fsbench renders includes inline


def _keeps(line: str, ignore: frozenset[str]) -> bool:
    stripped = line.strip()
    if not stripped or stripped[0] in "#;":
        return False
    m = _KEY.match(stripped)
    return not (m and m.group(1) in ignore)
