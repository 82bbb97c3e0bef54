"""Adaptive repetitions during a run: whether a case beyond the minimum is needed, and repetitions.csv."""

from __future__ import annotations

import csv

from fsbench.core.csv_cells import guard_row
from fsbench.run.records import Records
from fsbench.run.store import STATUS_OK
from fsbench.scenario import repetitions as reps
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool


class Adaptive:
    """Decides from the ok repetitions' rows (their primary metrics) and durations, as they are recorded."""

    def __init__(self, sc: Scenario, cases: list[Case], records: Records):
        self.sc, self.cases, self.records = sc, cases, records

    def spec(self, case: Case) -> reps.Repetitions:
        return self.sc.workloads[case.workload].repetitions or self.sc.settings.repetitions

    def group(self, case: Case) -> list[Case]:
        """The repetitions of the case's target, workload and sweep point, in order."""
        return [c for c in self.cases if (c.target, c.workload, c.params) == (case.target, case.workload, case.params)]

    def judged(self, group: list[Case], spec: reps.Repetitions) -> reps.Decision:
        """The decision after the group's ok repetitions (from their parsed rows and durations)."""
        by_id = self.records.by_id
        ok = [c for c in group if by_id[c.case_id]["status"] == STATUS_OK]
        spent = sum(float(by_id[c.case_id]["duration_s"] or 0) for c in ok)
        primary = get_tool(group[0].tool).primary_metrics
        values = reps.primary_values([self.records.rd.case_rows(c.case_id) for c in ok], primary)
        return reps.decide(spec, len(ok), spent, values, self.sc.settings.exclude_warmup)

    def decision(self, case: Case) -> reps.Decision | None:
        """Whether an adaptive repetition beyond the minimum is needed (None: not an adaptive one)."""
        spec = self.spec(case)
        if not spec.adaptive or case.repetition <= spec.min:
            return None
        earlier = [c for c in self.group(case) if c.repetition < case.repetition]
        return self.judged(earlier, spec)

    def write_csv(self) -> None:
        """repetitions.csv: per case point, how many repetitions ran and why they stopped (adaptive runs)."""
        if not any(self.spec(c).adaptive for c in self.cases):
            return
        rows, seen = [], set()
        for c in self.cases:
            key = (c.target, c.workload, tuple(c.params.items()))
            if key in seen:
                continue
            seen.add(key)
            group, spec = self.group(c), self.spec(c)
            d = self.judged(group, spec)
            ok = sum(1 for g in group if self.records.by_id[g.case_id]["status"] == STATUS_OK)
            stop = d.stop if not d.more else "incomplete"
            rows.append({"target": c.target, "workload": c.workload,
                         "point": " ".join(f"{k}={v}" for k, v in c.params.items()), "min": spec.min,
                         "max": spec.max, "target_ci": spec.target_ci if spec.adaptive else "", "repetitions": ok,
                         "stop": stop, "ci": "" if d.widest != d.widest else round(d.widest, 6),
                         "detail": d.detail})
        with (self.records.rd.path / "repetitions.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, list(rows[0]))
            w.writeheader()
            w.writerows(guard_row(r) for r in rows)
