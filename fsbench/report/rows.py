"""What every view reads of a run's summary: its rows by (job, operation) in the tool's order, their
labels, sweep points, and the measurements the conclusions are drawn from."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from fsbench.api.tools import declarations
from fsbench.report.frames import records
from fsbench.report.tables import Style, better
from fsbench.validity.watch import TOOL as BACKEND

RESOURCE_METRICS = ("cpu_usage", "memory_peak")
EMPTY = {"text": "–", "ratio": "", "cls": "", "cv": "", "unstable": False, "value": "", "verdict": ""}


@dataclass
class RunView:
    """What every view needs of the run: its summary, targets, baseline, tools and client processes."""

    summary: pd.DataFrame
    targets: list[str]
    baseline: str
    style: Style
    tools: dict[str, object]  # workload -> its tool plug-in
    tool_names: dict[str, str]  # workload -> tool name
    descriptions: dict[str, str] = field(default_factory=dict)
    clients: dict[str, str] = field(default_factory=dict)  # target -> its client process name
    #: rows of other tools beside a workload's own (collectors: juicefs-stats, juicefs-profile) -> plug-in
    side_tools: dict[str, object] = field(default_factory=dict)

    def rows(self, workloads: list[str], tool: str | None = None) -> pd.DataFrame:
        """The summary rows of these workloads: its tools' own (not the monitor's or a collector's), or
        those of `tool` (a view's `tool:`, e.g. a collector's)."""
        s = self.summary
        if s.empty:
            return s
        s = s[s["workload"].isin(workloads)]
        if tool:
            return s[s["tool"] == tool]
        return s[(s["tool"] != "monitor") & (s["tool"] != BACKEND) & ~s["tool"].isin(list(self.side_tools))]

    def tool_of(self, workload: str, spec: dict) -> object:
        """The plug-in whose declarations (operation order, primary metrics) the view follows."""
        return self.side_tools.get(str(spec.get("tool"))) if spec.get("tool") else self.tools.get(workload)

    def tool_name(self, workload: str, spec: dict) -> str:
        """The name of the tool whose rows the view shows for this workload."""
        return str(spec.get("tool") or self.tool_names.get(workload, ""))

    def present(self, df: pd.DataFrame) -> list[str]:
        """Targets with results, in the scenario's order."""
        have = set(df["target"]) if not df.empty else set()
        return [t for t in self.targets if t in have]


def params_of(df: pd.DataFrame) -> list[str]:
    """Swept parameters with more than one value in df."""
    return [c for c in df.columns
            if c.startswith("param_") and df[c].astype(str).replace("", pd.NA).dropna().nunique() > 1]


def main_stat(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of one value per case (not a tool's own max / min / stddev)."""
    return df[df["stat"].isin(["value", "mean"])] if not df.empty else df


def points(df: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """(((param, value), ...), rows) per sweep point, in numeric order (one empty key when nothing is swept)."""
    pcols = params_of(df)
    if not pcols or df.empty:
        return [((), df)]
    out = []
    for values, sub in df.groupby(pcols, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        out.append((tuple(zip(pcols, values)), sub))
    return sorted(out, key=lambda p: tuple(number_key(v) for _, v in p[0]))


def number_key(v: object) -> tuple:
    """Numbers in numeric order, before any text."""
    try:
        return (0, float(str(v)), "")
    except ValueError:
        return (1, 0.0, str(v))


def point_text(pkey: tuple | dict) -> str:
    """(('param_maps', '20'),) -> 'maps=20'."""
    items = pkey.items() if isinstance(pkey, dict) else pkey
    return " ".join(f"{str(k).removeprefix('param_')}={v}" for k, v in items if str(v) != "")


def op_label(op: str) -> str:
    """'write_big_file' -> 'Write big file'."""
    return op.replace("_", " ").capitalize()


def job_text(job: str) -> str:
    """A tool's job name as words: 'format_for_rd1' -> 'format for rd1'."""
    return job.replace("_", " ")


def metric_text(metric: str) -> str:
    """'latency_mean' -> 'latency mean'."""
    return metric.replace("_", " ")


def ordered_operations(df: pd.DataFrame, tool: object, wanted: list[str]) -> list[str]:
    """The operations to show: the view's list, else the tool's natural order, then any others by name."""
    have = list(dict.fromkeys(str(o) for o in df["operation"])) if not df.empty else []
    if wanted:
        return [o for o in wanted if o in have]
    order_by = declarations(tool).order_by
    if order_by:  # the biggest first, as the tool itself lists them (juicefs profile: total time)
        totals = df[df["metric"] == order_by].groupby("operation")["mean"].sum()
        return sorted(have, key=lambda o: -float(totals.get(o, 0.0)))
    natural = list(declarations(tool).operations)
    if natural and any(o in have for o in natural):
        return [o for o in natural if o in have]  # the others (a tool's internals) go to "All measurements"
    return sorted(have)


def ordered_jobs(df: pd.DataFrame, wanted: list[str]) -> list[str]:
    """The jobs to show: the view's list, else every job in the order the tool reported them."""
    have = list(dict.fromkeys(str(j) for j in df["job"].astype(str))) if not df.empty else []
    return [j for j in wanted if j in have] if wanted else have


def shown(df: pd.DataFrame, tool: object, spec: dict) -> pd.DataFrame:
    """The rows of the metrics a view may show: its own list, else the tool's primary metrics (a tool's
    other figures, objbench's functional checks among them, are not rows of its tables)."""
    metrics = list(spec.get("metrics") or []) or list(declarations(tool).primary_metrics)
    return df[df["metric"].isin(metrics)] if metrics and not df.empty else df


def row_keys(df: pd.DataFrame, tool: object, spec: dict) -> list[tuple[str, str]]:
    """(job, operation) of each row a view shows, job by job (a tool's job: vdbench's run definition, a
    fio job section), each job's operations in the tool's order."""
    if df.empty:
        return []
    ops = ordered_operations(df, tool, list(spec.get("operations") or []))
    jobs = ordered_jobs(df, list(spec.get("jobs") or []))
    have = set(zip(df["job"].astype(str), df["operation"].astype(str)))
    return [(j, o) for j in jobs for o in ops if (j, o) in have]


def shows_jobs(keys: list[tuple[str, str]]) -> bool:
    """Whether the rows need their job's name to be told apart (several jobs)."""
    return len({j for j, _ in keys}) > 1


def key_label(job: str, op: str, with_job: bool) -> str:
    """A row's label: the operation, after its job's name where several jobs are shown."""
    return f"{job_text(job)} · {op_label(op)}" if with_job and job else op_label(op)


def of_key(df: pd.DataFrame, job: str, op: str) -> pd.DataFrame:
    """The rows of one (job, operation)."""
    return df[(df["job"].astype(str) == job) & (df["operation"] == op)]


def primary_metric(df: pd.DataFrame, tool: object, wanted: list[str]) -> str | None:
    """The metric a (job, operation)'s rows are shown by: the first of the view's (or the tool's primary)
    it has."""
    have = set(df["metric"])
    for m in [*wanted, *declarations(tool).primary_metrics]:
        if m in have:
            return m
    return None


def column_groups(tool: object, wanted: list[str], have: set[str]) -> list[tuple[str, tuple[str, ...]]]:
    """The columns of a view with `columns: metrics`: (header, metrics in order of preference).

    The tool's own columns where it declares them (juicefs bench: Value = bandwidth or rate, Cost =
    latency), kept where they hold one of the view's metrics; each other metric of the view its own.
    """
    declared = [(str(h), tuple(ms)) for h, ms in declarations(tool).columns]
    metrics = list(wanted) or [m for m in declarations(tool).primary_metrics if m in have]
    if not metrics:
        metrics = sorted(have)
    groups: list[tuple[str, tuple[str, ...]]] = []
    covered: set[str] = set()
    for header, ms in declared:
        keep = tuple(m for m in ms if m in metrics) if wanted else ms
        if keep:
            groups.append((header, keep))
            covered |= set(keep)
    groups += [(metric_text(m), (m,)) for m in metrics if m not in covered]
    if wanted:  # in the order the view asks for them
        groups.sort(key=lambda g: min(metrics.index(m) for m in g[1] if m in metrics))
    return [g for g in groups if any(m in have for m in g[1])]


def up(metric: str, tool: object) -> bool:
    """Whether bigger is better for this metric of this tool."""
    return better(metric, tool)


def by_target(df: pd.DataFrame | list[dict]) -> dict[str, dict]:
    """target -> its first row, as a dict: one pass over the rows instead of a filter per target."""
    out: dict[str, dict] = {}
    for r in records(df):
        out.setdefault(str(r["target"]), r)
    return out


def by_metric_target(df: pd.DataFrame | list[dict]) -> dict[tuple[str, str], dict]:
    """(metric, target) -> its first row, as a dict (the cells of a table read it per target)."""
    out: dict[tuple[str, str], dict] = {}
    for r in records(df):
        out.setdefault((str(r["metric"]), str(r["target"])), r)
    return out


# -- measurements: what the conclusions compare -----------------------------------------------------------

def measurement(rv: RunView, spec: dict, workload: str, job: str, op: str, metric: str, pkey: tuple,
                rows: pd.DataFrame | list[dict], *, spread: pd.DataFrame | list[dict] | None = None) -> dict | None:
    """One thing measured on several targets (one run's figure: the view's first metric of it), with each
    target's mean, spread and repetitions, and its ratio to the baseline.

    `rows`: a frame or its records; `spread`: rows of the tool's own standard deviation (mdtest's over its
    iterations), when it has one.
    """
    picked = _of_metric(rows, metric)
    index = by_target(picked)
    spreads = by_target(_of_metric(spread, metric)) if spread is not None else {}
    values: dict[str, dict] = {}
    for t in rv.targets:
        r = index.get(t)
        if r is None or not float(r["mean"]) > 0:
            continue
        mean = float(r["mean"])
        std = float(r["std"] or 0.0) if "std" in r else 0.0
        n = int(r["n"] or 1) if "n" in r else 1
        if t in spreads:  # the tool's own spread over its iterations
            std, n = float(spreads[t]["mean"]), max(n, 2)
        ratio = r.get("ratio", float("nan"))
        values[t] = {"mean": mean, "std": std, "n": n,
                     "ratio": float(ratio) if ratio == ratio and ratio is not None else None}
        if t not in spreads:  # what the significance tests need (fsbench.core.stats), where there is one
            values[t].update({k: float(r[k]) for k in ("log_mean", "log_var", "ratio_p", "ratio_low", "ratio_high")
                              if r.get(k) is not None and r.get(k) == r.get(k)})
            if isinstance(r.get("reps"), tuple):  # per round, for comparisons paired by round
                values[t]["reps"] = r["reps"]
                values[t]["prior"] = (r.get("prior_df", float("nan")), r.get("prior_var", float("nan")))
        if r.get("validity") == "flagged":  # fsbench.validity: the conclusions leave it out and say so
            values[t]["flagged"] = str(r.get("validity_detail") or "flagged")
    if len(values) < 2:
        return None
    tool = rv.tool_of(workload, spec)
    units = [r["unit"] for r in picked if "unit" in r]
    return {"tool": rv.tool_name(workload, spec), "workload": workload, "job": job, "operation": op,
            "metric": metric, "unit": str(units[0]) if units else "", "point": point_text(pkey),
            "up": up(metric, tool), "values": values,
            "key": (rv.tool_name(workload, spec), workload, job, op, point_text(pkey))}


def _of_metric(rows: pd.DataFrame | list[dict], metric: str) -> list[dict]:
    if isinstance(rows, list):
        return [r for r in rows if r["metric"] == metric]
    return records(rows[rows["metric"] == metric])


# -- the view itself -----------------------------------------------------------------------------------

def workloads_of(spec: dict) -> list[str]:
    """The workloads a view shows."""
    return list(spec.get("workloads") or [spec["workload"]])


SUFFIX = {"stats": " · Max / Min / Mean / StdDev per target", "best": " · % of the best, per operation",
          "checks": " · functional checks"}


def view_dict(kind: str, spec: dict, rv: RunView, *, tables: list | None = None, charts: list | None = None,
          measures: list | None = None) -> dict:
    """A view as the report shows it: title, tool, anchor, tables, charts and the measurements it compares."""
    workloads = workloads_of(spec)
    names = {str(spec["tool"])} if spec.get("tool") else {rv.tool_names.get(w, "") for w in workloads}
    suffix = {**SUFFIX, "by_value": f" · per {spec.get('param')}" if spec.get("param") else "",
              "chart": f" · by {spec.get('param')}", "at": f" · at {spec.get('param')}={spec.get('value')}"}
    title = spec.get("title") or ((workloads[0] if len(workloads) == 1 else ", ".join(workloads))
                                  + suffix.get(kind, ""))
    tool = ", ".join(sorted(n for n in names if n))
    return {"kind": kind, "title": title, "workloads": workloads,
            # the tool beside the title, unless the title names it already
            "tool": "" if title.endswith(f"({tool})") else tool,
            "description": rv.descriptions.get(workloads[0], "") if len(workloads) == 1 else "",
            "anchor": "view-" + "-".join(workloads) + f"-{kind}" + (f"-{spec['tool']}" if spec.get("tool") else ""),
            "tables": tables or [], "charts": charts or [],
            "measurements": [m for m in (measures or []) if m], "spec": spec}
