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
        transport: ssh-relay       # reached through a relay host (about sqrt(N) of them), default ssh

A password is never written in the file: `password:` is an error that says to use `password_env`.
`key_file` and `known_hosts` take plain path characters only (no spaces, quotes or `$`, no leading
`-`): multi-host mdtest hands them to ssh through Open MPI's plm_rsh_args, which splits at spaces.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsbench.config import schema as s
from fsbench.config.files import read_text_bounded
from fsbench.config.yamllines import LineMap, load_yaml
from fsbench.core.errors import Issue, ScenarioError

#: how an inventory's hosts are reached: directly, or through relays (fsbench.transport.relay)
INVENTORY_TRANSPORTS = ("ssh", "ssh-relay")
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
    transport: str = "ssh"  # or ssh-relay (fsbench.transport.relay)

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


def _ssh_path(value: object, path: tuple, lm: LineMap, issues: list) -> object:
    text = s.string(value, path, lm, issues)
    if text is None:
        return None
    problem = _ssh_path_problem(str(text))
    if problem:
        issues.append(lm.issue(path, f"{text!r} {problem}", _SSH_PATH_HINT))
        return None
    return text


# Multi-host mdtest hands key_file and known_hosts to ssh through Open MPI's plm_rsh_args. Open MPI
# 4.1 splits that value at every space with no regard for quotes (opal_argv_split), so a space makes
# the rest of the path ssh options (-oProxyCommand= runs a command here); and it forwards the value
# to each remote orted inside "..." on a shell line, where $ ` \ " would be expanded there. No
# quoting survives both, so only plain path characters are taken.
_SSH_PATH_CHARS = re.compile(r"[\w@%+=:,./~-]+\Z")
_SSH_PATH_HINT = ("multi-host mdtest passes it to ssh through Open MPI's plm_rsh_args, which splits on "
                  "spaces, ignores quotes and reaches a remote shell: make a symlink with a plain name "
                  "(ln -s '/path/My Keys/id' ~/.ssh/lab_id) and give that")


def _ssh_path_problem(text: str) -> str:
    """Why a key_file/known_hosts path cannot go on ssh's command line through mpirun, or ''."""
    if not text:
        return "is empty"
    if text.startswith("-"):
        return "starts with '-', so ssh would read it as an option"
    if not _SSH_PATH_CHARS.match(text):
        odd = sorted({ch for ch in text if not _SSH_PATH_CHARS.match(ch)})
        shown = " ".join("space" if ch == " " else repr(ch) for ch in odd)
        return f"holds {shown}: a path may have letters, digits and _ @ % + = : , . / ~ - only"
    return ""


def _login_word(value: object, path: tuple, lm: LineMap, issues: list) -> object:
    # an address or a login goes on ssh's and mpirun's command lines as a word of its own
    text = s.address(value, path, lm, issues)
    if text is not None and str(text).startswith("-"):
        issues.append(lm.issue(path, f"{text!r} starts with '-', so ssh would read it as an option",
                               "give the host name or the login itself"))
        return None
    return text


def _no_password(value: object, path: tuple, lm: LineMap, issues: list) -> object:
    issues.append(lm.issue(path, "passwords are not read from files",
                           "put it in an environment variable and name that variable with password_env"))
    return None


# every default is None so that a host's own value can be told apart from a missing one
SETTINGS = s.Struct({
    "address": s.Key(_login_word), "port": s.Key(_port), "user": s.Key(_login_word),
    "key_file": s.Key(_ssh_path), "known_hosts": s.Key(_ssh_path), "jump": s.Key(s.string),
    "groups": s.Key(s.list_of(s.string)), "slots": s.Key(s.integer(1)), "sudo": s.Key(s.boolean),
    "password_env": s.Key(_env_name), "remote_base": s.Key(s.string), "password": s.Key(_no_password),
    "transport": s.Key(s.one_of(*INVENTORY_TRANSPORTS)),
}, what="host settings")
INVENTORY = s.Struct({
    "defaults": s.Key(SETTINGS, default=dict),
    "hosts": s.Key(s.mapping_of(SETTINGS, what="host"), required=True, doc="a mapping of host names to settings"),
}, what="inventory")


def load_inventory(path: str | Path) -> dict[str, HostSpec]:
    """Read and check an inventory file; raises ScenarioError naming file:line and key path of every problem."""
    path = Path(path)
    try:  # an inventory is a page of hosts: /dev/zero or a huge file is refused before it is read
        text = read_text_bounded(path)
    except OSError as exc:
        raise ScenarioError([Issue(str(path), None, "", f"cannot read the inventory: {exc.strerror}",
                                   "give the path of an inventory file (YAML)")]) from None
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
    _check_resolved_paths(hosts, lm, issues)
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
    merged["transport"] = merged["transport"] or "ssh"
    return HostSpec(name=name, **merged)


def _check_resolved_paths(hosts: dict[str, HostSpec], lm: LineMap, issues: list[Issue]) -> None:
    """A plain key path is fine on its own but may land in a folder with spaces (this file's, or ~)."""
    reported: set[tuple] = set()
    for name, spec in hosts.items():
        for key, value in (("key_file", spec.key_file), ("known_hosts", spec.known_hosts)):
            if not value:
                continue
            resolved = os.path.expanduser(value)
            problem = _ssh_path_problem(resolved)
            where = ("hosts", name, key) if ("hosts", name, key) in lm.lines else ("defaults", key)
            if problem and where not in reported:
                reported.add(where)
                issues.append(lm.issue(where, f"{key} of {name} resolves to {resolved!r}, which {problem}",
                                       _SSH_PATH_HINT))


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
