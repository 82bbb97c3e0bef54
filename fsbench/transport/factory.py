"""Transports for a scenario's hosts: local ones, and SSH ones from the inventory (one connection each)."""

from __future__ import annotations

from fsbench.scenario.model import Scenario
from fsbench.transport.base import Transport
from fsbench.transport.local import LocalTransport


def make_transports(sc: Scenario) -> dict[str, Transport]:
    """A transport per host of the scenario; SSH connections open lazily, on first use."""
    out: dict[str, Transport] = {n: LocalTransport(n) for n, h in sc.hosts.items() if h.transport == "local"}
    remote = [n for n, h in sc.hosts.items() if h.transport == "ssh"]
    if remote:
        from fsbench.transport.hosts import transports_for

        out.update(transports_for(sc.inventory, remote))
    return {n: out[n] for n in sc.hosts}


def close_all(transports: dict[str, Transport]) -> None:
    """Close every connection; a host that is already gone is fine."""
    for t in transports.values():
        try:
            t.close()
        except Exception:  # noqa: BLE001 - closing must never hide the run's own outcome
            pass
