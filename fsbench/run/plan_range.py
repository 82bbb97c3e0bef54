"""The range of a plan's adaptive repetitions, from the scenario alone (`fsbench plan` prints it without
loading the modules that show each case's commands)."""

from __future__ import annotations

from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case


def adaptive_range(sc: Scenario, cases: list[Case]) -> str:
    """'adaptive repetitions: 12 to 40 cases, 1.2 to 4.0 min ...' for a plan; '' when every count is fixed."""
    def spec(c: Case):
        return sc.workloads[c.workload].repetitions or sc.settings.repetitions

    if not any(spec(c).adaptive for c in cases):
        return ""
    least = [c for c in cases if c.repetition <= spec(c).min]
    groups: dict[tuple, list[Case]] = {}
    for c in cases:
        groups.setdefault((c.target, c.workload, tuple(c.params.items())), []).append(c)
    most = 0.0
    for group in groups.values():
        s = spec(group[0])
        whole = sum(c.estimate_s for c in group)
        # a budget stops the repetitions before one would overrun it, never below the minimum
        floor = sum(c.estimate_s for c in group if c.repetition <= s.min)
        most += max(floor, min(whole, s.budget_s)) if s.budget_s else whole
    kinds = sorted({spec(c).describe() for c in cases if spec(c).adaptive})
    return (f"adaptive repetitions ({'; '.join(kinds)}): {len(least)} to {len(cases)} cases, "
            f"{sum(c.estimate_s for c in least) / 60:.1f} to {most / 60:.1f} min estimated")
