"""SSH transports for the hosts of an inventory, jump hosts wired to one shared connection each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fsbench.api.transport import HostEntry, Transport, TransportKind
from fsbench.core.inventory import HostSpec
from fsbench.transport.ssh import SSHTransport


def transports_for(inventory: dict[str, HostSpec], names: list[str] | None = None,
                   **options) -> dict[str, SSHTransport]:
    """Transports for the named hosts (all by default); a host's `jump` reuses that host's transport."""
    made: dict[str, SSHTransport] = {}
    wanted = list(names or inventory)

    def make(name: str) -> SSHTransport:
        if name not in made:
            spec = inventory[name]
            jump = make(spec.jump) if spec.jump in inventory else None
            # a jump host nobody asked for is closed with the hosts that use it (closing twice is harmless)
            made[name] = SSHTransport(spec, jump=jump, own_jump=jump is not None and spec.jump not in wanted,
                                      **options)
        return made[name]

    return {name: make(name) for name in wanted}


class SSHTransports:
    """The `ssh` transport plug-in: inventory hosts, jump hosts wired to one shared connection each."""

    name = "ssh"

    def make_all(self, hosts: Sequence[HostEntry], inventory: dict[str, Any]) -> dict[str, Transport]:
        """Transports for the hosts (their specs come from the inventory)."""
        return dict(transports_for(inventory, [h.name for h in hosts]))


PLUGIN: TransportKind = SSHTransports()
