"""Which watched process names a case expects to see on a host: its own target's, where they live."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsbench.scenario.model import Service

#: characters around a command word in a service's start line: `(mariadbd ...&)`, `a && b`, `x;y`
_WORD_EDGES = re.compile(r"[()&;|<>]+")


def expected_processes(sc: object, target: str, kinds: object = None, host: str | None = None) -> set[str]:
    """The watched names a case of `target` expects (on `host`, when given): all but those others own.

    A target owns its client process (its `client_process:` or its kind's) and its services' processes
    (a service kind's declared names, `redis-server`, `mariadbd`; a command service's start-line words);
    a name owned only by other targets is left out, so a case on s3fs does not warn that rclone's client
    was never seen. A name nobody owns (a server no service declares) stays expected. Given a host, the
    target's own names are expected only where they live: its client on the target's hosts, a service's
    processes on that service's hosts (mariadbd on the meta host, never on the clients).
    """
    targets: dict = dict(getattr(sc, "targets", {}) or {})
    watched = set(getattr(getattr(sc, "monitor", None), "processes", ()) or ())
    owners: dict[str, set[str]] = {}
    for name, t in targets.items():
        for proc in _owned(sc, t, kinds) & watched:
            owners.setdefault(proc, set()).add(name)
    mine = _owned(sc, targets[target], kinds, host) if target in targets else set()
    return {w for w in watched if w in mine or w not in owners}


def _owned(sc: object, t: object, kinds: object, host: str | None = None) -> set[str]:
    """A target's client process name and its services' processes (those living on host, when given)."""
    kind = kinds.get(getattr(t, "kind", "")) if kinds is not None and hasattr(kinds, "get") else None
    client = getattr(t, "client_process", None) or getattr(kind, "client_process", "")
    out = {client} if client and _lives_on(sc, getattr(t, "hosts", ()), host) else set()
    services: dict = dict(getattr(sc, "services", {}) or {})
    for s in getattr(t, "services", ()) or ():
        service = services.get(s)
        if not _lives_on(sc, getattr(service, "hosts", ()), host):
            continue
        out |= _service_processes(service)
    return out


def _service_processes(service: Service | None) -> set[str]:
    """The names a service runs: its kind's (`ServicePlan.processes`), else its start lines' command words."""
    from fsbench.services import SERVICE_KINDS

    if service is None:
        return set()
    declared = SERVICE_KINDS.get(getattr(service, "kind", "") or "command").plan(service).processes
    words = {w.rsplit("/", 1)[-1] for line in getattr(service, "start", ()) or ()
             for w in _WORD_EDGES.sub(" ", str(line)).split()}
    return set(declared) | words


def _lives_on(sc: object, names: tuple | list | None, host: str | None) -> bool:
    """Whether host is one of names (hosts or groups; none: the first host); any host when host is None."""
    resolve = getattr(sc, "resolve_hosts", None)
    if host is None or resolve is None:
        return True
    return host in resolve(tuple(names or ()))
