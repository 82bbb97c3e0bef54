"""Which host runs which part of a case (ranks, jobs, processes), for `plan --show` and the report."""

from __future__ import annotations

import re

from fsbench.api.tools import Invocation, PlacesOnHosts
from fsbench.core.host_names import COMPACT_FROM, host_ranges
from fsbench.tools import get_tool

__all__ = ["COMPACT_FROM", "compact_placement", "host_ranges", "placement"]


def placement(tool: str, options: dict, hosts: list[tuple[str, int]], inv: Invocation | None = None,
              own_trees: str = "") -> tuple[dict[str, str], list[str]]:
    """({host: what runs there}, warnings) for a case of tool on hosts [(name, MPI slots)].

    A warning says when a workload whose target names several hosts runs on fewer of them. own_trees says
    why each host of the target has a file tree of its own (an RBD image each), '' when they share one.
    A tool that spreads a case itself (mdtest's MPI ranks) says where through its PlacesOnHosts hook.
    """
    names = [h for h, _ in hosts]
    listed = host_ranges if len(names) >= COMPACT_FROM else ", ".join  # client21-client32, not 12 names
    if len(names) < 2:
        return {h: f"all of {tool}" for h in names}, []
    plugin = get_tool(tool)
    if isinstance(plugin, PlacesOnHosts):
        return plugin.placement(options, hosts, own_trees)
    if inv is not None and inv.per_host:
        return {h: f"its own {tool} process" if h in inv.per_host else "nothing" for h in names}, []
    if inv is not None and inv.servers:
        jobs = options.get("numjobs", 1)
        return {h: f"a fio server running the job file ({jobs} job{'s' if str(jobs) != '1' else ''})"
                if h in inv.servers else "nothing" for h in names}, []
    if inv is not None and inv.controller:
        # the tool reaches every host itself from here (vdbench's hd= lines, one per host): not a one-host tool
        return {h: f"its part of {tool}, started from this machine by {tool} itself" for h in names}, []
    where = {h: f"all of {tool}" if h == names[0] else "nothing" for h in names}
    return where, [f"{tool} runs on {names[0]} only, not on {listed(names[1:])}: it is a one-host tool "
                   f"(its results are {names[0]}'s alone)"]


_RANKS = re.compile(r"^ranks? ([0-9, ]+)$")


def _shape(what: str) -> str:
    """What a host runs, without what tells hosts apart (mdtest's rank numbers): '2 ranks', not 'ranks 4, 5'."""
    m = _RANKS.match(what)
    if m:
        n = len([r for r in m.group(1).split(",") if r.strip()])
        return f"{n} rank{'s' if n != 1 else ''}"
    return what


def compact_placement(where: dict[str, str]) -> list[tuple[str, str]]:
    """[(hosts, what each runs)]: the hosts that run alike in one group (mdtest's ranks counted per host), in
    the order the groups first appear; what 32 hosts run reads in a line or two."""
    groups: dict[str, list[str]] = {}
    for host, what in where.items():
        groups.setdefault(_shape(what), []).append(host)
    return [(f"{host_ranges(hs)} ({len(hs)} host{'s' if len(hs) != 1 else ''})",
             f"{what} each" if len(hs) > 1 and what not in ("nothing", "none") else what)
            for what, hs in groups.items()]
