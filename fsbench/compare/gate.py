"""What a regression gate judges and how sure it is across many measurements.

By default each tool's primary metrics (its plug-in's `primary_metrics`: fio's bandwidth, iops, clat_mean,
clat_p99; metabench's rate and latency_mean), as a value or the tool's own mean: a run of meta-engines has
some 2,700 measurements, and at 5 % each a rerun raised some 130 false alarms. `all` compares every metric
and statistic (the tool's max and min too), a list of names or patterns those metrics.

The measurements of one compared run are tested together: Benjamini-Hochberg's adjusted p (q) over all of
them keeps the expected share of false alarms among the verdicts at alpha, whatever their number.
"""

from __future__ import annotations

import fnmatch

from fsbench.api.tools import declarations
from fsbench.compare.judge import decide
from fsbench.compare.model import BETTER, WORSE
from fsbench.core.stats import bh_adjust
from fsbench.core.stats_settings import Floors
from fsbench.tools import TOOLS

#: the selection that compares every metric and statistic
ALL = "all"
#: statistics a default comparison judges: a value, or the tool's own mean over its iterations
MAIN_STATS = ("value", "mean", "")


def primary(tool: str) -> tuple[str, ...]:
    """The metrics a tool's plug-in declares primary (none for an unknown tool)."""
    return declarations(TOOLS.get(tool) if tool in TOOLS else None).primary_metrics


def wanted(case_tool: str, row_tool: str, metric: str, stat: str, selection: list[str] | None) -> bool:
    """Whether a measurement is compared: selection None = the case tool's own primary metrics (a monitor's
    or collector's rows are context, not the tool's result), value or mean only."""
    if selection is None:
        own = row_tool in ("", case_tool)
        return own and stat in MAIN_STATS and metric in primary(case_tool)
    return any(p == "*" or fnmatch.fnmatchcase(metric, p) for p in selection)


def adjust(rows: list[dict], alpha: float, floors: Floors) -> dict:
    """Give the judged rows of one compared run their q (Benjamini-Hochberg over every tested row) and decide
    their verdicts again with it; returns what was tested, for the summary."""
    judged = [r for r in rows if "improved" in r]
    qs = bh_adjust([r["p_value"] for r in judged])
    for r, q in zip(judged, qs):
        r.update(decide({**r, "q_value": q}, alpha, floors))
    tested = [r for r in judged if r["q_value"] == r["q_value"]]
    return {"measurements": len(judged), "tested": len(tested),
            "untested": len(judged) - len(tested),
            "discoveries": sum(r["verdict"] in (BETTER, WORSE) for r in tested),
            "untested_changes": sum(r["verdict"] in (BETTER, WORSE) for r in judged if r["q_value"] != r["q_value"])}
