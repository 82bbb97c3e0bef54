"""raw/<case>/phases.json: each step's wall seconds, and fsbench's own CPU seconds during the case."""

from __future__ import annotations

import json
import time

from fsbench.run.case_phases import CPU_KEY, CasePhases


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_repeated_step_adds_up_and_the_case_cpu_is_counted_from_its_start(tmp_path) -> None:
    phases = CasePhases()
    _spin(0.4)  # before the case: not its CPU
    phases.restart()
    time.sleep(0.05)
    phases.end("stage")
    _spin(0.1)
    phases.end("clean-up")
    time.sleep(0.05)
    phases.end("stage")
    phases.write(tmp_path / "case")
    shown = json.loads((tmp_path / "case" / "phases.json").read_text())
    assert set(shown) == {"stage", "clean-up", CPU_KEY}
    assert shown["stage"] >= 0.1  # two sleeps of 0.05 s
    assert 0.1 <= shown["clean-up"] < 0.5
    assert 0.1 <= shown[CPU_KEY] < 0.35  # the spin in the case, not the one before it
