"""Expand a scenario into cases: target x workload x sweep point x repetition, with stable ids."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from fsbench.scenario.model import Scenario


@dataclass(frozen=True)
class Case:
    """One tool run on one target with one set of parameters."""

    case_id: str
    index: int
    target: str
    workload: str
    tool: str
    repetition: int
    params: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    jobs: dict = field(default_factory=dict)
    job_file_text: str | None = None
    hosts: tuple[str, ...] = ("local",)
    estimate_s: float = 0.0
    timeout_s: float = 600.0

    def label(self) -> str:
        """'tmpfs · seq-write numjobs=4 · rep 1' for progress lines."""
        params = " ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.target} · {self.workload}{' ' + params if params else ''} · rep {self.repetition}"


_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]+")


def case_id_for(target: str, workload: str, params: dict, repetition: int) -> str:
    """A readable id, stable across runs of the same scenario, safe as a folder name."""
    parts = [target, workload] + [f"{k}={v}" for k, v in params.items()] + [f"r{repetition}"]
    cid = _UNSAFE.sub("_", "__".join(str(p) for p in parts))
    if len(cid) > 120:  # keep paths short; the hash keeps it unique
        digest = hashlib.sha1(cid.encode()).hexdigest()[:10]
        cid = cid[:100] + "__" + digest
    return cid


def plan_cases(sc: Scenario) -> list[Case]:
    """Every case in run order: by target (so each is set up once), then workload, sweep, repetition."""
    from fsbench.targets.manager import resolve_hosts
    from fsbench.tools import get_tool

    cases: list[Case] = []
    for target in sc.targets.values():
        for w in sc.workloads.values():
            if w.targets and target.name not in w.targets:
                continue
            tool = get_tool(w.tool)
            reps = w.repetitions or sc.settings.repetitions
            for point in w.sweep.points():
                options = {**w.options, **point}
                estimate = tool.estimate_seconds(options, w.job_file_text, w.jobs)
                timeout = w.timeout_s or sc.settings.case_timeout_s or max(120.0, estimate * 3 + 60)
                hosts = resolve_hosts(sc, target.hosts)
                for rep in range(1, reps + 1):
                    cases.append(Case(
                        case_id_for(target.name, w.name, point, rep), len(cases) + 1, target.name, w.name,
                        w.tool, rep, dict(point), options, dict(w.jobs), w.job_file_text, tuple(hosts), estimate, timeout,
                    ))
    return cases
