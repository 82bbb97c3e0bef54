"""Host key errors that say which key the host showed and exactly how to trust it."""

from __future__ import annotations

import base64
import hashlib
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from fsbench.transport.errors import HostKeyError
from fsbench.transport.ssh_settings import Resolved


class HostKey(Protocol):
    """What of a host's key (paramiko's PKey) these messages read: its bytes and its type's name."""

    def asbytes(self) -> bytes: ...

    def get_name(self) -> str: ...


_SCAN_TYPES = {"ssh-ed25519": "ed25519", "ssh-rsa": "rsa", "rsa-sha2-256": "rsa", "rsa-sha2-512": "rsa",
               "ssh-dss": "dsa"}


def load_known_hosts(load: Callable[[str], object], host: str, r: Resolved) -> None:
    """Each known_hosts file of the host's settings that exists, into `load` (paramiko's loader of a client or
    of a HostKeys); a file paramiko cannot read is a HostKeyError naming it."""
    import paramiko

    for path in r.known_hosts:
        if Path(path).is_file():
            try:
                load(path)
            except (OSError, paramiko.SSHException) as exc:
                raise HostKeyError(host, r.where, f"cannot read known_hosts file {path}: {exc}",
                                   "fix or remove the bad line") from None


def fingerprint(key: HostKey) -> str:
    """`ssh-ed25519 SHA256:...`, as `ssh-keygen -lf` prints it."""
    digest = base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode().rstrip("=")
    return f"{key.get_name()} SHA256:{digest}"


def keyscan_command(r: Resolved, key_name: str) -> str:
    """The command that appends the host's current key of this type to the known_hosts file."""
    kind = _SCAN_TYPES.get(key_name, "ecdsa" if key_name.startswith("ecdsa") else key_name)
    return f"ssh-keyscan -p {r.port} -t {kind} {shlex.quote(r.address)} >> {shlex.quote(r.trust_file)}"


def unknown_key(host: str, r: Resolved, key: HostKey) -> HostKeyError:
    """The host is in no known_hosts file."""
    fp = fingerprint(key)
    checked = ", ".join(r.known_hosts) or "no known_hosts file"
    return HostKeyError(
        host, r.where,
        f"host key not known (looked for {r.known_hosts_name} in {checked}); the host shows {fp}",
        f"compare {fp} with `ssh-keygen -lf /etc/ssh/ssh_host_{_file_kind(key)}_key.pub` run on the host "
        f"itself, then trust it with: {keyscan_command(r, key.get_name())}",
        fingerprint=fp)


def changed_key(host: str, r: Resolved, key: HostKey, expected: HostKey) -> HostKeyError:
    """The host shows a different key than known_hosts holds for it: refuse, it may be an attack."""
    fp = fingerprint(key)
    pattern = shlex.quote(r.known_hosts_name)
    return HostKeyError(
        host, r.where,
        f"HOST KEY CHANGED: known_hosts expects {fingerprint(expected)} but the host shows {fp}; "
        "someone may be intercepting the connection, or the host was reinstalled",
        f"only if you know why it changed: ssh-keygen -R {pattern} -f {shlex.quote(r.trust_file)} "
        f"&& {keyscan_command(r, key.get_name())}",
        fingerprint=fp)


def _file_kind(key: HostKey) -> str:
    name = key.get_name()
    return _SCAN_TYPES.get(name, "ecdsa" if name.startswith("ecdsa") else name)
