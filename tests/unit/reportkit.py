"""Run views made from tidy rows, for the report's unit tests (summarised the way `fsbench report` does)."""

from __future__ import annotations

import pandas as pd

from fsbench.analysis.summarise import summarise, with_baseline
from fsbench.collectors import COLLECTORS
from fsbench.core.tidy import measurement
from fsbench.report.rows import RunView
from fsbench.report.tables import Style
from fsbench.tools import TOOLS


def row(target: str, workload: str, tool: str, operation: str, metric: str, value: float, *, job: str = "",
        rep: int = 1, stat: str = "value", **params: object) -> dict:
    """One tidy row of a case (its id made of target, workload, params and repetition)."""
    point = "__".join(f"{k}={v}" for k, v in params.items())
    case = f"{target}__{workload}{'__' + point if point else ''}__r{rep}"
    return {"case_id": case, "target": target, "workload": workload, "repetition": rep,
            **measurement(tool, operation, metric, value, host="h1", job=job, stat=stat),
            **{f"param_{k}": str(v) for k, v in params.items()}}


def run_view(rows: list[dict], targets: list[str], baseline: str | None = None,
             tools: dict[str, str] | None = None, clients: dict[str, str] | None = None) -> RunView:
    """A RunView over these rows; tools: workload -> tool name (default: each row's tool)."""
    df = pd.DataFrame(rows)
    for c in [c for c in df.columns if c.startswith("param_")]:
        df[c] = df[c].fillna("")
    baseline = baseline or targets[0]
    summary = with_baseline(summarise(df), baseline)
    names = tools or {str(w): str(t) for w, t in zip(df["workload"], df["tool"]) if t in TOOLS}
    return RunView(summary, targets, baseline, Style(), tools={w: TOOLS.get(t) for w, t in names.items()},
                   tool_names=names, clients=clients or {}, side_tools={k.tool: k for k in COLLECTORS if k.tool})
