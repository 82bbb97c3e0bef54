"""Which watched process names a case expects to see on a host: its own target's, where they live."""

from __future__ import annotations

import re
from typing import Any

from fsbench.api.kinds import TargetKind
from fsbench.api.registry import Registry
from fsbench.scenario.model import Scenario, Service, Target

#: characters around a command word in a service's start line: `(mariadbd ...&)`, `a && b`, `x;y`
_WORD_EDGES = re.compile(r"[()&;|<>]+")


def expected_processes(sc: Scenario, target: str, kinds: Registry[TargetKind[Any]] | None = None,
                       host: str | None = None) -> set[str]:
    """The watched names a case of `target` expects (on `host`, when given): all but those others own.

    A target owns its client process (its `client_process:` or its kind's) and its services' processes
    (a service kind's declared names, `redis-server`, `mariadbd`; a command service's start-line words);
    a name owned only by other targets is left out, so a case on s3fs does not warn that rclone's client
    was never seen. A name nobody owns (a server no service declares) stays expected. Given a host, the
    target's own names are expected only where they live: its client on the target's hosts, a service's
    processes on that service's hosts (mariadbd on the meta host, never on the clients).
    """
    targets = sc.targets
    watched = set(sc.monitor.processes or ())
    owners: dict[str, set[str]] = {}
    for name, t in targets.items():
        for proc in _owned(sc, t, kinds) & watched:
            owners.setdefault(proc, set()).add(name)
    mine = _owned(sc, targets[target], kinds, host) if target in targets else set()
    return {w for w in watched if w in mine or w not in owners}


def _owned(sc: Scenario, t: Target, kinds: Registry[TargetKind[Any]] | None, host: str | None = None) -> set[str]:
    """A target's client process name and its services' processes (those living on host, when given)."""
    kind = kinds.get(t.kind) if kinds is not None and t.kind in kinds else None
    client = t.client_process or (kind.client_process if kind is not None else "")
    out = {client} if client and _lives_on(sc, t.hosts, host) else set()
    for s in t.services:
        service = sc.services.get(s)
        if service is None or not _lives_on(sc, service.hosts, host):
            continue
        out |= _service_processes(service)
    return out


def _service_processes(service: Service) -> set[str]:
    """The names a service runs: its kind's (`ServicePlan.processes`), else its start lines' command words."""
    from fsbench.services import SERVICE_KINDS

    declared = SERVICE_KINDS.get(service.kind or "command").plan(service).processes
    words = {w.rsplit("/", 1)[-1] for line in service.start for w in _WORD_EDGES.sub(" ", str(line)).split()}
    return set(declared) | words


def _lives_on(sc: Scenario, names: tuple[str, ...], host: str | None) -> bool:
    """Whether host is one of names (hosts or groups; none: the first host); any host when host is None."""
    return host is None or host in sc.resolve_hosts(tuple(names))
