"""A relayed command's start and end, and a step's commands on many relayed hosts started and waited for together.

Why: through a relay a host's command is a frame, yet each host of a step still had a thread of the runner's
fan-out that built its frame, waited for its end and made its result: about 0.3 ms of the controller's CPU a
host and step (measured in session 26 at 16 hosts), more than the frame itself. `run_together` starts every
host's command of a step from the caller's thread (their frames leave together, a relay's in one write),
waits for all of their ends at once, and makes the results: no thread a host. Only a command that overruns its
timeout or is cancelled is stopped host by host (its process group, as RelayedTransport.execute stops it).

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
from fsbench.transport.relay_link import Relayed, RelayLink
from fsbench.transport.ssh_exec import command_result


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
    def _stop_relayed(self, cmd: Relayed, err: remote.PgidFilter, sudo: bool) -> None: ...

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
    from fsbench.core.at_once import each

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
        wait_pgids([started[i] for i in late])
        each(late, lambda i: started[i].tr._stop_relayed(started[i].cmd, started[i].err, started[i].sudo))
    return [failed[i] if i in failed else finish(started[i], outcome if i in late else "exit")
            for i in range(len(items))]


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
