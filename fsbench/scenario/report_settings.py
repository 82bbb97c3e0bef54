"""The scenario's `report:` section: how numbers are judged, and the views (tables, charts) that show them."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.scenario import value_checks as v

#: units a view may show every time in (`time_unit`); `us` is µs for keyboards without it
TIME_UNITS = ("s", "ms", "µs", "us", "ns")
#: the shapes a report view can take (docs/report.md shows each with the seed it comes from)
VIEW_KINDS = ("table", "by_value", "stats", "best", "chart", "at", "checks")


def _view_extra(out: dict, path: tuple, lm, issues: list) -> None:
    kind = out.get("view")
    if not out.get("workload") and not out.get("workloads"):
        issues.append(lm.issue(path, "a view needs `workload:` (or `workloads:` for one table of several)"))
    if kind in ("chart", "at") and not out.get("param"):
        issues.append(lm.issue(path + ("view",), f"a {kind} view needs `param:`, the swept parameter",
                               "e.g. param: numjobs"))
    if kind == "at" and out.get("value") is None:
        issues.append(lm.issue(path + ("view",), "an `at` view needs `value:`, the swept value to show",
                               "e.g. value: 20"))


VIEW = s.Struct({
    "view": s.Key(s.one_of(*VIEW_KINDS), required=True,
                  doc="table: operations x targets (value and ratio); by_value: per swept value, targets x "
                      "metrics; stats: per target Max/Min/Mean/StdDev; best: per operation % of the best; "
                      "chart: metric vs a swept value; at: the values at one swept value; checks: functional "
                      "checks (pass / not supported / failed) x targets"),
    "workload": s.Key(s.string),
    "workloads": s.Key(s.list_of(s.string), doc="several workloads in one table, one block each"),
    "title": s.Key(s.string, default=""),
    "metrics": s.Key(s.list_of(s.string), default=list, doc="default: the tool's primary metrics"),
    "operations": s.Key(s.list_of(s.string), default=list, doc="which operations, in this order"),
    "jobs": s.Key(s.list_of(s.string), default=list,
                  doc="which of the tool's jobs (vdbench run definitions, fio job sections), in this order; "
                      "default: every one, each row named by its job where there are several"),
    "columns": s.Key(s.one_of("targets", "metrics"), default="targets",
                     doc="table, at: metrics: a row per operation and a column per metric of each target (the "
                         "tool's own columns where it declares them: juicefs bench's Value and Cost)"),
    "param": s.Key(s.string, doc="the swept parameter (by_value, chart, at)"),
    "value": s.Key(s.scalar, doc="the swept value (at)"),
    "per": s.Key(s.one_of("target", "operation"), default="target",
                 doc="chart: one chart per target (a line per operation) or per operation (a line per target)"),
    "resources": s.Key(s.boolean, default=True,
                       doc="add each target's client process CPU and peak memory beside the numbers"),
    "chart": s.Key(s.boolean, default=False, doc="table and by_value: also a bar chart of the values"),
    "tool": s.Key(s.string, doc="the rows of another tool than the workload's own, e.g. a collector's "
                                "(juicefs-profile, juicefs-stats)"),
    "reference": s.Key(s.string, doc="best: the target each % is of (a target's name, `baseline`: the report's "
                                     "baseline, or `best`, the default); capped at 100 % as seed 004's "
                                     "Compare against RBD-SSD"),
    "time_unit": s.Key(s.one_of(*TIME_UNITS), doc="table, by_value, at: every time in this unit (seed 000's "
                                                 "table: µs per call) instead of each value's most readable one"),
}, what="report view", extra=_view_extra)


def _finding_extra(out: dict, path: tuple, lm, issues: list) -> None:
    by = out.get("by")
    if by is not None and not (isinstance(by, (int, float)) and not isinstance(by, bool) and by >= 1):
        issues.append(lm.issue(path + ("by",), f"expected a factor of 1 or more, got {by!r}", "e.g. by: 2"))
    if by is not None and out.get("expect") == "same":
        issues.append(lm.issue(path + ("by",), "`by:` is a factor of a difference: not with expect: same"))
    if out.get("target") is not None and out.get("target") == out.get("versus"):
        issues.append(lm.issue(path + ("versus",), "a finding compares two different targets"))


#: a published finding the report checks against the run (fsbench.analysis.findings)
FINDING = s.Struct({
    "claim": s.Key(s.string, required=True, doc="the finding in the study's words (shown with its verdict)"),
    "workload": s.Key(s.string, required=True),
    "operation": s.Key(s.scalar, required=True, doc="the operation as results.csv names it (write, rename...)"),
    "metric": s.Key(s.string, required=True, doc="bandwidth, iops, rate, latency_mean..."),
    "at": s.Key(s.mapping_of(s.scalar, name_rule=False), default=dict,
                doc="the swept point, e.g. {numjobs: 64} or {maps: 20}"),
    "job": s.Key(s.string, doc="the tool's job, where it has several"),
    "target": s.Key(s.string, required=True, doc="the target the finding is about"),
    "versus": s.Key(s.string, required=True, doc="the target it is compared with (target ÷ versus)"),
    "expect": s.Key(s.one_of("higher", "lower", "same"), required=True,
                    doc="the target's value higher, lower, or the same (within the floor) as the other's"),
    "by": s.Key(s.scalar, doc="higher / lower by at least this factor, as the study says (e.g. 5)"),
}, what="finding", extra=_finding_extra)


@dataclass(frozen=True)
class Report:
    """How the report judges and shows numbers."""

    cv_threshold: float = option(v.percent, 0.10, doc="mark repetitions that spread more than this")
    same_band: float = option(v.percent, 0.05, doc="ratios within this band of the baseline are not coloured")
    thresholds: dict = option(s.mapping_of(v.threshold, name_rule=False), factory=dict, convert=dict)
    metrics: dict = option(s.mapping_of(s.list_of(s.string), name_rule=False), factory=dict, convert=dict,
                           doc="metrics shown per tool, e.g. {fio: [bandwidth, iops]}")
    views: tuple = option(s.list_of(VIEW), (), convert=tuple,
                          doc="the report's tables and charts in order; default: each tool's own views")
    conclusions: str = option(s.string, "", doc="your own conclusions, shown first, before the generated ones")
    findings: tuple = option(s.list_of(FINDING), (), convert=tuple,
                             doc="a study's published findings, each checked on the run: holds, does not hold "
                                 "(with its numbers) or not decided (docs/report.md, Findings)")
    templates: str = option(s.string, "", doc="a folder of report templates (relative to the scenario file) "
                                              "whose blocks extend or replace fsbench's own")
