"""A CPU quota on a set of processes and everything they start afterwards (a slow host in the lab).

cgroup v2 (`cpu.max`) where the machine mounts it at /sys/fs/cgroup, else the v1 cpu controller
(`cpu.cfs_quota_us`), as this machine kind has. The group is made for the quota and removed after it, its
processes moved back to the root group first."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

V2 = Path("/sys/fs/cgroup")
V1 = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 100_000


def _hierarchy() -> tuple[Path, bool]:
    if (V2 / "cgroup.controllers").exists() and "cpu" in (V2 / "cgroup.controllers").read_text().split():
        return V2, True
    if (V1 / "cpu.cfs_quota_us").exists():
        return V1, False
    raise RuntimeError("no cgroup cpu controller on this machine (neither v2's cpu.max nor v1's cpu.cfs_quota_us)")


def _move(procs: Path, pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, OSError):  # gone meanwhile
            procs.write_text(f"{pid}\n")


@contextlib.contextmanager
def throttled(pids: Callable[[], list[int]], share: float, name: str, follow: float = 0.0) -> Iterator[Path]:
    """The processes pids() gives (and their later children) limited to `share` of one CPU while inside;
    with `follow` (seconds), pids() is asked again that often, so processes started later are caught too."""
    root, v2 = _hierarchy()
    group = root / f"fsbench-test-{name}-{os.getpid()}"
    group.mkdir()
    try:
        quota = max(1000, int(share * PERIOD_US))
        if v2:
            (root / "cgroup.subtree_control").write_text("+cpu")
            (group / "cpu.max").write_text(f"{quota} {PERIOD_US}\n")
        else:
            (group / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
            (group / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        _move(group / "cgroup.procs", pids())
        done = threading.Event()

        def chase() -> None:
            while not done.wait(follow):
                try:
                    found = pids()
                except OSError:  # a process ended while pids() looked at it: look again at the next turn
                    continue
                _move(group / "cgroup.procs", found)

        chaser = threading.Thread(target=chase, daemon=True) if follow else None
        if chaser:
            chaser.start()
        try:
            yield group
        finally:
            done.set()
            if chaser:
                chaser.join(timeout=5)
    finally:
        for _ in range(3):  # processes forked while moving land in the group too
            left = [int(p) for p in (group / "cgroup.procs").read_text().split()]
            if not left:
                break
            _move(root / "cgroup.procs", left)
        group.rmdir()
