"""Transports run commands and move files on hosts: local now, SSH behind the same interface."""

from fsbench.transport.base import Transport
from fsbench.transport.local import LocalTransport

__all__ = ["LocalTransport", "Transport"]
