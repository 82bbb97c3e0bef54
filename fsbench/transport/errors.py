"""Errors of remote transports: each names the host, where it was reached and what to do next."""

from __future__ import annotations

from fsbench.core.errors import FsbenchError


class TransportError(FsbenchError):
    """A host could not be used: the connection, not a command, failed."""

    exit_code = 4

    def __init__(self, host: str, where: str, message: str, hint: str = ""):
        self.host, self.where, self.reason, self.hint = host, where, message, hint
        text = f"{host} ({where}): {message}"
        super().__init__(f"{text}\n    -> {hint}" if hint else text)


class ConnectError(TransportError):
    """The host did not answer, refused the connection, or the connection dropped."""


class AuthError(TransportError):
    """The host refused every key (and the password, when one was configured)."""


class HostKeyError(TransportError):
    """The host's key is unknown or differs from known_hosts; nothing was sent to the host."""

    def __init__(self, host: str, where: str, message: str, hint: str = "", *, fingerprint: str = ""):
        self.fingerprint = fingerprint
        super().__init__(host, where, message, hint)


class TransferError(TransportError):
    """A file could not be written to or read from the host."""
