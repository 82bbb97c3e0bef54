"""Dropping the page cache on a host, with the proof: the Cached figure of /proc/meminfo before and after."""

from __future__ import annotations

import json
from pathlib import Path

from fsbench.shell import sh
from fsbench.transport.base import Transport

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
