"""Where mdtest's MPI ranks run across hosts: Open MPI's mapping, computed the same way for the plan and the report.

`map_by: node` (the default across hosts) deals ranks round-robin over the hosts, as the seeds spread
their clients' ranks; `map_by: slot` fills each host's slots first (Open MPI's own default), so 2 ranks
on hosts of 2 slots both land on the first host; `ppn: N` puts N ranks on each host in turn.
"""

from __future__ import annotations

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
