"""The `ssh-relay` transport: the controller talks to about sqrt(N) relay hosts, each relay to its share of the rest.

Why: over direct SSH every command of every host is a channel of its own on the controller (about 1 ms of
its CPU: the channel's open, exec, output, status and close, each a packet to encrypt or decrypt), 4 to 6
a host a case. At hundreds of hosts that is seconds of one process's CPU at each case's edges. Through a
relay a host's command is a frame on the relay's one channel, and the frames of a step's hosts travel
together, so the controller's packets grow with the relays, not the hosts.

How:
- `make_all` splits the hosts into about sqrt(N) groups; each group's first host is its relay, reached
  directly (an SSHTransport); the others are `RelayedTransport`s. Hosts behind a jump host or with a
  password login stay direct.
- A relay runs fsbench.transport.relay_agent (sent to a private folder of its own, `relay-<id>` under
  its remote_base) with `python3`. It reaches each of its hosts with OpenSSH's client: one master
  connection per host (`ssh -M -N`, its control socket in that folder), then a client per command
  through it. The master logs in with the controller's ssh-agent, forwarded on the relay's channel only
  (no key leaves the controller), and checks the host's key against the controller's known_hosts
  entries for it, which are sent along; nothing else is trusted.
- A relayed command is the same line the direct transport runs (fsbench.transport.remote: its own
  process group, the run's marker, the dead man's switch), so its stop is the same kill by process group,
  sent through the relay, and a session that ends (the relay lost, the controller gone) ends it.
- A master that ends (the host down, its link cut, 15 s without an answer to ssh's keepalives) makes
  its host's commands `lost`, with ssh's reason, as a lost connection does; the next command connects
  again. A relay that ends does the same to all its hosts. When the controller closes the relay, its
  program stops every child (TERM, then KILL), and the relay's folder is removed.
"""

from __future__ import annotations

import math
import os
import tarfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fsbench.api.transport import HostEntry, Transport, TransportKind
from fsbench.core.errors import CommandResult
from fsbench.core.inventory import HostSpec
from fsbench.transport import relay_steps
from fsbench.transport.capture import CappedOutput
from fsbench.transport.errors import ConnectError, TransferError
from fsbench.transport.relay_link import Relayed, RelayLink
from fsbench.transport.relay_streams import RelayStreams
from fsbench.transport.ssh import SSHTransport

#: a master is given up after this many of ssh's keepalives go unanswered, one every SERVER_ALIVE_S
SERVER_ALIVE_S, SERVER_ALIVE_COUNT = 5, 3
NO_CAP = 1 << 62


def groups_of(names: list[str]) -> list[list[str]]:
    """About sqrt(N) groups of about sqrt(N) hosts, in the order given (a group's first host is its relay)."""
    if not names:
        return []
    size = max(1, math.ceil(math.sqrt(len(names))))
    return [names[i:i + size] for i in range(0, len(names), size)]


class RelayedTransport(SSHTransport):
    """A host reached through a relay: the same commands as SSHTransport's, as frames on the relay's channel."""

    own_session = False  # its commands are OpenSSH clients on the relay, in the relay program's process group

    def __init__(self, host: HostSpec, link: RelayLink, **options: Any):
        super().__init__(host, **options)
        self.link = link
        link.hosts[self.host] = self
        self._index = len(link.hosts)

    def __repr__(self) -> str:
        return f"RelayedTransport({self.host!r}, {self.spec.target!r}, through {self.link.relay.host!r})"

    def connection(self):
        raise ConnectError(self.host, self.settings.where, f"this host is reached through the relay on "
                           f"{self.link.relay.host}, not directly")

    def through(self, line: str) -> list[str]:
        """What the relay runs for one of this host's command lines: OpenSSH's client, through the master."""
        return self.ssh_argv(line)

    def connect(self) -> Relayed | None:
        """The host's master connection on the relay, started (and waited for until `ssh -O check` says it
        accepts commands) when it is not running."""
        link = self.link
        with link.master_locks.setdefault(self.host, threading.Lock()):
            current = link.masters.get(self.host)
            if current is not None and not current.done.is_set():
                return current
            err = CappedOutput(None, keep=False, cap=1 << 16, name="stderr")
            cmd = link.start(self.ssh_argv(master=True), CappedOutput(None, keep=False, name="stdout"), err,
                             ready=self.ssh_argv(check=True))
            limit = time.monotonic() + self.connect_timeout + 5
            while not cmd.ready.wait(0.05):
                if cmd.done.is_set() or time.monotonic() > limit:
                    if not cmd.done.is_set():
                        link.terminate(cmd)
                    said = (cmd.failed or err.tail().decode(errors="replace")).strip().splitlines()
                    why = said[-1] if said else "no answer within the connect timeout"
                    raise ConnectError(self.host, self.settings.where,
                                       f"cannot connect from the relay on {link.relay.host}: {why}",
                                       "is sshd running there, does the controller's ssh-agent hold its key, and "
                                       "is its key in the controller's known_hosts?")
            link.masters[self.host] = cmd
            return cmd

    def ssh_argv(self, line: str | None = None, *, master: bool = False, check: bool = False) -> list[str]:
        """OpenSSH's client on the relay: the master connection, its check, or a command through it."""
        r = self.settings
        argv = ["ssh", "-F", "/dev/null", "-S", f"{self.link.folder}/c{self._index}", "-p", str(r.port), "-l", r.user,
                "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-o", "StrictHostKeyChecking=yes",
                "-o", f"UserKnownHostsFile={self.link.folder}/known_hosts", "-o", "GlobalKnownHostsFile=/dev/null",
                "-o", "CheckHostIP=no", "-o", "UpdateHostKeys=no"]
        if master:
            return [*argv, "-M", "-N", "-o", "ControlMaster=yes", "-o", "ControlPersist=no",
                    "-o", f"ConnectTimeout={max(1, int(self.connect_timeout))}",
                    "-o", f"ServerAliveInterval={SERVER_ALIVE_S}", "-o", f"ServerAliveCountMax={SERVER_ALIVE_COUNT}",
                    "-o", "ForwardAgent=no", "-o", "ClearAllForwardings=yes", r.address]
        if check:
            return [*argv, "-O", "check", r.address]
        return [*argv, "-o", "ControlMaster=no", "-T", r.address, line or "true"]

    def execute(self, argv: list[str], *, cwd: str | None = None, timeout: float | None = 60.0,
                env: dict[str, str] | None = None, stdout_path: Path | None = None,
                stderr_path: Path | None = None, cancel: threading.Event | None = None,
                sudo: bool = False, stdin: bytes | None = None, cap: int | None = None) -> CommandResult:
        """SSHTransport.execute through the relay: the same line, the same result."""
        s = relay_steps.begin(self, argv, cwd=cwd, env=env, sudo=sudo, stdout_path=stdout_path,
                              stderr_path=stderr_path, stdin=stdin, cap=cap)
        outcome = "exit"
        try:
            outcome = relay_steps.wait_one(s.cmd, timeout, cancel)
            if outcome in ("timeout", "cancel"):
                relay_steps.stop_all([s])
        finally:
            result = relay_steps.finish(s, outcome)
        return result

    @staticmethod
    def run_together(items: Sequence[tuple[Transport, list[str]]], *, timeout: float | None, cwd: str | None,
                     cancel: threading.Event | None) -> list[CommandResult | BaseException]:
        """A step's commands on many relayed hosts, started from the caller's thread and waited for together
        (fsbench.transport.relay_steps); fsbench.transport.group.run_on_group calls it."""
        return relay_steps.run_together(items, timeout=timeout, cwd=cwd, cancel=cancel)  # type: ignore[arg-type]

    @staticmethod
    def start_streams(items: Sequence[tuple[Transport, list[str], Path | None, Path | None, float | None]]
                      ) -> RelayStreams:
        """A case's long commands on many relayed hosts, stopped in one step (fsbench.api.streams calls it)."""
        return RelayStreams(items)  # type: ignore[arg-type]

    # -- files: what SFTP does on a direct host, as commands through the relay -----------------------------
    def put_text(self, path: str, text: str) -> None:
        self._put(text.encode(), path, None)

    def put_file(self, local: Path, path: str, mode: int | None = None) -> None:
        self._put(local.read_bytes(), path, mode)

    def _put(self, data: bytes, path: str, mode: int | None) -> None:
        script = 'cat > "$1"' + (' && chmod "$2" "$1"' if mode is not None else "")
        argv = ["sh", "-c", script, "fsbench-put", path, *([f"{mode:o}"] if mode is not None else [])]
        result = self.execute(argv, timeout=self.op_timeout, stdin=data)
        if not result.ok:
            raise TransferError(self.host, self.settings.where, f"cannot write {path}: {result.describe()}",
                                f"check that its folder exists and {self.settings.user} may write there")

    def fetch(self, path: str, local: Path) -> bool:
        """A file, or a folder with its files and folders below it (as a tar stream), into local."""
        script = ('if [ -d "$1" ]; then echo dir >&2; exec tar -C "$1" -cf - .; elif [ -f "$1" ]; then echo file >&2; '
                  'exec cat -- "$1"; else exit 3; fi')
        local.parent.mkdir(parents=True, exist_ok=True)
        part = local.with_name(f".{local.name}.fetching")
        err_path = local.with_name(f".{local.name}.fetch-err")
        try:
            result = self.execute(["sh", "-c", script, "fsbench-fetch", path], timeout=self.op_timeout * 10,
                                  stdout_path=part, stderr_path=err_path, cap=NO_CAP)
            if result.exit_status == 3:
                return False
            said = err_path.read_text(errors="replace").split("\n", 1)[0] if err_path.exists() else ""
            if not result.ok or said not in ("dir", "file"):
                raise TransferError(self.host, self.settings.where, f"cannot fetch {path}: {result.describe()}")
            if said == "file":
                os.replace(part, local)
                return True
            local.mkdir(parents=True, exist_ok=True)
            with tarfile.open(part) as tar:
                tar.extractall(local, filter=_files_and_folders)
            return True
        finally:
            for p in (part, err_path):
                p.unlink(missing_ok=True)

    def close(self) -> None:
        """Nothing of its own: the relay host closes the link."""


class RelayHost(RelayedTransport):
    """A relay host. Its program is started over a direct connection (SFTP for its files, a channel for it);
    from then on the host's own commands are the program's children too, framed on that one channel."""

    def __init__(self, host: HostSpec, **options: Any):
        SSHTransport.__init__(self, host, **options)  # not behind a relay: no index, no known_hosts entry
        self.link = RelayLink(self)

    def __repr__(self) -> str:
        return f"RelayHost({self.host!r}, {self.spec.target!r}, for {', '.join(self.link.hosts) or 'itself'})"

    def connection(self):
        return SSHTransport.connection(self)

    own_session = True  # its commands are the program's children: each in a session of its own, as sshd does

    def through(self, line: str) -> list[str]:
        return ["sh", "-c", line]

    def connect(self) -> Relayed | None:
        return None

    def close(self) -> None:
        """End the link (its program, every child, the relay's folder), then the direct connection."""
        try:
            self.link.close()
        finally:
            SSHTransport.close(self)


def _files_and_folders(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """As SFTP's fetch: regular files and folders only, nothing outside the destination."""
    if not (member.isreg() or member.isdir()):
        return None
    return tarfile.data_filter(member, dest)


class RelayTransports:
    """The `ssh-relay` transport plug-in: inventory hosts, about sqrt(N) of them relays for the others."""

    name = "ssh-relay"

    def make_all(self, hosts: Sequence[HostEntry], inventory: dict[str, Any]) -> dict[str, Transport]:
        """Relays and the hosts behind them; a host behind a jump host or with a password stays direct."""
        from fsbench.transport.hosts import transports_for

        names = [h.name for h in hosts]
        direct = [n for n in names if inventory[n].jump or inventory[n].password_env]
        made: dict[str, Transport] = dict(transports_for(inventory, direct)) if direct else {}
        for group in groups_of([n for n in names if n not in direct]):
            relay = RelayHost(inventory[group[0]])
            made[group[0]] = relay
            for name in group[1:]:
                made[name] = RelayedTransport(inventory[name], relay.link)
        return {n: made[n] for n in names}


PLUGIN: TransportKind = RelayTransports()

