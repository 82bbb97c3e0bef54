"""Charts that do not exaggerate: the y axis of non-negative values starts at zero (metabench's 1.90-2.30
axis turned ±10 % into cliffs), and charts of one view read in one unit (not kop/s beside op/s)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from fsbench.report import figures
from fsbench.report.views import build_view
from tests.unit.reportkit import row, run_view


def _lines(values: dict[str, list[float]], std: float = 0.0) -> pd.DataFrame:
    return pd.DataFrame([{"series": s, "threads": str(t), "mean": v, "std": std}
                         for s, vs in values.items() for t, v in zip((1, 4, 16), vs)])


def test_a_line_chart_of_rates_starts_at_zero_even_with_a_band_below_it():
    fig = figures.line_figure(_lines({"a": [1900.0, 2100.0, 2300.0]}, std=2500.0), "t", "op/s", "threads", "series")
    try:
        ax = fig.axes[0]
        assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] > 2.3
        assert ax.get_ylabel() == "kop/s"
    finally:
        plt.close(fig)


def test_values_below_zero_keep_their_axis():
    fig = figures.line_figure(_lines({"a": [-5.0, 1.0, 3.0]}), "t", "", "threads", "series")
    try:
        assert fig.axes[0].get_ylim()[0] < -5
    finally:
        plt.close(fig)


def test_bars_start_at_zero_and_take_the_unit_they_are_given():
    data = pd.DataFrame([{"point": "create", "target": t, "mean": v, "std": 900.0} for t, v in (("a", 800.0),
                                                                                                   ("b", 950.0))])
    fig = figures.bar_figure(data, "t", "op/s", "point", "target", scale_from=pd.Series([800.0, 5e4]))
    try:
        ax = fig.axes[0]
        assert ax.get_ylim()[0] == 0 and ax.get_ylabel() == "kop/s"
    finally:
        plt.close(fig)


def test_the_charts_of_one_view_read_in_one_unit():
    """A fast target's chart in kop/s beside a slow one's in op/s read as if both were close: one unit."""
    rows = [row(t, "m", "metabench", "create", "rate", v * n, threads=n) for t, v in (("fast", 900.0), ("slow", 2.0))
            for n in (1, 4, 16)]
    view = build_view(run_view(rows, ["fast", "slow"]), {"view": "chart", "workload": "m", "param": "threads"})
    assert len(view["charts"]) == 2
    assert all(">kop/s<" in c["svg"] for c in view["charts"]), "every chart of the view in kop/s"
