"""Long commands on many hosts at once (a case's samplers, fio's servers): started together, stopped together.

A transport kind that can (ssh-relay: `start_streams`, fsbench.transport.relay_streams) starts every one of its
hosts' commands from the caller's thread and stops them in one step. Every other host's command runs in a
thread of its own until a shared cancel stops it (its transport stops the command's process group), as each
sampler and server did before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fsbench.api.transport import Transport
from fsbench.core.cancel import Cancel
from fsbench.core.errors import CommandResult

#: how long stop() waits for the threads of commands stopped by the cancel
STOP_S = 20.0


@dataclass(frozen=True)
class Stream:
    """One host's long command: its output goes to these files as it comes, or up to `lag_s` seconds later when
    the transport can gather many hosts' output into fewer packets that way (a sampler's samples carry their own
    clock; None: as soon as the transport sends it). `env`: values for the command (secrets among them), which
    the transport's run() passes its own way (never on the command line): such a command runs in a thread of its
    own."""

    host: str
    transport: Transport
    argv: list[str]
    stdout_path: Path | None
    stderr_path: Path | None
    lag_s: float | None = None
    env: dict[str, str] | None = None


class StreamGroup(Protocol):
    """What a transport kind's `start_streams` returns for its hosts' commands."""

    def alive(self, i: int) -> bool: ...
    def ended(self) -> list[int]: ...
    def result(self, i: int) -> CommandResult | BaseException | None: ...
    def stop(self) -> None: ...


class Streams:
    """The commands of `streams`, each running until it ends or `stop()`; their results once they ended."""

    def __init__(self, streams: Sequence[Stream], *, timeout: float | None, name: str = "fsbench-stream"):
        self.streams = list(streams)
        kinds: dict[Callable[..., StreamGroup], list[int]] = {}
        for i, s in enumerate(self.streams):
            starter = getattr(type(s.transport), "start_streams", None)
            if starter is not None and not s.env:
                kinds.setdefault(starter, []).append(i)
        # each stream's group and its index there; (None, -1): a thread of its own
        self._where: list[tuple[Any, int]] = [(None, -1)] * len(self.streams)
        self._groups: list[tuple[StreamGroup, list[int]]] = []
        for starter, members in kinds.items():
            group = starter([(self.streams[i].transport, list(self.streams[i].argv), self.streams[i].stdout_path,
                              self.streams[i].stderr_path, self.streams[i].lag_s) for i in members])
            self._groups.append((group, members))
            for at, i in enumerate(members):
                self._where[i] = (group, at)
        self._cancel = Cancel()
        self._stop_lock = threading.Lock()
        self._late: list[str] | None = None
        self._threads: dict[int, threading.Thread] = {}
        self._results: dict[int, CommandResult | BaseException] = {}
        self._ended: list[int] = []  # the threads' commands that ended, in the order they did
        for i, s in enumerate(self.streams):
            if self._where[i][0] is None:
                t = threading.Thread(target=self._run, args=(i, timeout), name=f"{name}-{s.host}", daemon=True)
                self._threads[i] = t
                t.start()

    def _run(self, i: int, timeout: float | None) -> None:
        s = self.streams[i]
        try:
            self._results[i] = s.transport.run(list(s.argv), timeout=timeout, stdout_path=s.stdout_path,
                                               stderr_path=s.stderr_path, cancel=self._cancel, env=s.env or None)
        except Exception as exc:  # noqa: BLE001 - that host's own result (a host lost: the case says so)
            self._results[i] = exc
        finally:
            self._ended.append(i)

    def alive(self, i: int) -> bool:
        """Whether the i-th command still runs."""
        group, at = self._where[i]
        if group is not None:
            return bool(group.alive(at))
        return self._threads[i].is_alive()

    def ended(self) -> list[int]:
        """The commands that ended (or could not start): as many looks as have ended, not one per command, since
        a wait for 1,000 servers' ports asks at every retry."""
        return [*self._ended, *(members[at] for group, members in self._groups for at in group.ended())]

    def result(self, i: int) -> CommandResult | None:
        """The i-th command's result once it ended; one that could not run is a failed result saying why."""
        group, at = self._where[i]
        got = group.result(at) if group is not None else (None if self._threads[i].is_alive()
                                                          else self._results.get(i))
        if isinstance(got, BaseException):
            return CommandResult.not_run(self.streams[i].host, self.streams[i].argv, got)
        return got

    def stop(self) -> list[str]:
        """Stop every command still running (each kind's hosts together); the hosts whose command outlived its
        stop, for a warning. From any thread, any number of times: the first call stops, the others wait for it."""
        with self._stop_lock:
            if self._late is None:
                self._late = self._stop()
            return self._late

    def _stop(self) -> list[str]:
        self._cancel.set()
        for group, _members in self._groups:
            group.stop()
        deadline = time.monotonic() + STOP_S
        for t in self._threads.values():
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        late = [self.streams[i].host for i in range(len(self.streams)) if self.alive(i)]
        if not any(t.is_alive() for t in self._threads.values()):  # no command's loop waits on the cancel now
            self._cancel.close()
        return late
