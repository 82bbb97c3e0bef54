"""Remote command lines and the loop that streams one SSH channel's output (no paramiko import here).

Why the wrapper: an SSH channel without a pty gives no way to signal the remote process, and closing
the channel leaves it running. So every command runs as

    exec [sudo -n --] setsid -w sh -c 'echo "fsbench-pgid $$" >&2; cd "$1" || exit 126; shift; exec "$@"' \
        fsbench-run CWD [env K=V ...] ARGV...

setsid makes the command leader of its own session and process group whatever the login shell did;
the first stderr line reports that group's id (and is removed from stderr again); on a timeout or
cancel a second exec channel sends `kill -TERM -- -PGID`, then `kill -KILL` after a grace period,
which reaches the tool's children too. Every value is passed as its own shell word (shlex.join).
"""

from __future__ import annotations

import select
import shlex
import threading
import time
from pathlib import Path
from typing import Callable

from fsbench.transport.base import TAIL_BYTES

PGID_MARK = b"fsbench-pgid "
CHUNK = 1 << 16
POLL_S = 0.2
EOF_GRACE_S = 2.0  # exit status came but a background child still holds the output open
_SCRIPT = 'echo "fsbench-pgid $$" >&2; cd "$1" || exit 126; shift; exec "$@"'


def sudo_prefix(sudo: bool) -> list[str]:
    """`sudo -n --` for hosts that need it: never prompts, fails instead."""
    return ["sudo", "-n", "--"] if sudo else []


def command_line(argv: list[str], *, cwd: str | None, env: dict[str, str] | None, sudo: bool) -> str:
    """The remote shell line that runs argv in its own process group and reports that group's id."""
    env_part = ["env", *(f"{k}={v}" for k, v in env.items())] if env else []
    inner = ["setsid", "-w", "sh", "-c", _SCRIPT, "fsbench-run", cwd or ".", *env_part, *argv]
    return shlex.join(["exec", *sudo_prefix(sudo), *inner])


def kill_line(pgid: int, signal_name: str, *, sudo: bool) -> str:
    """The remote line that signals a whole process group."""
    return shlex.join([*sudo_prefix(sudo), "kill", f"-{signal_name}", "--", f"-{pgid}"])


class Sink:
    """Output going to a local file in chunks (or to memory when kept whole), with a rolling tail."""

    def __init__(self, path: Path | None, *, keep: bool):
        self._fh = open(path, "wb") if path else None
        self._chunks: list[bytes] | None = [] if keep and path is None else None
        self._tail = bytearray()

    def write(self, data: bytes) -> None:
        if self._fh is not None:
            self._fh.write(data)
        elif self._chunks is not None:
            self._chunks.append(data)
        self._tail += data
        if len(self._tail) > 2 * TAIL_BYTES:
            del self._tail[:-TAIL_BYTES]

    def tail(self) -> bytes:
        return bytes(self._tail[-TAIL_BYTES:])

    def data(self) -> bytes:
        return b"".join(self._chunks or [])

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()


class PgidFilter:
    """Takes the wrapper's first stderr line (the process group id) out of the stream."""

    def __init__(self, sink: Sink):
        self.sink, self.pgid = sink, None
        self._head: bytearray | None = bytearray()

    def write(self, data: bytes) -> None:
        if self._head is None:
            self.sink.write(data)
            return
        self._head += data
        nl = self._head.find(b"\n")
        if nl < 0 and len(self._head) < 64:
            return
        head, self._head = bytes(self._head), None
        if nl >= 0 and head.startswith(PGID_MARK) and head[len(PGID_MARK):nl].isdigit():
            self.pgid = int(head[len(PGID_MARK):nl])
            head = head[nl + 1:]
        if head:
            self.sink.write(head)

    def close(self) -> None:
        if self._head:  # the wrapper never ran (no setsid?): what came is the real error text
            self.sink.write(bytes(self._head))
        self._head = None
        self.sink.close()


def pump(chan, out: Sink, err: PgidFilter, *, timeout: float | None, cancel: threading.Event | None,
         alive: Callable[[], bool]) -> str:
    """Stream the channel until the command ends: returns 'exit', 'timeout', 'cancel' or 'lost'."""
    start = time.monotonic()
    status_at: float | None = None
    while True:
        got = _drain(chan, out, err)
        if chan.status_event.is_set():
            if chan.exit_status < 0:  # closed without an exit status: killed by a signal, or the link died
                _drain_all(chan, out, err)
                return "exit" if alive() else "lost"
            if chan.closed or (chan.eof_received and not chan.recv_ready() and not chan.recv_stderr_ready()):
                _drain_all(chan, out, err)
                return "exit"
            status_at = status_at or time.monotonic()
            if time.monotonic() - status_at > EOF_GRACE_S:
                return "exit"
        elif chan.closed or not alive():
            return "lost"
        if cancel is not None and cancel.is_set():
            return "cancel"
        if timeout is not None and time.monotonic() - start > timeout:
            return "timeout"
        if got:
            continue
        if chan.eof_received:
            # the readiness pipe stays set after EOF, so wait on the status instead of spinning
            chan.status_event.wait(POLL_S)
        else:
            select.select([chan], [], [], POLL_S)


def _drain_all(chan, out: Sink, err: PgidFilter) -> None:
    while _drain(chan, out, err):
        pass


def _drain(chan, out: Sink, err: PgidFilter, rounds: int = 64) -> bool:
    """Read what is buffered, a bounded amount, so a firehose cannot starve the timeout checks."""
    got = False
    for _ in range(rounds):
        more = False
        if chan.recv_ready():
            out.write(chan.recv(CHUNK))
            more = True
        if chan.recv_stderr_ready():
            err.write(chan.recv_stderr(CHUNK))
            more = True
        if not more:
            break
        got = True
    return got
