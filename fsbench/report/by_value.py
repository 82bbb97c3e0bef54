"""The `by_value` view: per value of a swept parameter, targets x metrics with the client's CPU and peak memory
last (seeds 001 and 004)."""

from __future__ import annotations

import pandas as pd

from fsbench.api.tools import declarations
from fsbench.report.frames import grouped, records
from fsbench.report.rows import (
    RunView,
    by_metric_target,
    key_label,
    main_stat,
    measurement,
    metric_text,
    number_key,
    point_text,
    row_keys,
    shown,
    shows_jobs,
    view_dict,
    workloads_of,
)
from fsbench.report.view_cells import RESOURCES, resource_cell, resources, target_cells


def by_value_view(rv: RunView, spec: dict) -> dict:
    """Per value of the swept parameter (or once, when none is given): targets x metrics, resources last."""
    workloads = workloads_of(spec)
    df = main_stat(rv.rows(workloads, spec.get("tool")))
    targets = rv.present(df)
    param = f"param_{spec['param']}" if spec.get("param") else ""
    tables, measures = [], []
    swept = bool(param) and param in df
    # the swept values in numeric order; each workload's rows grouped by value once (not filtered per value)
    values = sorted((v for v, _ in df.groupby(param, sort=False)), key=number_key) if swept else [None]
    for w in workloads:
        tool = rv.tool_of(w, spec)
        mine = shown(df[df["workload"] == w], tool, spec)
        parts = dict(iter(mine.groupby(param, sort=False))) if swept else {None: mine}
        rows_at: dict[object, list[dict]] = {}  # the same groups as dicts, from one pass over the workload
        for r in records(mine):
            rows_at.setdefault(r[param] if swept else None, []).append(r)
        for v in values:
            pkey = ((param, v),) if swept else ()
            wdf = parts.get(v)
            if wdf is None or wdf.empty:
                continue
            columns = _by_value_columns(wdf, tool, spec)
            res = resources(rv, w, pkey) if spec.get("resources", True) else pd.DataFrame()
            res_cols = [(m, s, label) for m, s, label in RESOURCES
                        if not res.empty and not res[(res["metric"] == m) & (res["stat"] == s)].empty]
            keyed = grouped(rows_at[v], "job", "operation")
            indexed = {k: by_metric_target(keyed[k]) for k in {(job, op) for job, op, _ in columns}}
            rows = []
            for t in targets:
                cells = []
                for job, op, metric in columns:
                    cells += target_cells(indexed[(job, op)], metric, [t], rv, w, tool, ratio=len(targets) > 1,
                                          time_unit=spec.get("time_unit") or "")
                for metric, stat, _ in res_cols:
                    cells.append(resource_cell(rv, res[(res["metric"] == metric) & (res["stat"] == stat)], t,
                                               metric, w, len(targets) == 1))
                rows.append({"labels": [t], "target": t, "cells": cells})
            firsts: dict[tuple[str, str], str] = {}
            for job, op, metric in columns:
                firsts.setdefault((job, op), metric)
            for (job, op), metric in firsts.items():
                measures.append(measurement(rv, spec, w, job, op, metric, pkey, keyed[(job, op)]))
            keys = list(firsts)
            with_job = shows_jobs(keys)
            named = len(keys) > 1
            head = ["", *[(f"{key_label(job, op, with_job).lower()} " if named else "") + metric_text(m)
                          for job, op, m in columns], *[label for _, _, label in res_cols]]
            title = " · ".join(x for x in ((rv.descriptions.get(w) or w) if len(workloads) > 1 else "",
                                           point_text(pkey)) if x)
            tables.append({"kind": "by_value", "title": title, "head": head, "targets": targets, "rows": rows})
    return view_dict("by_value", spec, rv, tables=tables, measures=measures)


def _by_value_columns(df: pd.DataFrame, tool: object, spec: dict) -> list[tuple[str, str, str]]:
    wanted = list(spec.get("metrics") or [])
    metrics = wanted or [m for m in declarations(tool).primary_metrics if m in set(df["metric"])][:2]
    have = set(zip(df["job"].astype(str), df["operation"].astype(str), df["metric"].astype(str)))
    return [(job, op, m) for job, op in row_keys(df, tool, spec) for m in metrics if (job, op, m) in have]
