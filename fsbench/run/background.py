"""Commands that run in the background on hosts during a case (fio --server), stopped afterwards."""

from __future__ import annotations

import functools
import socket
import time
from collections.abc import Callable
from pathlib import Path

from fsbench.api.streams import Stream, Streams
from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.core.errors import CommandResult

PORT_WAIT_S = 20.0
#: the first pause between looks at a port that does not listen yet, doubled up to the last
POLL_FIRST_S, POLL_MAX_S = 0.005, 0.1


class Background:
    """Start a command per host, wait for ports, stop them all (each host's process group)."""

    def __init__(self, commands: dict[str, list[str]], transports: dict[str, Transport],
                 raw_dir: Callable[[str], Path], timeout_s: float, marker: dict[str, str] | None = None):
        self.commands, self.transports, self.raw_dir, self.timeout_s = commands, transports, raw_dir, timeout_s
        # the case's marker, so that a server's own children are stopped with the case: no secret, so it goes on
        # the command line through `env` (as the run's marker does), not through a transport's environment file,
        # which is one more file written over SFTP per host before each server starts
        self.marker = [f"{k}={v}" for k, v in (marker or {}).items()]
        self.streams = Streams([], timeout=None)  # none until start()
        self.results: dict[str, CommandResult] = {}

    def start(self) -> None:
        streams = []
        for host, argv in self.commands.items():
            raw = self.raw_dir(host)
            (raw / "server-command").write_text(" ".join(argv) + "\n")
            marked = ["env", *self.marker, *argv] if self.marker else argv
            streams.append(Stream(host, self.transports[host], marked, raw / "server.out", raw / "server.err"))
        # through relays every host's server starts from here, and all stop in one step (fsbench.api.streams)
        self.streams = Streams(streams, timeout=self.timeout_s, name="fsbench-bg")

    def wait_ports(self, ports: list[tuple[str, int]]) -> str | None:
        """None when every (address, port) accepts a connection, else why not (the first port's reason, in the
        ports' order). Every port is waited for at once: one after the other, each host's round trips and
        retries added up (a 1,000-client fio case waited for its servers in turn)."""
        deadline = time.monotonic() + PORT_WAIT_S
        why = each(ports, functools.partial(self._wait_port, deadline=deadline))
        return next((w for w in why if w), None)

    def _wait_port(self, where: tuple[str, int], deadline: float) -> str | None:
        """None once where accepts a connection; why not when its server (or any other) ended or time is up."""
        address, port = where
        streams = self.streams
        pause = POLL_FIRST_S  # a server listens within milliseconds: the first looks come soon, then back off
        while True:
            try:
                with socket.create_connection((address, port), timeout=2):
                    return None
            except OSError as exc:
                ended = streams.ended()
                if ended or time.monotonic() > deadline:
                    results = [r for r in map(streams.result, ended) if r is not None]
                    why = "; ".join(r.describe() for r in results)
                    said = f": {why}" if why else ""
                    return f"no server listening on {address}:{port} ({exc.strerror or exc}){said}"
                time.sleep(pause)
                pause = min(2 * pause, POLL_MAX_S)

    def stop(self) -> None:
        """Stop every server (each host's process group), then keep their results."""
        self.streams.stop()
        self.results = {h: r for i, h in enumerate(self.commands) if (r := self.streams.result(i)) is not None}
