"""Progress for long runs: case i of N, target and workload, elapsed and ETA."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from fsbench.core.events import Event


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Listens to runner events; redraws one line on a terminal, prints plain lines otherwise."""

    def __init__(self, stream: TextIO | None = None, mode: str = "auto"):
        self.out = stream or sys.stderr
        self.tty = mode == "auto" and self.out.isatty()
        self.quiet = mode == "none"
        self.start = time.monotonic()
        self.estimate_left = 0.0
        self.estimated_done = 0.0
        self.actual_done = 0.0

    def eta(self) -> float:
        """Remaining estimate, corrected by how the estimates compared with reality so far."""
        ratio = self.actual_done / self.estimated_done if self.estimated_done else 1.0
        return self.estimate_left * ratio

    def __call__(self, ev: Event) -> None:
        if ev.kind == "run_start":
            self.start = time.monotonic()
            self.estimate_left = ev.data.get("estimate_s", 0.0)
            self._line(f"fsbench: {ev.total} cases, estimated {_clock(self.estimate_left)}; "
                       f"run directory {ev.data.get('run_dir')}", final=True)
        elif ev.kind == "case_start":
            elapsed = time.monotonic() - self.start
            self._line(f"[{ev.index}/{ev.total}] {ev.case.label()}  elapsed {_clock(elapsed)}  "
                       f"ETA {_clock(self.eta())}", final=not self.tty)
        elif ev.kind == "case_end":
            self.estimate_left = max(0.0, self.estimate_left - ev.case.estimate_s)
            self.estimated_done += ev.case.estimate_s
            self.actual_done += ev.duration_s
            if ev.status != "ok":
                first = (ev.message or "").splitlines()[0:1]
                self._line(f"[{ev.index}/{ev.total}] {ev.case.case_id}: {ev.status.upper()}"
                           f"{': ' + first[0] if first else ''}", final=True)
        elif ev.kind in ("target_setup", "target_teardown", "prepare"):
            self._line(f"  {ev.kind.replace('_', ' ')}: {ev.message}", final=not self.tty)
        elif ev.kind == "warning":
            self._line(f"warning: {ev.message}", final=True)
        elif ev.kind == "run_end":
            counts = ", ".join(f"{n} {s}" for s, n in sorted(ev.data.get("counts", {}).items()))
            self._line(f"fsbench: run {ev.status} in {_clock(time.monotonic() - self.start)} ({counts})",
                       final=True)

    def _line(self, text: str, final: bool) -> None:
        if self.quiet:
            return
        if self.tty:
            self.out.write("\r\x1b[2K" + text + ("\n" if final else ""))
        else:
            self.out.write(text + "\n")
        self.out.flush()
