"""Targets and their hosts: one-host targets (JuiceFS on an embedded engine) narrowed to their first host;
mdtest's ranks kept off several hosts of a target whose hosts each have a tree of their own."""

from __future__ import annotations

import dataclasses
from typing import Any

from fsbench.api.kinds import TargetKind, one_host_reason, tree_per_host_reason
from fsbench.api.registry import Registry
from fsbench.config.yamllines import LineMap
from fsbench.core.errors import Issue
from fsbench.kinds import KINDS
from fsbench.scenario.model import Scenario
from fsbench.tools.mdtest.placement import ranks


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


def ranks_over_own_trees(sc: Scenario, lm: LineMap) -> list[Issue]:
    """mdtest's ranks share one tree: on a target whose hosts each have a tree of their own (an RBD image
    each), ranks spread over several hosts would see no common folder and mdtest aborts mid-run; refused
    here, with the way to keep them on one host."""
    out = []
    for name, w in sc.workloads.items():
        if w.tool != "mdtest":
            continue
        for tname in w.targets or tuple(sc.targets):
            t = sc.targets.get(tname)
            why = tree_per_host_reason(KINDS.get(t.kind), t) if t is not None and t.kind in KINDS else ""
            hosts = sc.resolve_hosts(t.hosts) if why and t is not None and sc.hosts else []
            if len(hosts) < 2:
                continue
            o = w.options
            ppn = int(o["ppn"]) if str(o.get("ppn", "")).isdigit() and int(o["ppn"]) > 0 else None
            for tasks in o["tasks"] if isinstance(o.get("tasks"), list) else [o.get("tasks", 1)]:
                if not str(tasks).isdigit():
                    continue  # not a count: mdtest's own option checks say so
                placed = ranks(int(tasks), [(h, sc.hosts[h].slots) for h in hosts], str(o.get("map_by", "node")), ppn)
                busy = [h for h, rs in placed.items() if rs]
                if len(busy) > 1:
                    out.append(lm.issue(("workloads", name, "options", "tasks"),
                                        f"mdtest's {tasks} ranks would run on {', '.join(busy)} for target "
                                        f"{tname!r}, but {why}: ranks on several hosts see no common tree and "
                                        "mdtest aborts",
                                        f"keep the ranks on one host: `ppn: {tasks}`, or `hosts: [{busy[0]}]` on "
                                        "the target"))
                    break
    return out
