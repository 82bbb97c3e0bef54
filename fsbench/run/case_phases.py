"""The seconds of each of fsbench's own steps of a case (raw/<case>/phases.json): what the case cost outside
its tool, step by step (folders, staging, cache drops, side jobs, fetch, clean-up, parse), and the CPU seconds
fsbench's own process spent meanwhile (every thread, no child: not the tools, nor mpirun or fio --client), under
CPU_KEY (a run's first case may also carry up to about 0.3 s of the background import of the report's
libraries, fsbench.core.warmup). bench/host_scale.py reads them per host count: a step that grows with the hosts
is a serial step to find, and the CPU is what the controller itself pays for the case's hosts."""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path

#: phases.json's key of fsbench's own CPU seconds during the case (not a step: the steps are wall time)
CPU_KEY = "fsbench cpu"


def _own_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


class CasePhases:
    """Marks the end of each step; a step's time is the time since the previous mark (added up if repeated)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._mark = time.monotonic()
        self._cpu = _own_cpu()

    def restart(self) -> None:
        """The case begins now."""
        self._mark = time.monotonic()
        self._cpu = _own_cpu()

    def end(self, step: str) -> None:
        """The step that ends now took the time since the last one ended."""
        now = time.monotonic()
        self.seconds[step] = round(self.seconds.get(step, 0.0) + now - self._mark, 4)
        self._mark = now

    def write(self, folder: Path) -> None:
        """The steps' seconds, and the process's CPU seconds since the case began."""
        folder.mkdir(parents=True, exist_ok=True)
        shown = {**self.seconds, CPU_KEY: round(_own_cpu() - self._cpu, 4)}
        (folder / "phases.json").write_text(json.dumps(shown, indent=1) + "\n")
