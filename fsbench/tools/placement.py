"""Which host runs which part of a case (ranks, jobs, processes), for `plan --show` and the report."""

from __future__ import annotations

import re

from fsbench.api.tools import Invocation
from fsbench.tools.mdtest import placement as mdtest_placement


def placement(tool: str, options: dict, hosts: list[tuple[str, int]], inv: Invocation | None = None,
              own_trees: str = "") -> tuple[dict[str, str], list[str]]:
    """({host: what runs there}, warnings) for a case of tool on hosts [(name, MPI slots)].

    A warning says when a workload whose target names several hosts runs on fewer of them. own_trees says
    why each host of the target has a file tree of its own (an RBD image each), '' when they share one.
    """
    names = [h for h, _ in hosts]
    listed = host_ranges if len(names) >= COMPACT_FROM else ", ".join  # client21-client32, not 12 names
    if len(names) < 2:
        return {h: f"all of {tool}" for h in names}, []
    if tool == "mdtest":
        tasks = int(options.get("tasks", 1))
        placed = mdtest_placement.ranks(tasks, hosts, str(options.get("map_by", "node")),
                                        int(options["ppn"]) if options.get("ppn") else None)
        where = {h: mdtest_placement.describe({h: rs}).split(": ", 1)[1] for h, rs in placed.items()}
        idle = [h for h, rs in placed.items() if not rs]
        busy = [h for h in names if placed[h]]
        if own_trees:  # ranks share one tree: spreading them is what fails, staying on one host is right
            return where, ([f"mdtest's ranks run on {listed(busy)}, but {own_trees}: ranks on several hosts "
                            "see no common tree (mdtest aborts); keep them on one host (ppn: TASKS, or the "
                            f"target's hosts: [{busy[0]}])"] if len(busy) > 1 else
                           [f"mdtest runs on {busy[0]} only, not on {listed(idle)}: {own_trees}, and its ranks "
                            "must share one tree"] if idle else [])
        warn = [f"mdtest's {tasks} rank{'s' if tasks != 1 else ''} run on {listed(busy)} "
                f"only, not on {listed(idle)}: give tasks >= {len(names)}"
                + (" or map_by: node" if options.get("map_by") == "slot" else "")] if idle else []
        return where, warn
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


#: past this many hosts, placement is shown per group of hosts that run alike, not one line or column per host
COMPACT_FROM = 9

_RANKS = re.compile(r"^ranks? ([0-9, ]+)$")


def _shape(what: str) -> str:
    """What a host runs, without what tells hosts apart (mdtest's rank numbers): '2 ranks', not 'ranks 4, 5'."""
    m = _RANKS.match(what)
    if m:
        n = len([r for r in m.group(1).split(",") if r.strip()])
        return f"{n} rank{'s' if n != 1 else ''}"
    return what


def host_ranges(hosts: list[str]) -> str:
    """Host names with runs of numbered names joined: client1-client16, meta1 (order kept)."""
    out: list[str] = []
    run: list[tuple[str, int, str]] = []  # (prefix, number, name) of the run being built

    def close() -> None:
        if len(run) > 2:
            out.append(f"{run[0][2]}-{run[-1][2]}")
        else:
            out.extend(r[2] for r in run)
        run.clear()

    for h in hosts:
        m = re.match(r"^(.*?)([0-9]+)$", h)
        if m and run and run[-1][0] == m.group(1) and int(m.group(2)) == run[-1][1] + 1:
            run.append((m.group(1), int(m.group(2)), h))
            continue
        close()
        if m:
            run.append((m.group(1), int(m.group(2)), h))
        else:
            out.append(h)
    close()
    return ", ".join(out)


def compact_placement(where: dict[str, str]) -> list[tuple[str, str]]:
    """[(hosts, what each runs)]: the hosts that run alike in one group (mdtest's ranks counted per host), in
    the order the groups first appear; what 32 hosts run reads in a line or two."""
    groups: dict[str, list[str]] = {}
    for host, what in where.items():
        groups.setdefault(_shape(what), []).append(host)
    return [(f"{host_ranges(hs)} ({len(hs)} host{'s' if len(hs) != 1 else ''})",
             f"{what} each" if len(hs) > 1 and what not in ("nothing", "none") else what)
            for what, hs in groups.items()]
