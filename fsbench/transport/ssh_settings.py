"""What a HostSpec means once ~/.ssh/config is applied: address, port, user, keys, known_hosts, jump."""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, replace
from pathlib import Path

from fsbench.core.inventory import HostSpec

DEFAULT_SSH_CONFIG = Path("~/.ssh/config")
DEFAULT_KNOWN_HOSTS = Path("~/.ssh/known_hosts")
GLOBAL_KNOWN_HOSTS = "/etc/ssh/ssh_known_hosts"  # read along with the user's file, as OpenSSH does
NO_JUMP = "none"  # as in OpenSSH: `ProxyJump none` turns a jump from a broader Host block off


@dataclass(frozen=True)
class Resolved:
    """Connection settings after the spec (which wins) and the ssh config (which fills gaps) are merged."""

    address: str
    port: int
    user: str
    key_files: tuple[str, ...]
    known_hosts: tuple[str, ...]
    trust_file: str
    proxy_jump: str | None

    @property
    def where(self) -> str:
        """address:port for messages."""
        return f"{self.address}:{self.port}"

    @property
    def known_hosts_name(self) -> str:
        """The host's name as known_hosts writes it: `addr` on port 22, `[addr]:port` otherwise."""
        return self.address if self.port == 22 else f"[{self.address}]:{self.port}"


def resolve(spec: HostSpec, cfg: dict, user_known_hosts: Path | None) -> Resolved:
    """Merge spec and an ssh config lookup (paramiko.SSHConfig.lookup output) the way OpenSSH does."""
    keys: list[str] = []
    if spec.key_file:
        keys.append(_expand(spec.key_file))
    for key in cfg.get("identityfile", []):
        path = _expand(key)
        # OpenSSH skips configured identity files that do not exist; so do we, but never the spec's own
        if path not in keys and Path(path).exists():
            keys.append(path)
    # user_known_hosts=None means: only the files the spec and the ssh config name (tests want that)
    known = [_expand(str(user_known_hosts)), GLOBAL_KNOWN_HOSTS] if user_known_hosts else []
    known += [_expand(p) for p in cfg.get("userknownhostsfile", "").split()]
    if spec.known_hosts:
        known.append(_expand(spec.known_hosts))
    trust = _expand(spec.known_hosts) if spec.known_hosts else known[0] if known else _expand(str(DEFAULT_KNOWN_HOSTS))
    jump = spec.jump or cfg.get("proxyjump")
    return Resolved(
        address=cfg.get("hostname") or spec.target,
        port=spec.port or int(cfg.get("port", 22)),
        user=spec.user or cfg.get("user") or getpass.getuser(),
        key_files=tuple(keys),
        known_hosts=tuple(dict.fromkeys(known)),
        trust_file=trust,
        proxy_jump=None if not jump or jump.lower() == NO_JUMP else jump,
    )


def jump_spec(proxy_jump: str, target: HostSpec) -> HostSpec:
    """The last hop of a ProxyJump list (`[user@]host[:port][,...]`) as a spec; earlier hops become its jump."""
    hops = [h.strip() for h in proxy_jump.split(",") if h.strip()]
    last = hops[-1]
    user, _, hostport = last.rpartition("@")
    host, port = hostport, None
    if hostport.startswith("["):  # [v6addr]:port
        host, _, rest = hostport[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else None
    elif hostport.count(":") == 1:
        host, _, p = hostport.partition(":")
        port = int(p)
    # a hop is reached with the target's key and known_hosts unless ~/.ssh/config says otherwise for it
    return replace(HostSpec(name=last), address=host, port=port, user=user or None,
                   key_file=target.key_file, known_hosts=target.known_hosts,
                   jump=",".join(hops[:-1]) or NO_JUMP)


def _expand(path: str) -> str:
    return os.path.expanduser(os.path.expandvars(path))
