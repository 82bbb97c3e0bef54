"""Host inventories: how to reach each host over SSH, read from a YAML file with line numbers in errors.

The file format::

    defaults:                      # optional; applied to every host that does not set the key itself
      user: bench
      key_file: ~/.ssh/id_ed25519  # relative paths are relative to this file's folder
      known_hosts: known_hosts     # checked in addition to ~/.ssh/known_hosts
    hosts:                         # required: host name -> settings
      gw:
        address: bastion.example.org
      client1:
        address: 10.0.0.11         # default: the host name (which ~/.ssh/config may map with HostName)
        port: 2222                 # default: ~/.ssh/config's Port, else 22
        groups: [clients]
        slots: 8                   # MPI slots
        sudo: true                 # commands run under `sudo -n`
        jump: gw                   # reached through another host of this file (ProxyJump)
        password_env: CLIENT1_PW   # the NAME of an environment variable holding a password
        remote_base: /scratch/fsb  # where per-case work directories go (default /tmp/fsbench-<user>)

A password is never written in the file: `password:` is an error that says to use `password_env`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsbench.config import schema as s
from fsbench.config.yamllines import LineMap, load_yaml
from fsbench.errors import Issue, ScenarioError

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class HostSpec:
    """How to reach one host: address, login, keys, jump host, MPI slots; never a secret itself."""

    name: str
    address: str = ""
    port: int | None = None
    user: str | None = None
    key_file: str | None = None
    known_hosts: str | None = None
    jump: str | None = None
    groups: tuple[str, ...] = ()
    slots: int = 1
    sudo: bool = False
    password_env: str | None = None
    remote_base: str | None = None

    @property
    def target(self) -> str:
        """The address to connect to (or look up in ~/.ssh/config): the address, else the name."""
        return self.address or self.name


def _port(value: object, path: tuple, lm: LineMap, issues: list) -> object:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        issues.append(lm.issue(path, f"expected a TCP port number (1-65535), got {value!r}"))
        return None
    return value


def _env_name(value: object, path: tuple, lm: LineMap, issues: list) -> object:
    if not isinstance(value, str) or not _ENV_NAME.match(value):
        issues.append(lm.issue(path, f"expected the name of an environment variable, got {value!r}",
                               "for example CLIENT1_PW; export it before running fsbench"))
        return None
    return value


def _no_password(value: object, path: tuple, lm: LineMap, issues: list) -> object:
    issues.append(lm.issue(path, "passwords are not read from files",
                           "put it in an environment variable and name that variable with password_env"))
    return None


# every default is None so that a host's own value can be told apart from a missing one
SETTINGS = s.Struct({
    "address": s.Key(s.address), "port": s.Key(_port), "user": s.Key(s.address),
    "key_file": s.Key(s.string), "known_hosts": s.Key(s.string), "jump": s.Key(s.string),
    "groups": s.Key(s.list_of(s.string)), "slots": s.Key(s.integer(1)), "sudo": s.Key(s.boolean),
    "password_env": s.Key(_env_name), "remote_base": s.Key(s.string), "password": s.Key(_no_password),
}, what="host settings")
INVENTORY = s.Struct({
    "defaults": s.Key(SETTINGS, default=dict),
    "hosts": s.Key(s.mapping_of(SETTINGS, what="host"), required=True, doc="a mapping of host names to settings"),
}, what="inventory")


def load_inventory(path: str | Path) -> dict[str, HostSpec]:
    """Read and check an inventory file; raises ScenarioError naming file:line and key path of every problem."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ScenarioError([Issue(str(path), None, "", f"cannot read the inventory: {exc.strerror}",
                                   "check the path")]) from None
    data, lm = load_yaml(text, str(path))
    issues: list[Issue] = []
    checked = INVENTORY(data, (), lm, issues)
    if not isinstance(checked, dict):
        raise ScenarioError(issues)
    defaults = checked["defaults"] or {}
    # bad values are None by now; build what can be built so every problem is reported in one go
    hosts = {name: _spec(name, settings or {}, defaults, path.parent)
             for name, settings in (checked["hosts"] or {}).items()}
    _check_jumps(hosts, lm, issues)
    if issues:
        raise ScenarioError(issues)
    return hosts


def _spec(name: str, own: dict, defaults: dict, base: Path) -> HostSpec:
    merged: dict[str, Any] = {k: own.get(k) if own.get(k) is not None else defaults.get(k) for k in SETTINGS.keys}
    merged.pop("password")
    for key in ("key_file", "known_hosts"):
        value = merged[key]
        # `~` is left for connect time (the controller's home); plain relative paths follow the file
        if value and not value.startswith("~") and not Path(value).is_absolute():
            merged[key] = str(base / value)
    merged["groups"] = tuple(merged["groups"] or ())
    merged["slots"] = merged["slots"] or 1
    merged["sudo"] = bool(merged["sudo"])
    merged["address"] = merged["address"] or ""
    return HostSpec(name=name, **merged)


def _check_jumps(hosts: dict[str, HostSpec], lm: LineMap, issues: list[Issue]) -> None:
    for name, spec in hosts.items():
        if spec.jump is None:
            continue
        where = ("hosts", name, "jump") if ("hosts", name, "jump") in lm.lines else ("defaults", "jump")
        if spec.jump not in hosts:
            issues.append(lm.issue(where, f"jump host {spec.jump!r} of {name} is not in this inventory",
                                   f"hosts here: {', '.join(hosts)}"))
            continue
        seen: list[str] = [name]
        hop: str | None = spec.jump
        while hop is not None and hop in hosts:
            if hop in seen:
                issues.append(lm.issue(where, f"jump hosts form a loop: {' -> '.join(seen + [hop])}",
                                       "the last jump host must be reachable directly"))
                break
            seen.append(hop)
            hop = hosts[hop].jump
