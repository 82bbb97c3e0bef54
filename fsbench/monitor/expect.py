"""Which watched process names a case expects to see: its own target's, never another target's."""

from __future__ import annotations

import re

#: characters around a command word in a service's start line: `(mariadbd ...&)`, `a && b`, `x;y`
_WORD_EDGES = re.compile(r"[()&;|<>]+")


def expected_processes(sc: object, target: str, kinds: object = None) -> set[str]:
    """The watched names a case of `target` expects: all of them but those another target owns.

    A target owns its client process (its `client_process:` or its kind's) and the command words of its
    services' start lines (`redis-server`, `mariadbd`); a name owned only by other targets is left out,
    so a case on s3fs does not warn that rclone's client was never seen. A name nobody owns (a server
    every target shares, fsbench-s3) stays expected.
    """
    targets: dict = dict(getattr(sc, "targets", {}) or {})
    watched = set(getattr(getattr(sc, "monitor", None), "processes", ()) or ())
    owners: dict[str, set[str]] = {}
    for name, t in targets.items():
        for proc in _owned(sc, t, kinds) & watched:
            owners.setdefault(proc, set()).add(name)
    mine = _owned(sc, targets[target], kinds) if target in targets else set()
    return {w for w in watched if w in mine or w not in owners}


def _owned(sc: object, t: object, kinds: object) -> set[str]:
    """A target's client process name and its services' command words."""
    kind = kinds.get(getattr(t, "kind", "")) if kinds is not None and hasattr(kinds, "get") else None
    client = getattr(t, "client_process", None) or getattr(kind, "client_process", "")
    out = {client} if client else set()
    services: dict = dict(getattr(sc, "services", {}) or {})
    for s in getattr(t, "services", ()) or ():
        for line in getattr(services.get(s), "start", ()) or ():
            out |= {w.rsplit("/", 1)[-1] for w in _WORD_EDGES.sub(" ", str(line)).split()}
    return out
