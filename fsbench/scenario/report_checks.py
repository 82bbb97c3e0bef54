"""Checks of `report.views` that need the rest of the scenario: a view's tool, metrics, swept parameter and
value must be ones its workloads can give, or the view would show nothing, silently, after the run."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from fsbench.api.tools import declarations
from fsbench.collectors import COLLECTORS
from fsbench.config.yamllines import LineMap
from fsbench.core.errors import Issue
from fsbench.core.tidy import METRIC_UNITS
from fsbench.tools import TOOLS

if TYPE_CHECKING:
    from fsbench.scenario.model import Scenario


def check_views(sc: Scenario, lm: LineMap, variables: dict | None = None) -> list[Issue]:
    """Issues of each view in `report.views` (workload names are checked with the other references).

    `variables`: the scenario's own `variables:` section, so that a value swept only at another
    setting of a `by:` variable (seed 002's 100 clients, absent at scale=smoke) is not an error: the
    report then says there is no case at that value.
    """
    issues: list[Issue] = []
    if not sc.report.views:
        return issues
    # the collector kinds whose rows a view may name as its `tool` (juicefs-stats); imported only then
    side = {k.tool: k for k in COLLECTORS if k.tool} if any(v.get("tool") for v in sc.report.views) else {}
    for i, view in enumerate(sc.report.views):
        path = ("report", "views", i)
        ref = view.get("reference")
        if ref and ref not in ("best", "baseline") and ref not in sc.targets:
            issues.append(lm.issue(path + ("reference",), f"reference {ref!r} is no target of this scenario",
                                   _hint(str(ref), ["best", "baseline", *sc.targets])))
        names = [n for n in (view.get("workloads") or [view.get("workload")]) if n in sc.workloads]
        if not names:
            continue
        tool_name = view.get("tool")
        if tool_name and tool_name not in side and tool_name not in TOOLS.names():
            known = [*side, *TOOLS.names()]
            issues.append(lm.issue(path + ("tool",), f"unknown tool {tool_name!r}", _hint(str(tool_name), known)))
            continue
        plugins = [side[tool_name] if tool_name in side else TOOLS.get(tool_name) if tool_name
                   else TOOLS.get(sc.workloads[n].tool) for n in names if tool_name or sc.workloads[n].tool in TOOLS]
        vocabulary: set[str] = set()
        for p in plugins:  # the view's own tools: nnbench's late_maps is no metric of a fio view
            vocabulary |= set(declarations(p).measures or METRIC_UNITS) | set(declarations(p).metrics)
        for k, metric in enumerate(view.get("metrics") or []):
            if metric not in vocabulary:
                gives = ", ".join(dict.fromkeys(p.name for p in plugins))
                issues.append(lm.issue(path + ("metrics", k), f"{gives} gives no metric {metric!r}",
                                       _hint(str(metric), sorted(vocabulary))))
        if view.get("param"):
            issues += _param_issues(sc, lm, path, view, names, variables or {})
    return issues


def _param_issues(sc: Scenario, lm: LineMap, path: tuple, view: dict, names: list[str], variables: dict) -> list[Issue]:
    """The parameter must be swept by the view's workloads, the value one of its values (at some setting)."""
    param = str(view["param"])
    swept = {n: _axes(sc.workloads[n].sweep) for n in names}
    unswept = [n for n, axes in swept.items() if param not in axes]
    if unswept:
        axes = sorted({a for ax in swept.values() for a in ax})
        return [lm.issue(path + ("param",), f"{', '.join(unswept)} does not sweep {param!r}",
                         f"swept: {', '.join(axes)}" if axes else "sweep it under the workload's `sweep:`")]
    if view.get("value") is None:
        return []
    value = str(view["value"])
    possible: list[str] = []
    for n in names:
        now = swept[n][param]
        possible += [str(v) for v in now] + _elsewhere(now, sc.variables, variables)
    if value in possible:
        return []
    return [lm.issue(path + ("value",), f"{param}={value} is not among the values {', '.join(names)} sweeps",
                     f"{param}: {', '.join(dict.fromkeys(possible))}")]


def _axes(sweep) -> dict[str, list]:
    return {**dict(sweep.product), **dict(sweep.zip)}


def _elsewhere(now: list, values: dict, declared: dict) -> list[str]:
    """The values a sweep axis takes at the other settings of the `by:` variables it comes from."""
    out: list[str] = []
    for name, spec in declared.items():
        if not isinstance(spec, dict) or "by" not in spec:
            continue
        current = values.get(name)
        if current == now or (not isinstance(current, list) and current in now):
            for key, option in spec.items():
                if key != "by":
                    out += [str(v) for v in (option if isinstance(option, list) else [option])]
    return out


def _hint(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return (f"did you mean {close[0]!r}? " if close else "") + f"known: {', '.join(known)}"
