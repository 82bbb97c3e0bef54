"""Transports for a scenario's hosts: local ones, and SSH ones from the inventory (one connection each)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsbench.api.transport import Transport
from fsbench.core.at_once import each

if TYPE_CHECKING:
    from fsbench.scenario.model import Scenario
from fsbench.transport.registry import TRANSPORTS


def make_transports(sc: Scenario) -> dict[str, Transport]:
    """A transport per host of the scenario, by each host's transport plug-in; SSH connects on first use."""
    out: dict[str, Transport] = {}
    for name in {h.transport for h in sc.hosts.values()}:
        out.update(TRANSPORTS.get(name).make_all([h for h in sc.hosts.values() if h.transport == name],
                                                 sc.inventory))
    return {n: out[n] for n in sc.hosts}


def close_all(transports: dict[str, Transport]) -> None:
    """Close every connection, all at once (a relay's close waits for its program's end and removes its
    folder); a host that is already gone is fine."""
    def close(t: Transport) -> None:
        try:
            t.close()
        except Exception:  # noqa: BLE001 - closing must never hide the run's own outcome
            pass

    each(list(transports.values()), close)
