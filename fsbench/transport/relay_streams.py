"""A case's long commands on many relayed hosts (its samplers, fio's servers): started from one thread, stopped
in one step.

Why: each such command had a thread of its own on the controller for the whole case, and its stop was a kill
command sent and waited for from that thread, host by host: about 1.5 ms of the controller's CPU a host and case
for the samplers and the servers (bench/host_scale.py at 32 hosts, session 28). Here every host's command starts
from the caller's thread and streams its output as before (no group holds its frames: a first sample is awaited
while the case starts). Their stop is relay_steps.stop_all, in one step for every host: the kill commands of a
relay's hosts sent in one go, TERM to each command's process group on its host, KILL to those still there after
the grace period, then the relay's ssh client of any command that is left. The results are
RelayedTransport.execute's own.

They have no timeout of their own: the case's end stops them whatever happened (the runner stops its side jobs
in every case, a failed one too), a sampler also ends itself after its maximum duration, and a controller that
dies ends the relay's program, which stops every ssh client it started.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from pathlib import Path

from fsbench.core.errors import CommandResult
from fsbench.transport import relay_steps
from fsbench.transport.relay_steps import RelayedHost, Started


class RelayStreams:
    """Commands (host, argv, stdout's file, stderr's file, lag) started now; `stop()` ends those still running."""

    def __init__(self, items: Sequence[tuple[RelayedHost, list[str], Path | None, Path | None, float | None]]):
        self._lock = threading.Lock()
        self._stopping = False
        self._stopped = threading.Event()
        self.results: list[CommandResult | BaseException | None] = [None] * len(items)
        self._started: dict[int, Started] = {}
        self._outcome: dict[int, str] = {}
        self._ended: list[int] = []  # in the order they ended (list.append: one step under the GIL)
        # a host whose master is not up (it was lost and is back) logs in first, all such hosts at once
        failed = relay_steps.connect_fresh([item[0] for item in items])
        for i, (tr, argv, out, err, lag) in enumerate(items):
            if i in failed:
                self.results[i] = failed[i]
                self._ended.append(i)
                continue
            try:
                self._started[i] = relay_steps.begin(tr, argv, cwd=None, env=tr.marker or None, sudo=tr.spec.sudo,
                                                     stdout_path=out, stderr_path=err, lag=lag,
                                                     on_done=functools.partial(self._ended.append, i))
            except Exception as exc:  # noqa: BLE001 - that host's own result; the others go on
                self.results[i] = exc
                self._ended.append(i)

    def alive(self, i: int) -> bool:
        s = self._started.get(i)
        return s is not None and not s.cmd.done.is_set()

    def ended(self) -> list[int]:
        return list(self._ended)

    def result(self, i: int) -> CommandResult | BaseException | None:
        """The command's result once it ended (or could not start), else None."""
        with self._lock:
            s = self._started.get(i)
            if self.results[i] is None and s is not None and s.cmd.done.is_set():
                self.results[i] = relay_steps.finish(s, self._outcome.get(i, "exit"))
            return self.results[i]

    def stop(self) -> None:
        """End every command still running, all hosts in one step; from any thread, and at most once."""
        with self._lock:
            first, self._stopping = not self._stopping, True
        if not first:
            self._stopped.wait()
            return
        try:
            running = [i for i in self._started if self.alive(i)]
            for i in running:
                self._outcome[i] = "cancel"
            relay_steps.stop_all([self._started[i] for i in running])
        finally:
            for i in self._started:
                self.result(i)
            self._stopped.set()
