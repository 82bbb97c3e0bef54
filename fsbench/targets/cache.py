"""Dropping caches before a measured read, with the proof: the page cache of a host (the Cached figure of
/proc/meminfo before and after), and a client's own cache folders (their bytes before and after)."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING

from fsbench.shell import sh
from fsbench.transport.base import Transport

if TYPE_CHECKING:
    from fsbench.targets.lifecycle import TargetSession

#: the only shell text this needs; `echo 3 > file` is a redirect, so it cannot be a plain argv
DROP = "sync && echo 3 > /proc/sys/vm/drop_caches"


def cached_bytes(transport: Transport) -> int | None:
    """The page cache size (Cached in /proc/meminfo) on the host, or None when unreadable."""
    r = transport.run(["cat", "/proc/meminfo"], timeout=15)
    for line in r.extra.get("stdout", "").splitlines() if r.ok else []:
        if line.startswith("Cached:"):
            return int(line.split()[1]) * 1024
    return None


def drop_caches(transport: Transport, record: Path | None = None) -> dict:
    """sync; drop page cache, dentries and inodes; returns (and stores) before/after figures."""
    before = cached_bytes(transport)
    r = transport.run(sh(DROP), timeout=120)
    after = cached_bytes(transport)
    out = {"host": transport.host, "command": DROP, "ok": r.ok, "cached_before_bytes": before,
           "cached_after_bytes": after, "error": "" if r.ok else r.describe()}
    if record is not None:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(out, indent=2) + "\n")
    return out


def _inside(folder: str, scratch: str) -> bool:
    """Whether folder lies strictly inside the run's scratch space (after `..` is resolved)."""
    base = posixpath.normpath(scratch)
    return base.startswith("/") and posixpath.normpath(folder).startswith(base + "/")


def cache_bytes(transport: Transport, folder: str) -> int | None:
    """The bytes of the files in a cache folder (du), or None when it cannot be read."""
    r = transport.run(["du", "-s", "-b", "--", folder], timeout=60)
    words = r.extra.get("stdout", "").split() if r.ok else []
    return int(words[0]) if words and words[0].isdigit() else None


def drop_client_caches(session: "TargetSession", host: str, record: Path | None = None) -> dict | None:
    """Empty the client's own cache folders on host, with the client unmounted (a guarded remount), and
    return (and store) the proof: each folder's bytes before and after; None when the kind keeps no cache.

    Only folders inside the run's scratch space are emptied (fsbench made them); one elsewhere (a user's
    `use_cache=/var/cache/s3fs`) is left as it is and named in the proof's `error`.
    """
    folders = session.plan(host).caches
    if not folders:
        return None
    tr = session.transports[host]
    outside = [f for f in folders if not _inside(f, session.run_scratch)]
    ours = [f for f in folders if f not in outside]
    before = {f: cache_bytes(tr, f) for f in ours}
    # find -delete never follows a link, and leaves the folder itself for the client
    failed = session.remount(host, [["find", f, "-mindepth", "1", "-delete"] for f in ours]) if ours else None
    after = {f: cache_bytes(tr, f) for f in ours}
    errors = [e for e in (failed, *(f"{f} is outside the run's scratch space {session.run_scratch}: fsbench "
                                    "empties only folders it made, so this cache was left as it is"
                                    for f in outside)) if e]
    out = {"host": host, "target": session.target.name, "how": "unmount, empty the cache folders, mount again",
           "folders": [{"folder": f, "bytes_before": before[f], "bytes_after": after[f]} for f in ours],
           "left": outside, "ok": not failed, "error": "; ".join(errors)}
    if record is not None:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(out, indent=2) + "\n")
    return out
