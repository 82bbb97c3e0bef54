"""Targets and their hosts: one-host targets (JuiceFS on an embedded engine) narrowed to their first host.

(mdtest's ranks kept off several hosts of a target whose hosts each have a tree of their own are mdtest's
own option check: CheckContext.own_trees.)"""

from __future__ import annotations

import dataclasses
from typing import Any

from fsbench.api.kinds import TargetKind, one_host_reason
from fsbench.api.registry import Registry
from fsbench.scenario.model import Scenario


def narrow_one_host_targets(sc: Scenario, kinds: Registry[TargetKind[Any]]) -> list[str]:
    """Give each one-host target (its kind's `one_host(target)` says why) its first host only; a warning each.

    An embedded metadata engine (sqlite3://) is a file on the host that formatted it: a second host's
    client finds no volume there ("database is not formatted"), or, where hosts share the folder, several
    clients write one SQLite file. The target then runs on the first of its hosts, and its cases too.
    """
    warnings = []
    for name, target in list(sc.targets.items()):
        why = one_host_reason(kinds.get(target.kind), target) if target.kind in kinds else ""
        hosts = sc.resolve_hosts(target.hosts) if sc.hosts else []
        if not why or len(hosts) < 2:
            continue
        sc.targets[name] = dataclasses.replace(target, hosts=(hosts[0],))
        warnings.append(f"targets.{name}: runs on {hosts[0]} only, not on {', '.join(hosts[1:])}: {why}; "
                        f"its cases measure one client (hosts: [{hosts[0]}] says so in the scenario)")
    return warnings
