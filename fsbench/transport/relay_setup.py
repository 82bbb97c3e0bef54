"""What a relay host gets before its program starts: its own private folder (the folders of relays proven gone
swept first) and the controller's known_hosts entries for the hosts behind it; and, should its program be killed
outright, the stop of what the program left running."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from fsbench.transport.errors import HostKeyError
from fsbench.transport.hostkeys import load_known_hosts
from fsbench.transport.ssh import SSHTransport
from fsbench.transport.ssh_exec import SSHCommands

log = logging.getLogger("fsbench.transport.relay")

#: the relay's folder, made private; first the folders of relays that are gone (a controller killed before it
#: could remove its relay's): a relay's program holds an flock on its folder's `lock` for its whole life (made
#: locked, then renamed into place), so a folder with a relay's program and a lock that is free is proven to
#: be a gone relay's.
#: Without flock(1) on the host nothing is swept.
FOLDER_SCRIPT = (
    'mkdir -p -m 700 -- "$1" && test ! -L "$1" || exit 1; '
    'if command -v flock >/dev/null 2>&1; then for d in "$1"/relay-*; do '
    '[ -d "$d" ] && [ ! -L "$d" ] && [ -f "$d/agent.py" ] && [ -f "$d/lock" ] && flock -n "$d/lock" true && '
    'rm -rf -- "$d"; done; fi; '
    'mkdir -p -m 700 -- "$2" && test ! -L "$2"'
)

#: signal a lost relay program's process group (its ssh clients and masters, left running when the program was
#: killed outright), but only while a member of that group works in the relay's own folder (or did: a relay
#: started again there sweeps it first): a group id whose processes are all gone may be another's by now.
#: TERM, then KILL after 5 s to what is left. $1 the group, $2 the folder.
ORPHANS_SCRIPT = (
    'pg=$1 dir=$2; ours() { for p in /proc/[0-9]*; do s=$(cat "$p/stat" 2>/dev/null) || continue; '
    's=${s##*) }; g=$(printf "%s" "$s" | cut -d" " -f3); c=$(readlink "$p/cwd"); '
    '[ "$g" = "$pg" ] && { [ "$c" = "$dir" ] || [ "$c" = "$dir (deleted)" ]; } && return 0; done; return 1; }; '
    'ours || exit 0; kill -s TERM -- "-$pg"; i=0; '
    'while [ $i -lt 50 ] && ours; do sleep 0.1; i=$((i + 1)); done; '
    '! ours || kill -s KILL -- "-$pg"'
)


def stop_orphans(relay: SSHTransport, pgid: int, folder: str) -> None:
    """A program killed outright (SIGKILL, the OOM killer) leaves its ssh clients and masters running, and with
    them the hosts' sessions, whose commands' dead man's switches then never fire: ORPHANS_SCRIPT stops them."""
    try:  # the relay host's direct execute: its own commands went through the program that is gone
        SSHCommands.execute(relay, ["sh", "-c", ORPHANS_SCRIPT, "fsbench-relay", str(pgid), folder],
                            timeout=relay.op_timeout)
    except Exception:  # noqa: BLE001 - the host itself gone: its sessions ended with it
        pass


def known_hosts_text(hosts: Iterable[SSHTransport]) -> str:
    """The controller's entries for the hosts behind a relay; a host without one gets none, and its master then
    fails as ssh says (its key cannot be verified, or nothing answers there)."""
    lines = []
    for t in hosts:
        try:
            lines.append(known_hosts_lines(t))
        except HostKeyError as exc:
            log.debug("%s", exc)
    return "".join(lines)


def known_hosts_lines(t: SSHTransport) -> str:
    """The controller's known_hosts entries for the host, as lines for the relay's ssh (no other host's)."""
    import paramiko

    r = t.settings
    name = r.address if r.port == 22 else f"[{r.address}]:{r.port}"
    keys = paramiko.HostKeys()
    load_known_hosts(keys.load, t.host, r)
    found = keys.lookup(name)
    if not found:
        raise HostKeyError(t.host, r.where, f"no known_hosts entry for {name} in {', '.join(r.known_hosts)}",
                           f"check the host's key, then add it: ssh-keyscan -p {r.port} {r.address} >> "
                           f"{r.known_hosts[0] if r.known_hosts else '~/.ssh/known_hosts'}")
    return "".join(f"{name} {key.get_name()} {key.get_base64()}\n" for key in found.values())
