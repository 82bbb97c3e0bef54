"""The transport interface every host connection implements."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol, runtime_checkable

from fsbench.core.errors import CommandResult

TAIL_BYTES = 4000


@runtime_checkable
class Transport(Protocol):
    """Run commands and move files on one host; every call has a timeout or a cancel event."""

    host: str

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

    def workdir(self, raw_dir: Path) -> str:
        """A directory on the host where a case's tool runs and writes its output files."""
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


def tail(data: bytes, limit: int = TAIL_BYTES) -> str:
    """The last `limit` bytes of output, decoded for messages."""
    return data[-limit:].decode(errors="replace")
