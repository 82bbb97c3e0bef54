"""The transports by name: `local`, `ssh`, and those of other packages (entry point group fsbench.transports).

A transport plug-in has a `name` and `make_all(hosts, inventory) -> {host name: Transport}` (all hosts of
that transport at once, so that e.g. SSH jump hosts share one connection).
"""

from __future__ import annotations

from fsbench.api.registry import Registry

TRANSPORTS: Registry = Registry("transport", "fsbench.transports", ("fsbench.transport.local",
                                                                    "fsbench.transport.hosts"))
