"""A relay's channel as the controller holds it: the relay's program started, frames out and in, commands in flight.

fsbench.transport.relay says why and how; this module is the link itself. Frames (fsbench.transport.relay_agent
gives their format) that several threads queue in the same moment leave in one write; one thread reads the
relay's frames and hands each to its command's output streams. A master connection per host (OpenSSH's
`ssh -M -N` on the relay) is started on the host's first command and waited for until `ssh -O check` says it
accepts commands. When the relay's channel ends, every command in flight ends as lost, with the reason.
"""

from __future__ import annotations

import json
import logging
import select
import struct
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from fsbench.core.cancel import Cancel
from fsbench.core.errors import CommandFailed
from fsbench.transport import remote
from fsbench.transport.errors import ConnectError
from fsbench.transport.relay_setup import FOLDER_SCRIPT, known_hosts_text, stop_orphans
from fsbench.transport.run_agent import RUN_AGENT, hold_for
from fsbench.transport.ssh import SSHTransport
from fsbench.transport.ssh_exec import SSHCommands
from fsbench.transport.ssh_files import SSHFileOps

log = logging.getLogger("fsbench.transport.relay")
HEADER = struct.Struct(">BII")
CHUNK = 1 << 16
AGENT_SOURCE, FRAMES_SOURCE = (Path(__file__).with_name(f"relay_{n}.py") for n in ("agent", "frames"))
#: a command's input (a file put through the relay) goes in frames of this size
INPUT_CHUNK = 1 << 18
#: how long a first frame waits for others before they leave together (a step's commands start within it)
LINGER_S = 0.001


class Relayed:
    """One command in flight through a relay: its output streams, and its end."""

    def __init__(self, ident: int, out: Any, err: Any, on_done: Any = None):
        self.ident, self.out, self.err, self.on_done = ident, out, err, on_done
        self.done = Cancel()  # selectable: a wait sleeps until the end, a cancel or its timeout
        self.ready = threading.Event()
        self.status: int | None = None
        self.failed = ""  # the relay could not start it, or the relay itself was lost
        self.chan: Any = None  # the program's channel it was started on (a lost program loses only its own)

    def end(self) -> None:
        self.done.set()
        if self.on_done is not None:
            self.on_done()


class RelayLink:
    """The channel to one relay's program: frames out (coalesced), frames in (one reader thread)."""

    def __init__(self, relay: SSHTransport):
        self.relay = relay
        self.hosts: dict[str, SSHTransport] = {}
        self.folder = f"{relay.remote_base}/relay-{uuid.uuid4().hex[:12]}"
        self._made = False  # the folder exists: close() removes it, whatever became of the program
        self._lock = threading.RLock()
        self._chan: Any = None
        self._forward: Any = None
        self._agent = False  # it holds the run's own ssh-agent (fsbench.transport.run_agent): close() releases it
        self._next = self._groups = 0
        self._cmds: dict[int, Relayed] = {}
        self.masters: dict[str, Relayed] = {}
        self.master_locks: dict[str, threading.Lock] = {}
        self._queue: list[bytes] = []
        self._queued = threading.Condition()
        self._stopper: threading.Thread | None = None  # stopping what a program killed outright left
        self._closing = False

    # -- the relay's program -----------------------------------------------------------------------------
    def _ensure(self) -> None:
        with self._lock:
            if self._chan is not None and not self._chan.closed:
                return
            self._start()

    def _start(self) -> None:
        r = self.relay
        if self.hosts and not self._agent:  # the user's ssh-agent, or the run's own holding the hosts' keys
            keys = [k for t in self.hosts.values() for k in t.settings.key_files]
            self._agent = hold_for(r.host, r.settings.where, keys)
        base = r.remote_base
        # the relay host's own execute and put_text go through this link: its direct ones start it
        made = SSHCommands.execute(r, ["sh", "-c", FOLDER_SCRIPT, "fsbench-relay", base, self.folder],
                                   timeout=r.op_timeout)
        if not made.ok:
            raise CommandFailed(made, f"making the relay's folder {self.folder}")
        r.base_made = self._made = True
        SSHFileOps.put_text(r, f"{self.folder}/agent.py", AGENT_SOURCE.read_text())
        SSHFileOps.put_text(r, f"{self.folder}/relay_frames.py", FRAMES_SOURCE.read_text())
        SSHFileOps.put_text(r, f"{self.folder}/known_hosts", known_hosts_text(self.hosts.values()))
        import paramiko.agent

        t = r.connection()
        self._drop_forward()  # a lost program's: its agent channels went with it
        try:
            chan = t.open_session(timeout=r.connect_timeout)
            self._forward = paramiko.agent.AgentRequestHandler(chan)
            line = remote.command_line(["python3", "-u", "-B", "agent.py"], cwd=self.folder, env=r.marker or None,
                                       sudo=False, stdin=True)
            chan.exec_command(line)
        except r.net_errors() as exc:
            raise ConnectError(r.host, r.settings.where, f"cannot start the relay's program: {exc}") from None
        self._chan, self.masters = chan, {}
        threading.Thread(target=self._read, args=(chan,), name=f"fsbench-relay-{r.host}", daemon=True).start()
        threading.Thread(target=self._write, args=(chan,), name=f"fsbench-relay-out-{r.host}", daemon=True).start()
        log.debug("relay on %s started for %s", r.host, ", ".join(self.hosts))

    def _write(self, chan: Any) -> None:
        while True:
            with self._queued:
                while not self._queue and not chan.closed:
                    self._queued.wait(1.0)
                if chan.closed:
                    return
            time.sleep(LINGER_S)  # the other hosts' commands of the same step, started a moment later, join
            with self._queued:
                data, self._queue = b"".join(self._queue), []
            try:
                chan.sendall(data)
            except Exception:  # noqa: BLE001 - whatever ended the channel, the reader names the loss
                return

    def _send(self, kind: str, ident: int, payload: bytes = b"") -> None:
        with self._queued:
            self._queue.append(HEADER.pack(ord(kind), ident, len(payload)) + payload)
            self._queued.notify()

    def _read(self, chan: Any) -> None:
        buf = bytearray()
        reason = "the relay's program ended"
        # this channel's own: a program started again (its channel seen closed before this reader saw its end)
        # has its own reader, process group and stderr
        said_err, pgid = bytearray(), None
        while True:
            try:
                select.select([chan], [], [], 1.0)
                while chan.recv_stderr_ready():
                    said_err += chan.recv_stderr(CHUNK)
                    if pgid is None and said_err.startswith(remote.PGID_MARK) and b"\n" in said_err:
                        pgid = int(said_err[len(remote.PGID_MARK):said_err.index(b"\n")])
                    del said_err[:-4000]
                if chan.recv_ready():
                    data = chan.recv(CHUNK)
                    if not data:
                        break
                    buf += data
                    self._frames(buf)
                elif (chan.closed or chan.eof_received or not chan.get_transport().is_active()) \
                        and not chan.recv_ready() and not chan.recv_stderr_ready():
                    if not chan.get_transport().is_active():
                        reason = "the connection to the relay was lost"
                    break
            except (OSError, EOFError) as exc:
                reason = f"the connection to the relay was lost: {exc}"
                break
        said = [ln for ln in bytes(said_err).decode(errors="replace").strip().splitlines()
                if not ln.startswith(remote.PGID_MARK.decode())]  # the wrapper's own line
        self._lose(chan, f"{reason}{': ' + said[-1] if said else ''}", pgid)

    def _frames(self, buf: bytearray) -> None:
        while len(buf) >= HEADER.size:
            kind, ident, length = HEADER.unpack_from(buf)
            if len(buf) < HEADER.size + length:
                return
            payload = bytes(buf[HEADER.size:HEADER.size + length])
            del buf[:HEADER.size + length]
            cmd = self._cmds.get(ident)
            if cmd is None:
                continue
            if kind == ord("O"):
                cmd.out.write(payload)
            elif kind == ord("E"):
                cmd.err.write(payload)
            elif kind == ord("Y"):
                cmd.ready.set()
            elif kind in (ord("X"), ord("F")):
                if kind == ord("X"):
                    cmd.status = int(json.loads(payload.decode())["status"])
                else:
                    cmd.failed = payload.decode(errors="replace")
                with self._lock:
                    self._cmds.pop(ident, None)
                cmd.end()

    def _lose(self, chan: Any, reason: str, pgid: int | None) -> None:
        """The program on chan is gone: its commands and masters are lost, what it left running is stopped. Only
        its own: a command may have started the program again already (it saw the channel closed first)."""
        with self._lock:
            if self._chan is chan:
                self._chan = None
            cmds = [c for c in self._cmds.values() if c.chan is chan]
            for c in cmds:
                del self._cmds[c.ident]
            self.masters = {h: m for h, m in self.masters.items() if m.chan is not chan}
        with self._queued:
            self._queued.notify_all()
        try:
            chan.close()
        except Exception:  # noqa: BLE001 - gone already
            pass
        for cmd in cmds:
            cmd.failed = cmd.failed or reason
            cmd.end()
        if not self._closing and pgid is not None:
            stopper = threading.Thread(target=stop_orphans, args=(self.relay, pgid, self.folder), daemon=True)
            stopper.start()  # then kept: close() may join it at any moment
            self._stopper = stopper
        if cmds and not self._closing:
            log.warning("relay on %s: %s", self.relay.host, reason)

    # -- commands ----------------------------------------------------------------------------------------
    def start(self, argv: list[str], out: Any, err: Any, *, stdin: bytes | None = None,
              ready: list[str] | None = None, session: bool = False, on_done: Any = None,
              group: int | None = None, lag: float | None = None) -> Relayed:
        """Start argv on the relay host: OpenSSH's client for a host behind it, or (session) a command of the
        relay host itself, in a session of its own. on_done: called once when it ended (or was lost); group:
        its frames are held with the group's (fsbench.transport.relay_frames); lag: how long its output may wait on
        the relay for more (None: the relay's default)."""
        with self._lock:  # the program (re)started and the command registered with its channel at once: a loss
            self._ensure()  # in between would leave the command to no channel
            self._next += 1
            cmd = Relayed(self._next, out, err, on_done)
            cmd.chan = self._chan
            self._cmds[cmd.ident] = cmd
        spec = {"argv": argv, "stdin": stdin is not None, "ready": ready, "session": session, "group": group,
                "lag": lag}
        self._send("S", cmd.ident, json.dumps(spec).encode())
        if stdin is not None:  # in frames of INPUT_CHUNK, then an empty one: its end
            for at in range(0, len(stdin), INPUT_CHUNK):
                self._send("I", cmd.ident, stdin[at:at + INPUT_CHUNK])
            self._send("I", cmd.ident)
        return cmd

    def terminate(self, cmd: Relayed) -> None:
        """TERM to the command's ssh client on the relay (KILL 5 s later): its session on the host ends."""
        self._send("T", cmd.ident)

    def group(self) -> int:
        """A new group of commands whose frames the relay holds until all of them ended."""
        with self._lock:
            self._groups += 1
            return self._groups

    def control(self, kind: str, group: int) -> None:
        """C: the group is whole (each of its commands started); R: release its frames now."""
        self._send(kind, group)

    def connected(self, host: str) -> bool:
        """Whether the host's master connection is up (the relay host itself needs none)."""
        if host == self.relay.host:
            return True
        current = self.masters.get(host)
        return current is not None and not current.done.is_set()

    def close(self) -> None:
        """End the relay's program (it stops every master and command it runs) and remove its folder."""
        with self._lock:
            chan, self._chan = self._chan, None
            self._closing = True
        if chan is not None:  # None: never started, or its program was lost (its folder may still be there)
            try:
                chan.shutdown_write()
                chan.status_event.wait(10.0)
            except Exception:  # noqa: BLE001 - the connection is going anyway
                pass
            finally:
                chan.close()
        self._drop_forward()
        if self._agent:
            self._agent = False
            RUN_AGENT.release()
        if self._stopper is not None:  # it uses the relay's connection, which the relay host closes next
            self._stopper.join(self.relay.op_timeout + 10)
        if self._made and self.relay.dead is None:
            gone = SSHCommands.execute(self.relay, ["rm", "-rf", "--", self.folder], timeout=self.relay.op_timeout)
            if not gone.ok:
                log.warning("could not remove the relay's folder %s", gone.describe())

    def _drop_forward(self) -> None:
        forward, self._forward = self._forward, None
        if forward is not None:
            forward.close()
