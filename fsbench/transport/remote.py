"""Remote command lines and the loop that streams one SSH channel's output (no paramiko import here).

Why the wrapper: an SSH channel without a pty gives no way to signal the remote process, and closing
the channel leaves it running. So every command runs as

    exec [sudo -n --] setsid -w sh -c 'echo "fsbench-pgid $$" >&2; cd "$1" || exit 127; shift;
        <watchdog> exec "$@"' fsbench-run CWD [env K=V ...] ARGV... </dev/null

(the watchdog is a background loop, its output detached, that kills the group when the ssh session
that started the command disappears: a crashed sshd or a lost link does not leave benchmarks running)

setsid makes the command leader of its own session and process group whatever the login shell did;
the first stderr line reports that group's id (and is removed from stderr again); on a timeout or
cancel a second exec channel sends `kill -s TERM -- -PGID`, then KILL after a grace period,
which reaches the tool's children too. `setsid -w` waits for the command and passes its exit status
on; when the command died of a signal it exits with the signal number and prints one line, which is
removed too and turned into a negative exit status, as subprocess reports it locally.
Every value is passed as its own shell word (shlex.join).
"""

from __future__ import annotations

import re
import select
import shlex
import threading
import time
from collections.abc import Callable

from fsbench.core.cancel import Cancel
from fsbench.transport.capture import CappedOutput

PGID_MARK = b"fsbench-pgid "
CHUNK = 1 << 16
POLL_S = 0.2
#: how often a cancel is looked at while a command that can be cancelled runs
CANCEL_POLL_S = 0.05
EOF_GRACE_S = 2.0  # exit status came but a background child still holds the output open
_SETSID_REPORT = re.compile(rb"setsid: child \d+ did not exit normally[^\n]*\n?\Z")
_SCRIPT = (
    'echo "fsbench-pgid $$" >&2; cd "$1" || exit 127; shift; '
    # dead man's switch: when the ssh session that started us is gone (sshd killed, host link lost), the
    # whole group ends instead of running on unseen; under sudo, the session is sudo's parent
    "w=$PPID; a=$(cut -d' ' -f4 /proc/$w/stat 2>/dev/null); b=$a; "
    'case "$(cat /proc/$a/comm 2>/dev/null)" in sudo) b=$(cut -d\' \' -f4 /proc/$a/stat 2>/dev/null);; esac; '
    # TERM first: fio's main process then stops its job processes, which run in sessions of their own
    # a grandchild, left by its parent at once: a child of ours would become the command's child after the
    # exec, and a command that waits for all its children (util-linux `script`) would wait for it for ever
    'if [ -n "$b" ]; then ( ( trap "" TERM; while [ -e /proc/$w ]; do [ -e /proc/$b ] || '
    '{ kill -s TERM -- -$$; sleep 5; kill -s KILL -- -$$; }; sleep 1; done ) '
    '</dev/null >/dev/null 2>&1 & ); fi; '
    'exec "$@"'
)


def sudo_prefix(sudo: bool) -> list[str]:
    """`sudo -n --` for hosts that need it: never prompts, fails instead."""
    return ["sudo", "-n", "--"] if sudo else []


def command_line(argv: list[str], *, cwd: str | None, env: dict[str, str] | None, sudo: bool,
                 stdin: bool = False) -> str:
    """The remote shell line that runs argv in its own process group and reports that group's id.

    stdin: the command reads the session's input (the relay's program, a file sent through a relay);
    otherwise it reads /dev/null."""
    env_part = ["env", *(f"{k}={v}" for k, v in env.items())] if env else []
    inner = ["setsid", "-w", "sh", "-c", _SCRIPT, "fsbench-run", cwd or ".", *env_part, *argv]
    # stdin from /dev/null on the host, like the local transport; sending a channel EOF instead races
    # with a fast command's close in paramiko, and sshd then drops the whole connection
    return shlex.join(["exec", *sudo_prefix(sudo), *inner]) + ("" if stdin else " </dev/null")


def kill_line(pgid: int, signal_name: str, *, sudo: bool) -> str:
    """The remote line that signals a whole process group (POSIX `kill -s`: dash rejects `kill -TERM --`)."""
    return shlex.join([*sudo_prefix(sudo), "sh", "-c", 'kill -s "$1" -- "-$2"', "fsbench-kill", signal_name,
                       str(pgid)])


#: output going to a local file in chunks (or to memory when kept whole), capped, with a rolling tail
Sink = CappedOutput


class PgidFilter:
    """Takes the wrapper's own lines out of stderr: the process group id first, setsid's report last."""

    def __init__(self, sink: Sink):
        self.sink, self.signalled = sink, False
        self.pgid: int | None = None
        self._head: bytearray | None = bytearray()
        self._pending = b""

    def write(self, data: bytes) -> None:
        if self._head is not None:
            self._head += data
            nl = self._head.find(b"\n")
            if nl < 0 and len(self._head) < 64:
                return
            data, self._head = bytes(self._head), None
            if nl >= 0 and data.startswith(PGID_MARK) and data[len(PGID_MARK):nl].isdigit():
                self.pgid = int(data[len(PGID_MARK):nl])
                data = data[nl + 1:]
        # hold back the last line: it may be setsid's "child N did not exit normally" (a signal)
        buf = self._pending + data
        cut = buf.rfind(b"\n", 0, len(buf) - 1) + 1
        if len(buf) - cut > 4096:
            cut = len(buf)
        if cut:
            self.sink.write(buf[:cut])
        self._pending = buf[cut:]

    def close(self) -> None:
        rest = self._pending + bytes(self._head or b"")  # no marker came: the wrapper never ran
        self._head, self._pending = None, b""
        if _SETSID_REPORT.match(rest):
            self.signalled = True
        elif rest:
            self.sink.write(rest)
        self.sink.close()


def pump(chan, out: Sink, err: PgidFilter, *, timeout: float | None, cancel: threading.Event | None,
         alive: Callable[[], bool]) -> str:
    """Stream the channel until the command ends: returns 'exit', 'timeout', 'cancel' or 'lost'."""
    start = time.monotonic()
    status_at: float | None = None
    # the command's output and end wake the wait at once, and so does a Cancel (fsbench.core.cancel); a plain
    # Event (Ctrl-C, a monitor's stop, which every case waits for) is only looked at between waits, so those
    # are short while such an event can cancel
    wakes = isinstance(cancel, Cancel)
    wait_s = CANCEL_POLL_S if cancel is not None and not wakes else POLL_S
    watched = [chan, cancel] if wakes else [chan]
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
            chan.status_event.wait(CANCEL_POLL_S if cancel is not None else POLL_S)
        else:
            select.select(watched, [], [], wait_s)


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
