"""What the report reads of a run's scenario.yaml, through the scenario's own declarations (each key's
checks and defaults: fsbench/scenario/model.py), and the views a tool gets without `report.views`."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from fsbench.api.tools import declarations
from fsbench.config import schema as s
from fsbench.config.yamllines import LineMap
from fsbench.core.errors import Issue
from fsbench.kinds import KINDS
from fsbench.report.rows import RunView, main_stat, params_of, row_keys, shown
from fsbench.scenario.model import USE_CASE_KEYS, Report, Sweep, Target, Workload
from fsbench.scenario.sections import report_settings, sections


@dataclass
class RunScenario:
    """The parts of a run's scenario the report shows, with the scenario's defaults filled in."""

    name: str
    description: str
    use_case: dict[str, str]
    targets: dict[str, Target]
    workloads: dict[str, Workload]
    report: Report
    variables: dict = field(default_factory=dict)

    @property
    def baseline(self) -> str:
        """The target marked baseline, else the first."""
        marked = [n for n, t in self.targets.items() if t.baseline]
        return marked[0] if marked else next(iter(self.targets), "")

    def client_processes(self) -> dict[str, str]:
        """target -> the process that serves it on its hosts (its own setting, else its kind's)."""
        out = {}
        for name, t in self.targets.items():
            proc = t.client_process or (KINDS.get(t.kind).client_process if t.kind in KINDS else "")
            if proc:
                out[name] = str(proc)
        return out


def read_scenario(data: dict, file: str = "scenario.yaml") -> RunScenario:
    """A run's resolved scenario data as the report needs it; each target and workload checked by the
    scenario's own declarations (a part that no longer checks, from an older fsbench, is read as it is)."""
    parts = sections()
    lm = LineMap(file)

    def checked(part: str, value: object, path: tuple) -> dict:
        issues: list[Issue] = []
        got = parts[part](value or {}, path, lm, issues)
        return got if isinstance(got, dict) and not issues else dict(value) if isinstance(value, dict) else {}

    targets = {}
    for n, t in (data.get("targets") or {}).items():
        c = checked("target", t, ("targets", n))
        targets[str(n)] = s.build(Target, {k: v for k, v in c.items() if k != "settings"}, name=str(n))
    workloads = {}
    for n, w in (data.get("workloads") or {}).items():
        c = checked("workload", w, ("workloads", n))
        workloads[str(n)] = s.build(Workload, c, name=str(n), sweep=s.build(Sweep, c.get("sweep") or {}))
    use_case = data.get("use_case") or {}
    return RunScenario(str(data.get("name") or ""), str(data.get("description") or ""),
                       {k: str(v) for k, v in use_case.items() if v and k in USE_CASE_KEYS} if isinstance(
                           use_case, dict) else {},
                       targets, workloads, report_settings(data, file), dict(data.get("variables") or {}))


def default_views(rv: RunView, workloads: list[str]) -> list[dict]:
    """Without `report.views`: each workload in the shape its tool declares, its sweep decides the rest."""
    out: list[dict] = []
    for w in workloads:
        df = rv.rows([w])
        if df.empty:
            continue
        swept = [p.removeprefix("param_") for p in params_of(main_stat(df))]
        tool = rv.tools.get(w)
        declared = list(declarations(tool).views)
        if len(swept) == 1:
            out.append({"view": "by_value", "workload": w, "param": swept[0], "resources": True})
            values = pd.to_numeric(df[f"param_{swept[0]}"], errors="coerce")
            if values.notna().all() and values.nunique() >= 2:
                # a chart per target only when it has several lines (operations, jobs) to hold: with one,
                # a chart per target is one line each, and one chart with a line per target compares them
                one = len(row_keys(shown(main_stat(df), tool, {}), tool, {})) <= 1
                out.append({"view": "chart", "workload": w, "param": swept[0], "per": "operation" if one else "target"})
        else:
            table = {"view": "table", "workload": w, "resources": True, "chart": True}
            if declarations(tool).columns:  # the tool's own table: juicefs bench's ITEM | VALUE | COST
                table["columns"] = "metrics"
            out.append(table)
        out += [{"view": v, "workload": w} for v in declared if v != "table"]
        # what collectors measured beside it (juicefs profile's totals, juicefs stats' means), in their columns
        beside = rv.summary[rv.summary["workload"] == w] if not rv.summary.empty else rv.summary
        for side in (t for t in rv.side_tools if not beside.empty and (beside["tool"] == t).any()):
            out.append({"view": "table", "workload": w, "tool": side, "resources": False, "columns": "metrics"})
    return out
