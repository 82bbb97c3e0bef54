"""How each host reached a target once it is set up (hosts.csv's mount and client columns), and whether the
file system there is the one the scenario expects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from fsbench.api.kinds import KindPlan
from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.host import facts
from fsbench.scenario.model import Target


class SetUpTarget(Protocol):
    """What the notes read of a target session (fsbench.run.targets.lifecycle.TargetSession, which imports this
    module: naming it here would close an import circle)."""

    @property
    def target(self) -> Target: ...

    @property
    def transports(self) -> Mapping[str, Transport]: ...

    def via(self, host: str) -> str: ...

    def plan(self, host: str) -> KindPlan: ...


def note_mounts(session: SetUpTarget, hosts: list[dict]) -> str | None:
    """Add `mount_<target>` and the client's columns to the rows of the target's hosts; None when each host's
    path is on the file system type the target expects (`fstype`), else why the target is not ready."""
    target, reason = session.target, None
    mine = [h for h in hosts if h["host"] in session.transports]

    def read(h: dict) -> tuple[dict, dict]:
        tr = session.transports[h["host"]]
        return facts.mount_of(tr, target.path), facts.client_of(tr, target.name, session.plan(h["host"]))

    for h, (m, client) in zip(mine, each(mine, read), strict=True):  # every host read at once
        via = session.via(h["host"])  # which client (ceph-fuse, rbd-fuse+loop...) the kind used
        words = [v for v in m.values() if v] + ([f"via {via}"] if via else [])
        h[f"mount_{target.name}"] = " ".join(words)
        h.update(client)
        if target.fstype and m["fstype"] != target.fstype:
            reason = (f"{target.path} on {h['host']} is on {m['fstype'] or '?'} ({m['source']}), "
                      f"the scenario expects {target.fstype}")
    return reason
