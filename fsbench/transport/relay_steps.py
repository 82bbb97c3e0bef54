"""A relayed command's start and end, and a step's commands on many relayed hosts started and waited for together.

Why: through a relay a host's command is a frame, yet each host of a step still had a thread of the runner's
fan-out that built its frame, waited for its end and made its result: about 0.3 ms of the controller's CPU a
host and step (measured in session 26 at 16 hosts), more than the frame itself. `run_together` starts every
host's command of a step from the caller's thread (their frames leave together, a relay's in one write),
waits for all of their ends at once, and makes the results: no thread a host. Only a command that overruns its
timeout or is cancelled is stopped, all such commands in one step (`stop_all`, which RelayedTransport.execute
and a case's long commands use too).

The commands and their results are RelayedTransport.execute's own: `begin` and `finish` are its two halves.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fsbench.core.cancel import Cancel
from fsbench.core.errors import CommandResult
from fsbench.transport import remote
from fsbench.transport.capture import CappedOutput
from fsbench.transport.relay_link import Relayed, RelayLink
from fsbench.transport.ssh_exec import GRACE_S, command_result


class RelayedHost(Protocol):
    """What a relayed command needs of its host (fsbench.transport.relay.RelayedTransport and RelayHost)."""

    host: str
    link: RelayLink
    output_cap: int
    marker: dict[str, str]
    own_session: bool

    @property
    def spec(self) -> Any: ...
    @property
    def settings(self) -> Any: ...
    def raise_if_dead(self) -> None: ...
    def connect(self) -> Relayed | None: ...
    def through(self, line: str) -> list[str]: ...

#: how long a stop waits for the kill commands of a signal to end on every host
KILL_WAIT_S = 30.0
#: ssh's own exit status for its errors (a remote command's 255 is told apart by its master still being there)
SSH_ERROR = 255


@dataclass
class Started:
    """One relayed command in flight, with what its result is made of."""

    tr: RelayedHost
    argv: list[str]
    cmd: Relayed
    master: Relayed | None
    out: remote.Sink
    err: remote.PgidFilter
    sudo: bool
    keep_stdout: bool
    start: float


def begin(tr: RelayedHost, argv: list[str], *, cwd: str | None, env: dict[str, str] | None, sudo: bool,
          stdout_path: Path | None = None, stderr_path: Path | None = None, stdin: bytes | None = None,
          cap: int | None = None, on_done: Callable[[], None] | None = None, group: int | None = None,
          lag: float | None = None) -> Started:
    """argv's line on the host, started through its relay (its master connected first when it is not)."""
    start = time.monotonic()
    tr.raise_if_dead()
    out = remote.Sink(stdout_path, keep=stdout_path is None, cap=cap or tr.output_cap, name="stdout")
    err = remote.PgidFilter(remote.Sink(stderr_path, keep=False, cap=tr.output_cap, name="stderr"))
    line = remote.command_line(argv, cwd=cwd, env=env, sudo=sudo, stdin=stdin is not None)
    try:
        master = tr.connect()
        cmd = tr.link.start(tr.through(line), out, err, stdin=stdin, session=tr.own_session, on_done=on_done,
                            group=group, lag=lag)
    except BaseException:
        out.close()
        err.close()
        raise
    return Started(tr, argv, cmd, master, out, err, sudo, stdout_path is None, start)


def finish(s: Started, outcome: str) -> CommandResult:
    """The command's result once it ended (outcome: 'exit', or 'timeout' / 'cancel' once it was stopped)."""
    tr, cmd, master = s.tr, s.cmd, s.master
    status, note, lost = None, "", ""
    try:
        if cmd.failed:
            outcome, lost = "lost", cmd.failed
        elif cmd.status == SSH_ERROR and master is not None and master.done.wait(1.0):
            outcome = "lost"
            said = master.err.tail().decode(errors="replace").strip().splitlines()
            lost = "the connection was lost" + (f" ({said[-1]})" if said else "")
        elif cmd.status is not None and cmd.status >= 0:
            status = cmd.status
        elif outcome == "exit":
            note = "fsbench: the command ended without an exit status (killed by a signal?)"
        if outcome == "lost":
            note = (f"fsbench: {tr.host} ({tr.settings.where}), reached through the relay on "
                    f"{tr.link.relay.host}: {lost} while the command ran; its exit status is unknown")
    finally:
        cmd.done.close()
        s.out.close()
        s.err.close()
    return command_result(tr.host, s.argv, status, outcome, s.out, s.err, note=note,
                          lost=f"{tr.settings.where}: {lost}" if lost else "", start=s.start,
                          keep_stdout=s.keep_stdout)


def wait_one(cmd: Relayed, timeout: float | None, cancel: threading.Event | None) -> str:
    """'exit' once the command ended, else 'timeout' or 'cancel'; a Cancel wakes the wait at once."""
    return _wait(cmd.done, timeout, cancel)


def _wait(done: Cancel, timeout: float | None, cancel: threading.Event | None) -> str:
    deadline = None if timeout is None else time.monotonic() + timeout
    while not done.is_set():
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return "timeout"
        if cancel is not None and cancel.is_set():
            return "cancel"
        if isinstance(cancel, Cancel):
            select.select([done, cancel], [], [], left)
        elif cancel is not None:
            done.wait(remote.CANCEL_POLL_S if left is None else min(remote.CANCEL_POLL_S, left))
        else:
            done.wait(left)
    return "exit"


class Countdown:
    """Wakes its waiter when the last of `n` commands ended."""

    def __init__(self, n: int):
        self.left = n
        self.done = Cancel()  # selectable: a Cancel of the caller's wakes the wait at once
        self._lock = threading.Lock()

    def one_done(self) -> None:
        with self._lock:
            self.left -= 1
            if self.left <= 0:
                self.done.set()


def run_together(items: Sequence[tuple[RelayedHost, list[str]]], *, timeout: float | None,
                 cwd: str | None = None, cancel: threading.Event | None = None) -> list[CommandResult | BaseException]:
    """Each item's `tr.run(argv)` (the run's marker, the host's sudo), all started from this thread and waited
    for together; a result per item, or the error that kept it from starting (the host dead, its master
    refused), in the items' order."""
    failed = connect_fresh([tr for tr, _ in items])
    countdown = Countdown(len(items) - len(failed))
    groups: dict[RelayLink, int] = {}  # a relay's commands of the step: their frames come back in one write
    started: dict[int, Started] = {}
    for i, (tr, argv) in enumerate(items):
        if i in failed:
            continue
        try:
            if tr.link not in groups:
                groups[tr.link] = tr.link.group()
            gid = groups[tr.link]
            started[i] = begin(tr, argv, cwd=cwd, env=tr.marker or None, sudo=tr.spec.sudo,
                               on_done=countdown.one_done, group=gid)
        except Exception as exc:  # noqa: BLE001 - that host's own result; the others go on
            failed[i] = exc
            countdown.one_done()
    for link, gid in groups.items():
        link.control("C", gid)
    outcome = _wait(countdown.done, timeout, cancel) if started else "exit"
    countdown.done.close()
    late = [i for i, s in started.items() if not s.cmd.done.is_set()]
    if late:  # each overrunning command's process group stopped on its host, all hosts at once
        for link, gid in groups.items():
            link.control("R", gid)  # its frames now: the process groups' ids among them
        stop_all([started[i] for i in late])
    return [failed[i] if i in failed else finish(started[i], outcome if i in late else "exit")
            for i in range(len(items))]


def stop_all(running: list[Started]) -> None:
    """Stop commands still running, each host's process group, all hosts in one step: TERM to every group (the
    kill commands of a relay's hosts started together, their ends back in one write), KILL to the groups still
    there after the grace period, then the relay's ssh client of any command left (no group known, or it
    outlived KILL)."""
    wait_pgids(running)
    for sig in ("TERM", "KILL"):
        left = [s for s in running if not s.cmd.done.is_set() and s.err.pgid is not None]
        if not left:
            break
        _signal_together(left, sig)
        _wait_all([s for s in running if not s.cmd.done.is_set()], GRACE_S)
    left = [s for s in running if not s.cmd.done.is_set()]
    for s in left:
        s.tr.link.terminate(s.cmd)
    _wait_all(left, GRACE_S + 2)


def _signal_together(started: list[Started], sig: str) -> None:
    """sig to each command's process group on its host: the kill commands started together, a relay's frames
    back in one write (a group), and waited for together."""
    countdown = Countdown(len(started))
    groups: dict[RelayLink, int] = {}
    killers = []
    for s in started:
        pgid = s.err.pgid
        if pgid is None:  # never here (the callers pass known groups); never a group of 0: the relay's own
            countdown.one_done()
            continue
        link = s.tr.link
        if link not in groups:
            groups[link] = link.group()
        line = remote.kill_line(pgid, sig, sudo=s.sudo)
        try:
            killers.append(link.start(s.tr.through(line), CappedOutput(None, keep=False),
                                      CappedOutput(None, keep=False), session=s.tr.own_session,
                                      on_done=countdown.one_done, group=groups[link]))
        except Exception:  # noqa: BLE001 - a relay lost meanwhile: its commands end with it
            countdown.one_done()
    for link, gid in groups.items():
        try:
            link.control("C", gid)
        except Exception:  # noqa: BLE001 - as above
            pass
    countdown.done.wait(KILL_WAIT_S)
    countdown.done.close()
    for k in killers:
        k.done.close()


def _wait_all(started: list[Started], limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    for s in started:
        s.cmd.done.wait(max(0.0, deadline - time.monotonic()))


def wait_pgids(late: list[Started], limit_s: float = 5.0) -> None:
    """Until each released command's process group id (the first line of its stderr) or its end has come."""
    deadline = time.monotonic() + limit_s
    while any(s.err.pgid is None and not s.cmd.done.is_set() for s in late) and time.monotonic() < deadline:
        time.sleep(0.01)


def connect_fresh(hosts: Sequence[RelayedHost]) -> dict[int, BaseException]:
    """Each host whose master is not up yet logs in, all such hosts at once (then their commands all start at
    once); the index of each host that could not, with why."""
    from fsbench.core.at_once import each

    fresh = [i for i, tr in enumerate(hosts) if not tr.link.connected(tr.host)]
    return {i: why for i, why in zip(fresh, each([hosts[i] for i in fresh], _connect), strict=True)
            if why is not None}


def _connect(tr: RelayedHost) -> BaseException | None:
    try:
        tr.connect()
    except Exception as exc:  # noqa: BLE001 - that host's own result
        return exc
    return None
