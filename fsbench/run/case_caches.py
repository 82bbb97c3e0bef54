"""A case's cache drops on every host it involves, each with its proof in raw/<case>/<host>/."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.run.targets.cache import drop_caches, drop_client_caches
from fsbench.run.targets.lifecycle import TargetSession


def drop_page_caches(transports: dict[str, Transport], hosts: list[str], raw_of: Callable[[str], Path], level: int,
                     record: str = "drop_caches.json") -> str | None:
    """Drop the page cache on every host; None when done, else why not (the first host that failed)."""
    # every host at once: a cache drop waits on its host's writeback, which the hosts do side by side
    outs = each(hosts, lambda h: drop_caches(transports[h], raw_of(h) / record, level))
    for h, out in zip(hosts, outs, strict=True):
        if not out["ok"]:
            return f"dropping the page cache on {h} failed {out['error']}"
    return None


def drop_client_cache(session: TargetSession, hosts: tuple[str, ...], raw_of: Callable[[str], Path],
                      notes: list[str]) -> str | None:
    """Empty the client's own cache folders on the hosts (a guarded remount); None when done, else why not.

    What could not be emptied but did not stop the client is added to notes (the case's warnings)."""
    for h in hosts:
        out = drop_client_caches(session, h, raw_of(h) / "drop_client_cache.json")
        if out and not out["ok"]:
            return f"emptying the cache of {session.target.name}'s client on {h} failed: {out['error']}"
        if out and out["error"]:
            notes.append(f"{h}: {out['error']}")
    return None
