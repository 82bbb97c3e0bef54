"""The seconds of each of fsbench's own steps of a case (raw/<case>/phases.json): what the case cost outside
its tool, step by step (folders, staging, cache drops, side jobs, fetch, clean-up, parse). bench/host_scale.py
reads them per host count: a step that grows with the hosts is a serial step to find."""

from __future__ import annotations

import json
import time
from pathlib import Path


class CasePhases:
    """Marks the end of each step; a step's time is the time since the previous mark (added up if repeated)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._mark = time.monotonic()

    def restart(self) -> None:
        """The case begins now."""
        self._mark = time.monotonic()

    def end(self, step: str) -> None:
        """The step that ends now took the time since the last one ended."""
        now = time.monotonic()
        self.seconds[step] = round(self.seconds.get(step, 0.0) + now - self._mark, 4)
        self._mark = now

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "phases.json").write_text(json.dumps(self.seconds, indent=1) + "\n")
