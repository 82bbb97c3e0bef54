"""The `table` view (operations x targets, each value with its ratio to the baseline: seed 000; with `columns:
metrics`, a column per metric of each target, as juicefs bench prints ITEM | VALUE | COST; where that is wider
than the page, the tool's main figure per row with every target side by side, then a table per other column,
as seed 000's JuiceFS Bench table and never the targets split into parts), and its bar charts."""

from __future__ import annotations

import pandas as pd

from fsbench.core.tidy import OUTCOME_UNIT
from fsbench.report import figures
from fsbench.report.layout import fits
from fsbench.report.rows import (
    RunView,
    by_metric_target,
    column_groups,
    job_text,
    key_label,
    main_stat,
    measurement,
    metric_text,
    of_key,
    point_text,
    points,
    primary_metric,
    row_keys,
    shown,
    shows_jobs,
    view_dict,
    workloads_of,
)
from fsbench.report.view_cells import resource_rows, target_cells


def table_view(rv: RunView, spec: dict) -> dict:
    """Operations x targets, value (ratio to the baseline); one block per workload; per sweep point."""
    workloads = workloads_of(spec)
    df = main_stat(rv.rows(workloads, spec.get("tool")))
    targets = rv.present(df)
    single = len(targets) == 1
    by_metric = spec.get("columns") == "metrics"
    fixed = tuple(spec.get("_point") or ())  # an `at` view's point, which its rows no longer vary in
    tables, measures = [], []
    for pkey, pdf in points(df):
        rows: list[dict] = []
        headers: list[str] = []
        more: dict[str, list[dict]] = {}  # a column per table where all of them side by side would not fit
        for w in workloads:
            tool = rv.tool_of(w, spec)
            wdf = shown(pdf[pdf["workload"] == w], tool, spec)
            if wdf.empty:
                continue
            if len(workloads) > 1:
                rows.append({"section": (rv.descriptions.get(w) or w), "labels": [], "cells": []})
            block = _Block(rv, spec, w, tool, targets, fixed + pkey)
            groups = column_groups(tool, list(spec.get("metrics") or []), set(wdf["metric"])) if by_metric else []
            apart = by_metric and not fits(len(targets), len(groups))
            if by_metric and not apart:
                headers = headers or [h for h, _ in groups]
                rows += block.metric_columns(wdf, groups)
            else:
                rows += block.metric_rows(wdf)
            measures += block.measures
            if spec.get("resources", True):
                rows += resource_rows(rv, w, pkey, targets, single, len(headers) or 1)
            if apart:  # the other columns as tables of their own below, every target still side by side
                for header, ms in groups[1:]:
                    aside = _Block(rv, spec, w, tool, targets, fixed + pkey)  # its measures are the first table's
                    more.setdefault(header, []).extend(
                        ([{"section": (rv.descriptions.get(w) or w), "labels": [], "cells": []}]
                         if len(workloads) > 1 else []) + aside.metric_columns(wdf, [(header, ms)]))
        if rows:
            table = {"kind": "compare", "title": point_text(pkey), "targets": targets, "rows": rows,
                     "single": single, "head": ["", *targets]}
            if headers:
                table.update(head=["", *(headers * len(targets))], per_target=max(1, len(headers)),
                             groups=targets if not single else [])
            tables.append(table)
        for header, extra in more.items():
            at = point_text(pkey)
            tables.append({"kind": "compare", "title": header + (f" · {at}" if at else ""), "targets": targets,
                           "rows": extra, "single": single, "head": ["", *targets]})
    charts = _bar_charts(rv, spec, df) if spec.get("chart") else []
    return view_dict("table", spec, rv, tables=tables, charts=charts, measures=measures)


class _Block:
    """The rows of one workload in a table view, and what they measure."""

    def __init__(self, rv: RunView, spec: dict, workload: str, tool: object, targets: list[str], pkey: tuple):
        self.rv, self.spec, self.w, self.tool, self.targets, self.pkey = rv, spec, workload, tool, targets, pkey
        self.measures: list[dict | None] = []
        self.time_unit = str(spec.get("time_unit") or "")

    def cells(self, index: dict[tuple[str, str], dict], metric: str, targets: list[str]) -> list[dict]:
        return target_cells(index, metric, targets, self.rv, self.w, self.tool, ratio=len(self.targets) > 1,
                      time_unit=self.time_unit)

    def metric_rows(self, wdf: pd.DataFrame) -> list[dict]:
        """A row per (job, operation) by its primary metric, or per metric where the view lists several."""
        wanted = list(self.spec.get("metrics") or [])
        keys = row_keys(wdf, self.tool, self.spec)
        with_job = shows_jobs(keys)
        rows = []
        for job, op in keys:
            kdf = of_key(wdf, job, op)
            have = set(kdf["metric"])
            picked = [m for m in wanted if m in have] if len(wanted) > 1 else [primary_metric(kdf, self.tool, wanted)]
            metrics = [str(m) for m in picked if m]
            index = by_metric_target(kdf)
            for metric in metrics:
                label = key_label(job, op, with_job) + (f" · {metric_text(metric)}" if len(metrics) > 1 else "")
                rows.append({"labels": [label], "operation": op, "job": job, "metric": metric, "workload": self.w,
                             "cells": self.cells(index, metric, self.targets)})
            if metrics:
                self.measures.append(measurement(self.rv, self.spec, self.w, job, op, metrics[0], self.pkey, kdf))
        return rows

    def metric_columns(self, wdf: pd.DataFrame, groups: list[tuple[str, tuple[str, ...]]]) -> list[dict]:
        """A row per (job, operation), a column per metric (group) of each target."""
        keys = row_keys(wdf, self.tool, self.spec)
        with_job = shows_jobs(keys)
        rows: list[dict] = []
        for job, op in keys:
            kdf = of_key(wdf, job, op)
            have = set(kdf["metric"])
            picked = [next((m for m in ms if m in have), ms[0]) for _, ms in groups]
            index = by_metric_target(kdf)
            # each target its group's first metric it has (objbench: a store that cannot do an item has only
            # `supported`, shown as `not supported` where the others have their figures)
            cells = [c for t in self.targets for (_, ms), metric in zip(groups, picked)
                     for c in self.cells(index, next((m for m in ms if (m, t) in index), metric), [t])]
            # outcomes (objbench's `not supported`) are each item's own, however alike the row above
            if rows and rows[-1]["job"] == job and _repeats(cells, rows[-1]["cells"]) \
                    and not (kdf["unit"] == OUTCOME_UNIT).all():
                continue  # vdbench's Write of a write-only run: All's figures again, nothing of its own
            rows.append({"labels": [key_label(job, op, with_job)], "operation": op, "job": job, "workload": self.w,
                         "cells": cells})
            first = next((m for m in picked if m in have), "")
            if first:
                self.measures.append(measurement(self.rv, self.spec, self.w, job, op, first, self.pkey, kdf))
        if with_job and {r["operation"] for r in rows} == {"all"}:  # "rd1 · All" on every row: the job says it
            for r in rows:
                r["labels"] = [job_text(r["job"])]
        return rows


def _repeats(cells: list[dict], above: list[dict]) -> bool:
    """Whether a row's figures are all the row above's (same column, as the reader sees them) and it has
    no other."""
    shown = [(c, a) for c, a in zip(cells, above) if c.get("value") != ""]
    return bool(shown) and all((c["text"], c["ratio"]) == (a.get("text"), a.get("ratio")) for c, a in shown)


def _bar_charts(rv: RunView, spec: dict, df: pd.DataFrame, most: int = 2) -> list[dict]:
    """Bars of each row's primary value per target (a chart per metric, the first `most`)."""
    picked = []
    for w in workloads_of(spec):
        tool = rv.tool_of(w, spec)
        wdf = shown(df[df["workload"] == w], tool, spec)
        keys = row_keys(wdf, tool, spec)
        with_job = shows_jobs(keys)
        for job, op in keys:
            kdf = of_key(wdf, job, op)
            metric = primary_metric(kdf, tool, list(spec.get("metrics") or []))
            picked.append(kdf[kdf["metric"] == metric].assign(label=key_label(job, op, with_job)))
    if not picked:
        return []
    data = pd.concat(picked)
    pcols = [c for c in data.columns if c.startswith("param_") and data[c].astype(str).nunique() > 1]
    if pcols:  # one bar group per sweep point and row
        data = data.assign(point=[f"{lab} {point_text({c: r[c] for c in pcols})}"
                                  for lab, (_, r) in zip(data["label"], data.iterrows())])
    else:
        data = data.assign(point=data["label"])
    charts = []
    for metric, m in list(data.groupby("metric", sort=False))[:most]:
        if m["point"].nunique() * m["target"].nunique() > 60:
            continue  # unreadable as bars: the table carries the numbers
        title = metric_text(str(metric))
        charts.append({"metric": metric, "title": title,
                       "svg": figures.bar_chart(m, title, str(m["unit"].iloc[0]), "point", "target")})
    return charts
