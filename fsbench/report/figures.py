"""Charts as inline SVG (no network, no external fonts: glyphs are drawn as paths)."""

from __future__ import annotations

import io
from functools import cache
from typing import Any

import pandas as pd

from fsbench.core.units import format_value


@cache
def _plt() -> Any:
    """matplotlib's pyplot, imported and set up on the first chart (half a second a report without charts saves)."""
    import matplotlib

    from fsbench.core import warmup

    warmup.settle()  # pyplot is not thread-safe: the run's background warm-up has closed its figure first
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # text stays text (no font is embedded or fetched: the browser draws it with a local sans-serif font);
    # drawing glyphs as paths made charts three times larger and slower
    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "font.family": "sans-serif",
                         "axes.spines.top": False, "axes.spines.right": False, "svg.hashsalt": "fsbench",
                         "figure.constrained_layout.use": True})
    return plt

#: colour-blind-safe palette (Okabe-Ito), then matplotlib's tab20 for many series
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


def _scale(unit: str, values: pd.Series) -> tuple[float, str]:
    """A divisor and axis label so the axis reads in friendly units."""
    top = float(values.abs().max() or 0)
    if unit == "B/s":
        for div, lab in ((2.0**30, "GiB/s"), (2.0**20, "MiB/s"), (2.0**10, "KiB/s")):
            if top >= div:
                return div, lab
        return 1, "B/s"
    if unit == "s":
        for div, lab in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
            if top >= div:
                return div, lab
        return 1e-9, "ns"
    if unit in ("op/s", "count") and top >= 1e3:
        return (1e6, f"M{unit}") if top >= 1e6 else (1e3, f"k{unit}")
    return 1, unit


#: the font size of tick labels (points) and the share of it an average character takes
TICK_POINTS = 9
CHAR_WIDTH = 0.62


def bar_chart(data: pd.DataFrame, title: str, unit: str, x: str, series: str,
              scale_from: pd.Series | None = None) -> str:
    """A bar_figure as inline SVG."""
    return _svg(bar_figure(data, title, unit, x, series, scale_from))


def bar_figure(data: pd.DataFrame, title: str, unit: str, x: str, series: str, scale_from: pd.Series | None = None):
    """Grouped bars: one group per x value, one bar per series, error bars from `std`. When the groups'
    labels would not fit side by side under the bars, the bars lie horizontally, one label per line.
    `scale_from`: the values whose size picks the axis unit (the view's, so its charts share one)."""
    pivot = data.pivot_table(index=x, columns=series, values="mean", aggfunc="first", sort=False)
    err = data.pivot_table(index=x, columns=series, values="std", aggfunc="first", sort=False)
    div, label = _scale(unit, data["mean"] if scale_from is None else scale_from)
    n = max(1, len(pivot.columns))
    plt = _plt()
    colors = PALETTE if n <= len(PALETTE) else [plt.cm.tab20(i % 20) for i in range(n)]
    labels = [str(v) for v in pivot.index]
    width_in = min(10, 2.2 + 0.5 * n * max(1, len(pivot)))
    room = (width_in - 1.0) * 72 / max(1, len(pivot))  # points per group along the axis
    longest = max((len(t) for t in labels), default=0) * TICK_POINTS * CHAR_WIDTH
    horizontal = len(pivot) > 1 and longest > 0.85 * room
    if horizontal:
        fig, ax = plt.subplots(figsize=(7.2, 0.9 + len(pivot) * (0.12 * n + 0.2)))
    else:
        fig, ax = plt.subplots(figsize=(width_in, 3.2))
    thick = 0.8 / n
    for i, col in enumerate(pivot.columns):
        offsets = [j + (i - (n - 1) / 2) * thick for j in range(len(pivot))]
        spread = err[col].fillna(0) / div if col in err and (err[col].fillna(0) > 0).any() else None
        if horizontal:
            ax.barh(offsets, pivot[col] / div, thick, xerr=spread, label=str(col), color=colors[i % len(colors)],
                    capsize=2)
        else:
            ax.bar(offsets, pivot[col] / div, thick, yerr=spread, label=str(col), color=colors[i % len(colors)],
                   capsize=2)
    if _non_negative(data):  # a spread reaching below zero must not move the bars' base
        (ax.set_xlim if horizontal else ax.set_ylim)(0, None)
    if horizontal:
        ax.set_yticks(range(len(pivot)), labels)
        ax.invert_yaxis()  # the first group on top, in the table's order
        ax.set_xlabel(label)
    else:
        ax.set_xticks(range(len(pivot)), labels)
        ax.set_ylabel(label)
        if len(pivot.index) == 1 and labels[0] == "":
            ax.set_xticks([])
    ax.set_title(title, loc="left")
    if horizontal:  # beside the bars: below them it would float far from a tall chart's top
        ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    else:
        ax.legend(frameon=False, fontsize=8, ncol=min(n, 4), loc="upper left", bbox_to_anchor=(0, -0.12))
    return fig


#: a line chart's size (inches): two side by side in a 1280 px page
LINE_SIZE = (5.6, 3.2)
#: beyond this many swept values, every n-th is labelled (25 numjobs values would touch)
MOST_TICKS = 12


def log_axis(values: list[float]) -> bool:
    """Whether swept values read best on a log axis: a wide range that grows by a factor each step
    (1, 2, 4 ... 64). Steps of less than 1.5 x (80 then 100) would put their labels on top of each other."""
    if len(values) < 3 or values[0] <= 0 or values[-1] / values[0] < 16:
        return False
    return min(b / a for a, b in zip(values, values[1:])) >= 1.5


def line_chart(data: pd.DataFrame, title: str, unit: str, x: str, series: str,
               scale_from: pd.Series | None = None) -> str:
    """A line_figure as inline SVG."""
    return _svg(line_figure(data, title, unit, x, series, scale_from))


def line_figure(data: pd.DataFrame, title: str, unit: str, x: str, series: str, scale_from: pd.Series | None = None):
    """One line per series against a numeric swept parameter; the y axis starts at zero for values that
    cannot be negative (an axis from 1.90 to 2.30 draws ±10 % as a cliff). `scale_from`: the values whose
    size picks the axis unit (the view's, so charts side by side read in one unit)."""
    div, label = _scale(unit, data["mean"] if scale_from is None else scale_from)
    floor = 0.0 if _non_negative(data) else None
    plt = _plt()
    fig, ax = plt.subplots(figsize=LINE_SIZE)
    groups = list(data.groupby(series, sort=False))
    colors = PALETTE if len(groups) <= len(PALETTE) else [plt.cm.tab20(i % 20) for i in range(len(groups))]
    for i, (name, sub) in enumerate(groups):
        sub = sub.assign(_x=pd.to_numeric(sub[x])).sort_values("_x")
        color = colors[i % len(colors)]
        ax.plot(sub["_x"], sub["mean"] / div, label=str(name), marker="o", markersize=3, color=color)
        if (sub["std"] > 0).any():  # a band is cheaper to draw and easier to read than error bars
            low = (sub["mean"] - sub["std"]) / div
            ax.fill_between(sub["_x"], low if floor is None else low.clip(lower=floor),
                            (sub["mean"] + sub["std"]) / div, color=color, alpha=0.15, linewidth=0)
    values = sorted(float(v) for v in pd.to_numeric(data[x]).unique())
    if log_axis(values):
        ax.set_xscale("log", base=2)
    ticks = values if len(values) <= MOST_TICKS else values[::-(-len(values) // MOST_TICKS)]
    ax.set_xticks(ticks, [format_value(v, "") if v >= 1000 else f"{v:g}" for v in ticks])
    ax.set_xlabel(x.removeprefix("param_"))
    ax.set_ylabel(label)
    ax.set_title(title, loc="left")
    if floor is not None:
        ax.set_ylim(floor, None)
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def _non_negative(data: pd.DataFrame) -> bool:
    """Whether every value charted is zero or more (rates, sizes, times): then the axis starts at zero."""
    return bool((pd.to_numeric(data["mean"], errors="coerce").dropna() >= 0).all())


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    _plt().close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def ratio_chart(items: list[dict], baseline: str, log: bool) -> str:
    """The answer at a glance: per measurement (a row), each target's ratio to the baseline as a dot with its
    95 % interval, the baseline a line at 1 (the ratios as the tables show them: a time's row says lower is
    better). Log axis where ratios span decades."""
    plt = _plt()
    targets = list(dict.fromkeys(r["target"] for a in items for r in a["ratios"]))
    n = max(1, len(targets))
    labels = [f"{a['view']}: {a['what']}" + ("" if a["up"] else " (lower is better)") for a in items]
    longest = max((len(t) for t in labels), default=10)
    fig, ax = plt.subplots(figsize=(min(11.5, 5.0 + longest * 0.055), 0.9 + len(items) * (0.16 * n + 0.14)))
    thick = 0.7 / n
    for i, t in enumerate(targets):
        ys, xs, lo, hi = [], [], [], []
        for j, a in enumerate(items):
            r = next((r for r in a["ratios"] if r["target"] == t), None)
            if r is None:
                continue
            x = r["ratio"]
            low, high = r.get("low"), r.get("high")
            a_, b_ = (low, high) if low and high else (x, x)
            ys.append(j + (i - (n - 1) / 2) * thick)
            xs.append(x)
            lo.append(max(0.0, x - min(a_, b_)))
            hi.append(max(0.0, max(a_, b_) - x))
        ax.errorbar(xs, ys, xerr=[lo, hi], fmt="o", markersize=4, capsize=2, label=t,
                    color=PALETTE[i % len(PALETTE)])
    ax.axvline(1.0, color="#5b6472", linewidth=1, linestyle="--")
    if log:
        ax.set_xscale("log")
    ax.set_yticks(range(len(items)), labels)
    ax.invert_yaxis()  # the first measurement on top, as the table beside it
    ax.set_xlabel(f"ratio to {baseline} (dashed: {baseline} itself)")
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(fig)
