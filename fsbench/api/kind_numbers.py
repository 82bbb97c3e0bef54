"""The optional hooks through which a target kind helps vouch for the numbers measured on it (fsbench.validity):
its client's own count of metadata-engine requests, and the delay of its write-back. Listed in KIND_HOOKS
(fsbench.api.kinds), whose signature checks cover them like every other hook."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class CountsMetaRequests(Protocol):
    """A kind whose client counts the requests it sends to its metadata engine in a file at the mount's root:
    (the file's name, the prefix of its `PREFIX<what> <count>` lines), read by tools around each call
    (metabench's `--counters`) to tell a call the engine served from one a cache served."""

    @property
    def meta_counters(self) -> tuple[str, str]: ...


@runtime_checkable
class WritesBack(Protocol):
    """A kind whose client uploads written data some seconds after a file's close (rclone's VFS write-back):
    the validity watch waits that long for the store's counters to move before it calls a write quiet."""

    def write_back_s(self, target: Any) -> float:
        """Seconds between a file's close and its upload (0: none)."""
        ...
