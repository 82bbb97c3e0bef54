"""The transports by name: `local`, `ssh`, and those of other packages (entry point group fsbench.transports).

`ssh-relay` (fsbench.transport.relay) reaches most of its hosts through about sqrt(N) of them.
A transport plug-in satisfies fsbench.api.transport.TransportKind: a `name` and `make_all(hosts, inventory)
-> {host name: Transport}` (all hosts of that transport at once, so that e.g. SSH jump hosts share one
connection); the registry refuses one that lacks either or takes other parameters.
"""

from __future__ import annotations

from fsbench.api.registry import Registry
from fsbench.api.transport import TransportKind

TRANSPORTS: Registry[TransportKind] = Registry("transport", "fsbench.transports", (
    "fsbench.transport.local", "fsbench.transport.hosts", "fsbench.transport.relay"), TransportKind, (),
    {"ssh": "fsbench.transport.hosts", "ssh-relay": "fsbench.transport.relay"})
