"""The report of a many-case run does its per-cell work once per question, not once per cell (issue 25):
a run directory built by bench/report_scale.py (the benchmark's own synthetic sweep), rendered by the
real report pipeline, with the expensive questions counted where they are asked."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pandas as pd

import fsbench.api.tools as api_tools
import fsbench.core.stats as stats
from fsbench.analysis.summarise import summarise, with_baseline
from fsbench.report import write_report
from tests.paths import REPO


def _scale_run(root: Path, targets: int, workloads: int, points: int, reps: int) -> Path:
    """A run directory of targets x workloads x points x reps fio cases, as bench/report_scale.py builds it."""
    spec = importlib.util.spec_from_file_location("report_scale", REPO / "bench" / "report_scale.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.build(root, targets, workloads, points, reps)


def test_a_plugins_direction_is_read_once_per_metric_not_per_cell(tmp_path, monkeypatch):
    """Each cell asks whether bigger is better; the answer reads the plug-in's declarations (13 runtime
    Protocol checks, 0.3 ms). 3 s of the 10,000-case report went there when every cell asked anew."""
    run = _scale_run(tmp_path, targets=3, workloads=2, points=6, reps=3)
    calls: list[str] = []
    real = api_tools.declarations

    def counted(tool: object) -> api_tools.Declarations:
        calls.append(getattr(tool, "name", str(tool)))
        return real(tool)

    monkeypatch.setattr(api_tools, "declarations", counted)
    html = write_report(run).read_text()
    cells = html.count('<td class="num')
    assert cells > 300, cells  # the report did draw its tables: the count below is not vacuous
    # one question per (metric, plug-in) and a few per view, however many cells: 15 metrics of one tool
    assert len(calls) < 60, (len(calls), cells)


def test_ratio_intervals_of_a_summary_are_computed_by_column(tmp_path, monkeypatch):
    """with_baseline computes every row's interval at once (fsbench.analysis.ratios), not a scalar
    log_ratio per row (37,500 of them, a quarter of the 10,000-case report), and gives the scalar's figures."""
    run = _scale_run(tmp_path, targets=3, workloads=1, points=4, reps=3)
    summary = summarise(pd.read_parquet(run / "results.parquet"))
    scalar = stats.log_ratio
    asked: list[tuple] = []

    def counted(a: stats.LogSummary, b: stats.LogSummary, *rest: float) -> stats.Ratio:
        asked.append((a, b))
        return scalar(a, b, *rest)

    monkeypatch.setattr(stats, "log_ratio", counted)
    out = with_baseline(summary, "target-00")
    assert not asked, f"{len(asked)} ratios computed one at a time"
    # the results alone (no cases.csv params): one row per workload and metric, the 4 numjobs values pooled
    base = out[out["target"] == "target-00"].set_index(["workload", "metric"])
    checked = 0
    for _, r in out[out["target"] == "target-02"].iterrows():
        b = base.loc[(r["workload"], r["metric"])]
        want = scalar(stats.LogSummary(int(b["n"]), b["log_mean"], b["log_var"]),
                      stats.LogSummary(int(r["n"]), r["log_mean"], r["log_var"]))
        assert math.isclose(r["ratio_low"], want.low, rel_tol=1e-12)
        assert math.isclose(r["ratio_high"], want.high, rel_tol=1e-12)
        assert math.isclose(r["ratio_p"], want.p, rel_tol=1e-12, abs_tol=1e-300)
        checked += 1
    assert checked == 15  # every metric fio gives
