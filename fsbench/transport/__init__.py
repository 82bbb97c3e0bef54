"""Transports run commands and move files on hosts: local now, SSH behind the same interface."""

from fsbench.api.transport import Transport
from fsbench.transport.local import LocalTransport

__all__ = ["LocalTransport", "Transport"]
