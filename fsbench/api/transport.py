"""The transport contract: how fsbench reaches a host (`Transport`), and a transport plug-in (`TransportKind`).

A transport plug-in (`local`, `ssh`, or a package's, entry point group fsbench.transports) makes the
transports of all its hosts at once; each transport runs commands and moves files on one host. What the
runner needs of a host beyond that is part of the contract too: where its work folders live
(`remote_base`), whether it was given up (`dead`), the run's marker in every command (`mark`), the
output cap (`cap_output`), and a case's work folder named by the runner (`workdir(raw_dir, name)`).
fsbench ships a scripted one for tests (fsbench.transport.fake).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from fsbench.core.errors import CommandResult

TAIL_BYTES = 4000
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]")


@runtime_checkable
class Transport(Protocol):
    """Run commands and move files on one host; every call has a timeout or a cancel event."""

    @property
    def host(self) -> str:
        """The host's name in the scenario."""
        ...

    @property
    def remote_base(self) -> str | None:
        """The folder on the host that holds this transport's work folders, <base>/<run id>/... (removed at
        the run's end); None where there is none (this machine: a tool runs in the run directory itself)."""
        ...

    @property
    def dead(self) -> str | None:
        """Why the host was given up for the rest of the run (it stopped answering); None while it answers."""
        ...

    def mark(self, marker: Mapping[str, str]) -> None:
        """Put these variables into the environment of every command from now on (the run's marker, by which
        fsbench later finds the processes it started: fsbench.run.leftovers)."""
        ...

    def cap_output(self, cap: int) -> None:
        """Keep at most `cap` bytes of each output stream of one command (the scenario's settings.output_cap)."""
        ...

    def run(
        self,
        argv: list[str],
        *,
        cwd: str | None = None,
        timeout: float | None = 60.0,
        env: dict[str, str] | None = None,
        stdout_path: Path | None = None,
        stderr_path: Path | None = None,
        cancel: threading.Event | None = None,
    ) -> CommandResult:
        """Run argv; stream stdout/stderr to local files when given, else capture them in the result."""
        ...

    def workdir(self, raw_dir: Path, name: str) -> str:
        """A fresh, empty folder on the host where a case's tool runs and writes its output files: raw_dir
        itself on this machine, else <remote_base>/<name>; name comes from work_name(run, case, host)."""
        ...

    def put_text(self, path: str, text: str) -> None:
        """Write a text file on the host."""
        ...

    def put_file(self, local: Path, path: str, mode: int | None = None) -> None:
        """Upload a local file (binary safe), optionally setting its mode."""
        ...

    def fetch(self, path: str, local: Path) -> bool:
        """Copy a file or a folder from the host into the raw directory; False when it does not exist."""
        ...

    def makedirs(self, path: str) -> None:
        """Create a directory and its parents on the host."""
        ...

    def remove_tree(self, path: str) -> None:
        """Remove a directory tree on the host (missing is fine)."""
        ...

    def is_dir(self, path: str) -> bool:
        """Whether path is an existing directory on the host."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class HostEntry(Protocol):
    """What a transport plug-in reads of a scenario's host (fsbench.scenario.model.Host satisfies it)."""

    @property
    def name(self) -> str: ...


@runtime_checkable
class TransportKind(Protocol):
    """A transport plug-in: `local`, `ssh`, or a package's (entry point group fsbench.transports)."""

    @property
    def name(self) -> str: ...

    def make_all(self, hosts: Sequence[HostEntry], inventory: dict[str, Any]) -> Mapping[str, Transport]:
        """The transports of all the scenario's hosts of this kind at once (SSH jump hosts share one
        connection), by host name; inventory is the scenario's (host name -> fsbench.core.inventory.HostSpec)."""
        ...


def work_name(run_id: str, case_id: str, host: str) -> str:
    """A case's work folder below a host's remote_base: <run>/<case>/<host> (hosts that share a remote_base,
    an NFS home or loopback addresses, each get their own), each part safe as one folder name."""
    return "/".join(_safe(p) for p in (run_id, case_id, host))


def _safe(part: str) -> str:
    part = _UNSAFE.sub("_", part)
    return part if part.strip(".") else f"_{part}"


def tail(data: bytes, limit: int = TAIL_BYTES) -> str:
    """The last `limit` bytes of output, decoded for messages."""
    return data[-limit:].decode(errors="replace")
