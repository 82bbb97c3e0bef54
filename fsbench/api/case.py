"""One case of a plan: the unit every tool builds, the runner runs and the report groups."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    """One tool run on one target with one set of parameters."""

    case_id: str
    index: int
    target: str
    workload: str
    tool: str
    repetition: int
    params: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    jobs: dict[str, Any] = field(default_factory=dict)
    job_file_text: str | None = None
    hosts: tuple[str, ...] = ("local",)
    estimate_s: float = 0.0
    timeout_s: float = 600.0
    job_file: str | None = None
    #: the data folder shared with the target's other cases of this dataset ("": the case's own folder)
    dataset: str = ""
    #: an untimed, unmonitored layout pass runs first (the tool's prepare step)
    prepare: bool = False
    #: caches dropped on every involved host before the measured run
    drop_caches: bool = False
    #: the dataset's files are removed first (untimed): the case writes them, and a write measurement
    #: writes new files, not over what an earlier case (its own previous repetition) left
    fresh: bool = False
    #: the target client's own cache folders emptied (client unmounted) before the measured run
    drop_client_cache: bool = False
    #: what the drop writes to /proc/sys/vm/drop_caches: 1 the page cache, 3 also dentries and inodes
    drop_level: int = 3

    def label(self) -> str:
        """'tmpfs · seq-write numjobs=4 · rep 1' for progress lines."""
        params = " ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.target} · {self.workload}{' ' + params if params else ''} · rep {self.repetition}"
