"""Ceph as a backend: what the OSDs serving a target's pools read and wrote for clients, from their own
perf counters.

Pool statistics (`rados df`, `ceph df`) reach the monitors seconds late (the OSDs report them to the
manager every few seconds: 2.4 s after a 32 MiB write in the lab), too late for a window of a tool that
ran 1 s. The OSDs' counters (`ceph tell osd.N perf dump`, section `osd`) are current:
`op_r_out_bytes` (client reads), `op_w_in_bytes` (client writes), `op_rw_*` (read-modify-writes), per
primary OSD. fsbench reads them on the OSDs that are acting primary of a placement group of the target's
pools (found once per case), so other pools' OSDs do not count; a client of another pool on the same
OSDs does (the lab runs one case at a time). They become operations `rados_read` and `rados_write`.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Callable
from typing import Any

from fsbench.core.shell import sh
from fsbench.core.units import format_value
from fsbench.validity import ceph_asok as asok
from fsbench.validity.checks import Verdict
from fsbench.validity.counters import OpCount, Snapshot
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

#: marks the sections of the scope command's output
SECTION = "#fsbench-ceph "
_OSD_LINE = re.compile(r"^(osd\.\d+):\s*(\{.*)$")


def scope_argv(ceph: list[str], *, fs: str | None = None, pools: tuple[str, ...] = (),
               ceph_conf: list[str] | None = None) -> list[str]:
    """One command printing what the scope needs: the file systems (for `fs`, "" = the default), the
    pools' ids and the placement groups' primaries (the `queries` section), every OSD's counters (the
    `perf` section) and, with `ceph_conf` (`ceph-conf -c CONF`), the OSDs' admin sockets on this host (the
    `asok` section: fsbench.validity.ceph_asok), each section after a SECTION line.

    The three monitor queries go to one `ceph` process, which reads them from its standard input (the
    CLI's interactive mode; each answer one line of JSON): a `ceph` start is most of a query's time
    (0.2 s idle, up to 0.5 s on a busy client), and the scope runs before every case."""
    queries = [*(["fs ls"] if fs is not None else []), "osd pool ls detail", "pg dump pgs_brief"]
    lines = [f"# which OSDs serve {'CephFS ' + (fs or '(default)') if fs is not None else ', '.join(pools)}",
             "set -e",
             f"echo '{SECTION}queries'",
             f"printf '%s\\n' {' '.join(shlex.quote(q) for q in queries)} | {shlex.join([*ceph, '--format', 'json'])}",
             # an OSD whose admin socket could not bind (a path over 107 bytes) never answers a tell: a
             # bounded try here leaves the backend out instead of hanging every snapshot of the case
             *asok.perf_lines(SECTION, perf_argv(ceph), ceph_conf, "osd")]
    return sh("\n".join(lines))


def perf_argv(ceph: list[str]) -> list[str]:
    """The command printing every OSD's perf counters, one `osd.N: {json}` line each."""
    return [*ceph, "tell", "osd.*", "perf", "dump", "--format", "json"]


def _sections(text: str) -> dict[str, str]:
    return asok.sections(text, SECTION)


def _answers(text: str) -> dict[str, object]:
    """The monitors' answers in the `queries` section by what they are: `fs` (fs ls), `pools` (osd pool ls
    detail) and `pgs` (pg dump pgs_brief), each known by its shape, so a query that failed leaves its answer
    missing instead of shifting the others (an empty list says nothing, and is as good as missing)."""
    out: dict[str, object] = {}
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and "pg_stats" in value:
            out["pgs"] = value
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            first = value[0]
            kind = "fs" if "data_pool_ids" in first else "pools" if "pool_id" in first else \
                "pgs" if "pgid" in first else ""
            if kind:
                out[kind] = value
    return out


def serving_osds(text: str, *, fs: str | None = None, pools: tuple[str, ...] = ()) -> set[int] | None:
    """The acting primaries of the placement groups of the named pools, or of `fs`'s data pools ("" = the
    first file system), from the scope command's output; None when the output does not say."""
    try:
        answers = _answers(_sections(text).get("queries", ""))
        ids: set[int] = set()
        if fs is not None:
            systems: Any = answers.get("fs", [])
            chosen = [f for f in systems if f.get("name") == fs] if fs else systems[:1]
            if not chosen:
                return None
            ids = {int(i) for f in chosen for i in f.get("data_pool_ids", [])}
        if pools:
            listed: Any = answers.get("pools", [])
            ids |= {int(p["pool_id"]) for p in listed if p.get("pool_name") in pools}
        pgs: Any = answers.get("pgs", {})
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    stats = pgs.get("pg_stats", []) if isinstance(pgs, dict) else pgs
    osds = {int(p["acting_primary"]) for p in stats if isinstance(p, dict)
            and str(p.get("pgid", "")).split(".")[0].isdigit() and int(str(p["pgid"]).split(".")[0]) in ids
            and isinstance(p.get("acting_primary"), int) and p["acting_primary"] >= 0}
    return osds or None


def parse_perf(text: str, osds: set[int] | None = None, now: float | None = None) -> Snapshot | None:
    """A Snapshot of the client reads and writes of the OSDs (those in `osds`, else all) in `ceph tell
    osd.* perf dump` output; None when it holds no OSD's counters."""
    r_ops = r_bytes = w_ops = w_bytes = 0
    seen = False
    for line in text.splitlines():
        m = _OSD_LINE.match(line.strip())
        if not m or (osds is not None and int(m.group(1).split(".")[1]) not in osds):
            continue
        try:
            c = json.loads(m.group(2)).get("osd", {})
        except ValueError:
            continue
        if not isinstance(c, dict):
            continue
        seen = True
        r_ops += int(c.get("op_r", 0)) + int(c.get("op_rw", 0))
        r_bytes += int(c.get("op_r_out_bytes", 0)) + int(c.get("op_rw_out_bytes", 0))
        w_ops += int(c.get("op_w", 0)) + int(c.get("op_rw", 0))
        w_bytes += int(c.get("op_w_in_bytes", 0)) + int(c.get("op_rw_in_bytes", 0))
    if not seen:
        return None
    return Snapshot(time.time() if now is None else now,
                    {"rados_read": OpCount(r_ops, 0, r_bytes), "rados_write": OpCount(w_ops, w_bytes, 0)})


#: the admin-socket command that prints what `ceph tell osd.N perf dump` does
PERF_DUMP = {"prefix": "perf dump"}


def scoped_fast(*, fs: str | None = None, pools: tuple[str, ...] = ()) -> Callable[[str], list[str] | None]:
    """From the scope command's output, the admin-socket reader of the OSDs serving the target, where every
    one of them has its socket on this host (else None: `ceph tell` stays)."""
    def fast(text: str) -> list[str] | None:
        osds = serving_osds(text, fs=fs, pools=pools)
        section = _sections(text).get(asok.SECTION, "")
        return asok.reader_for(PERF_DUMP, {f"osd.{i}" for i in osds}, section) if osds else None
    return fast


def scoped_parser(*, fs: str | None = None, pools: tuple[str, ...] = ()) \
        -> Callable[[str], Callable[[str], Snapshot | None] | None]:
    """From the scope command's output, the perf-dump parser limited to the target's OSDs."""
    def scope(text: str) -> Callable[[str], Snapshot | None] | None:
        osds = serving_osds(text, fs=fs, pools=pools)
        if osds is None or parse_perf(_sections(text).get("perf", ""), osds) is None:
            return None
        return lambda out: parse_perf(out, osds)
    return scope


#: mdtest's operations that change metadata: a file system on a block device must write them to it
METADATA_WRITES = ("file_creation", "file_removal", "directory_creation", "directory_removal", "directory_rename",
                   "tree_creation", "tree_removal")
#: mdtest's phases that only look at what it made: a file system on an RBD image answers them from its own memory
METADATA_LOOKS = ("file_stat", "directory_stat", "file_read", "directory_read")
#: why those phases get no verdict on RBD
LOCAL_LOOKS = ("the file system on the image (ext4, xfs) answers a stat or an open of what it has "
               "just made from the client's own memory (its inode and dentry caches), as it would for any user of "
               "the image; the pool counts only block I/O, which these phases do not cause, so no counter of the "
               "store can say more")
#: the least a journal commit writes (one block): less than this reached the pool means none did
BLOCK = 4096


class MetadataInClientCache:
    """'metadata changes not in the store': a file system on an RBD image (ext4, xfs) created and removed
    files without writing a block to the pool while the tool ran (a journal commit after it is outside its
    timing), so its rates are the client's memory (its page cache and journal, committed every few
    seconds), not RBD."""

    name = "metadata changes not in the store"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        ops = sorted({str(r.get("operation")) for r in rows if r.get("operation") in METADATA_WRITES
                      and r.get("metric") == "rate"})
        if not ops:
            return []
        ok = seen.write_tool >= BLOCK  # a commit after the tool ended is outside its timing
        detail = (f"the image's pool took {format_value(float(seen.write_tool), 'B')} of writes while {tool} ran "
                  f"and {format_value(float(seen.write_after), 'B')} in the {format_value(seen.after_s, 's')} after")
        if not ok:
            detail += (f": its {', '.join(o.replace('_', ' ') for o in ops)} stayed in the client's page cache and "
                       "journal while it ran, so these rates measure the client's memory, not RBD (run longer "
                       "than the file system's commit interval)")
        looks = sorted({str(r.get("operation")) for r in rows if r.get("operation") in METADATA_LOOKS
                        and r.get("metric") == "rate"})
        return [Verdict(self.name, tool, op, ok, detail) for op in ops] + \
            [Verdict(self.name, tool, op, None, LOCAL_LOOKS) for op in looks]


METADATA_IN_CLIENT_CACHE = MetadataInClientCache()
