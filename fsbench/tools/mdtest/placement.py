"""Where mdtest's MPI ranks run across hosts: Open MPI's mapping, computed the same way for the plan and the report.

`map_by: node` (the default across hosts) deals ranks round-robin over the hosts, as the seeds spread
their clients' ranks; `map_by: slot` fills each host's slots first (Open MPI's own default), so 2 ranks
on hosts of 2 slots both land on the first host; `ppn: N` puts N ranks on each host in turn.
"""

from __future__ import annotations

from fsbench.core.host_names import listed

MAP_BY = ("node", "slot")


def mpirun_flags(map_by: str, ppn: int | None) -> list[str]:
    """mpirun's mapping flags for a multi-host run (oversubscription is allowed, as on one host)."""
    if ppn:
        return ["--map-by", f"ppr:{ppn}:node"]
    return ["--map-by", map_by]


def ranks(tasks: int, hosts: list[tuple[str, int]], map_by: str = "node", ppn: int | None = None,
          ) -> dict[str, list[int]]:
    """{host: its ranks} for tasks ranks over (host, slots) in hostfile order, as Open MPI 4 maps them.

    node: rank i on host i mod N. slot: each host's slots in turn, then round-robin again once every slot
    is taken (oversubscribed). ppr:N:node: N ranks on the first host, N on the next, and so on.
    """
    out: dict[str, list[int]] = {h: [] for h, _ in hosts}
    names = [h for h, _ in hosts]
    if not names:
        return out
    if ppn:
        for r in range(tasks):
            out[names[(r // ppn) % len(names)]].append(r)
    elif map_by == "slot":
        order = [h for h, slots in hosts for _ in range(max(1, slots))]
        for r in range(tasks):
            out[order[r] if r < len(order) else names[(r - len(order)) % len(names)]].append(r)
    else:
        for r in range(tasks):
            out[names[r % len(names)]].append(r)
    return out


def describe(placed: dict[str, list[int]]) -> str:
    """'client1: ranks 0, 3 · client2: rank 1 · client3: none'."""
    def one(rs: list[int]) -> str:
        return "none" if not rs else f"rank {rs[0]}" if len(rs) == 1 else f"ranks {', '.join(map(str, rs))}"
    return " · ".join(f"{h}: {one(rs)}" for h, rs in placed.items())


def where_ranks_run(options: dict, hosts: list[tuple[str, int]], own_trees: str = "",
                    ) -> tuple[dict[str, str], list[str]]:
    """({host: its ranks}, warnings) of a case over hosts [(name, slots)], for `plan --show` and the report.

    A warning says when some hosts get no rank; own_trees (why each host has a tree of its own, '' when
    they share one) turns it round: ranks must then stay on one host.
    """
    names = [h for h, _ in hosts]
    tasks = int(options.get("tasks", 1))
    ppn = int(options["ppn"]) if options.get("ppn") else None
    placed = ranks(tasks, hosts, str(options.get("map_by", "node")), ppn)
    where = {h: describe({h: rs}).split(": ", 1)[1] for h, rs in placed.items()}
    idle = [h for h, rs in placed.items() if not rs]
    busy = [h for h in names if placed[h]]
    def said(hs: list[str]) -> str:
        return listed(hs, len(names))  # client21-client32, not 12 names

    if own_trees:  # ranks share one tree: spreading them is what fails, staying on one host is right
        return where, ([f"mdtest's ranks run on {said(busy)}, but {own_trees}: ranks on several hosts "
                        "see no common tree (mdtest aborts); keep them on one host (ppn: TASKS, or the "
                        f"target's hosts: [{busy[0]}])"] if len(busy) > 1 else
                       [f"mdtest runs on {busy[0]} only, not on {said(idle)}: {own_trees}, and its ranks "
                        "must share one tree"] if idle else [])
    warn = [f"mdtest's {tasks} rank{'s' if tasks != 1 else ''} run on {said(busy)} "
            f"only, not on {said(idle)}: give tasks >= {len(names)}"
            + (" or map_by: node" if options.get("map_by") == "slot" else "")] if idle else []
    return where, warn


def ranks_over_own_trees(options: dict, target: str, hosts: tuple[tuple[str, int], ...], own_trees: str,
                         ) -> tuple[str, str] | None:
    """(message, hint) when a case's ranks would spread over hosts that each have a tree of their own (an RBD
    image each): they would see no common folder and mdtest aborts mid-run. None when they stay on one host,
    the hosts share a tree, or tasks is no count (the option check says so)."""
    tasks, ppn = options.get("tasks", 1), options.get("ppn")
    if not own_trees or len(hosts) < 2 or isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1:
        return None
    per_host = ppn if isinstance(ppn, int) and not isinstance(ppn, bool) and ppn > 0 else None
    busy = [h for h, rs in ranks(tasks, list(hosts), str(options.get("map_by", "node")), per_host).items() if rs]
    if len(busy) < 2:
        return None
    return (f"mdtest's {tasks} ranks would run on {', '.join(busy)} for target {target!r}, but {own_trees}: ranks "
            "on several hosts see no common tree and mdtest aborts",
            f"keep the ranks on one host: `ppn: {tasks}`, or `hosts: [{busy[0]}]` on the target")
