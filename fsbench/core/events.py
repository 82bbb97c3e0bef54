"""Events the runner emits; progress displays and logs subscribe to them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    """Something that happened during a run."""

    kind: str  # run_start, target_setup, target_teardown, prepare, case_start, case_end, warning, run_end
    message: str = ""
    case: Any = None  # fsbench.scenario.plan.Case (events are below the scenario layer)
    index: int = 0
    total: int = 0
    status: str = ""
    duration_s: float = 0.0
    data: dict = field(default_factory=dict)


Listener = Callable[[Event], None]


def ignore(_: Event) -> None:
    """A listener that does nothing."""
