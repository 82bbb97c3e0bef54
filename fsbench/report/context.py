"""Everything the report shows, computed from a run directory alone (numbers here, formatting in cells)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import yaml

from fsbench.analysis.findings import check_all as check_findings
from fsbench.analysis.summarise import empty_summary, summarise, with_baseline
from fsbench.api.tools import declarations
from fsbench.collectors import COLLECTORS
from fsbench.config.yamllines import load_data
from fsbench.core.csv_cells import unguard_frame, unguard_row
from fsbench.core.stats_settings import Floors
from fsbench.core.thresholds import thresholds_from
from fsbench.core.units import format_value, is_whole_number
from fsbench.report import monitor_groups, per_host
from fsbench.report import summary as summary_mod
from fsbench.report import validity as validity_mod
from fsbench.report.absent import why_empty
from fsbench.report.conclusions import single_run_note, tool_sentences, view_sentences
from fsbench.report.figures import ratio_chart
from fsbench.report.layout import split_wide
from fsbench.report.rows import RESOURCE_METRICS, RunView
from fsbench.report.spec import default_views, read_scenario
from fsbench.report.summary_page import one_page
from fsbench.report.tables import Style, best_table, compare_table, pivot_tables, stats_table
from fsbench.report.views import build_view
from fsbench.run.notes import PLACEMENT_CSV, WARNINGS_CSV, read_csv
from fsbench.run.run_files import read_run_csv, read_run_json, read_run_parquet, read_run_rows
from fsbench.scenario.model import Workload
from fsbench.scenario.repetitions import not_needed
from fsbench.tools import TOOLS

#: the monitor's figures in "All measurements" (it is not a tool plug-in: its metrics are the report's own)
MONITOR_METRICS = list(RESOURCE_METRICS)


def _read_csv(path: Path) -> list[dict]:
    # bounded, a regular file (fsbench.run.run_files); the names as they are, not as guarded for spreadsheets
    return [unguard_row(r) for r in read_run_rows(path)]


def _results(run: Path) -> pd.DataFrame:
    pq, f = run / "results.parquet", run / "results.csv"
    if os.path.lexists(pq):
        return read_run_parquet(pq)
    if os.path.lexists(f):
        return unguard_frame(read_run_csv(f, keep_default_na=False, na_values=[""]))
    return pd.DataFrame()


def _with_params(results: pd.DataFrame, cases: list[dict]) -> pd.DataFrame:
    params = {c["case_id"]: {k: v for k, v in c.items() if k.startswith("param_")} for c in cases}
    cols = sorted({k for p in params.values() for k in p})
    if results.empty or not cols:
        return results
    frame = pd.DataFrame([{"case_id": cid, **{c: p.get(c, "") for c in cols}} for cid, p in params.items()])
    return results.drop(columns=[c for c in cols if c in results], errors="ignore").merge(frame, on="case_id",
                                                                                          how="left")


def _settings(data: dict) -> dict:
    settings = data.get("settings") if isinstance(data, dict) else None
    return settings if isinstance(settings, dict) else {}


def floors_of(data: dict) -> Floors:
    """settings.stats of the run's scenario: how big a significant difference must be to be stated."""
    stats = _settings(data).get("stats")
    return Floors.of(stats if isinstance(stats, dict) else None)


def _exclude_warmup(data: dict) -> bool:
    """settings.exclude_warmup of the run's scenario (first repetitions flagged as warm-up left out)."""
    settings = data.get("settings") if isinstance(data, dict) else None
    return isinstance(settings, dict) and settings.get("exclude_warmup") is True


def build_context(run: Path, baseline: str | None = None) -> dict:
    """The report's data: use case, conclusions, the views in order, more measurements, environment."""
    manifest = read_run_json(run / "manifest.json")
    data = load_data(run / "scenario.yaml") or {}
    sc = read_scenario(data, str(run / "scenario.yaml"))  # the scenario's own checks and defaults
    cases = _read_csv(run / "cases.csv")
    hosts = _read_csv(run / "hosts.csv")
    targets = list(sc.targets)
    baseline = baseline or sc.baseline
    rspec = sc.report
    style = Style(rspec.same_band, rspec.cv_threshold, thresholds_from(rspec.thresholds))
    results = _with_params(_results(run), cases)
    measured = validity_mod.for_summary(results)
    summary = validity_mod.with_validity(
        with_baseline(summarise(measured, _exclude_warmup(data)), baseline,
                      paired=_settings(data).get("order") == "rounds"), measured) \
        if not results.empty else empty_summary()
    if "reps" in summary and _settings(data).get("order") != "rounds":  # rounds that did not run together
        summary = summary.drop(columns="reps")  # pair nothing: Welch on the repetitions instead
    counts: dict[str, int] = {}
    for c in cases:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    tools: dict[str, object] = {n: TOOLS.get(w.tool) for n, w in sc.workloads.items() if w.tool in TOOLS}
    rv = RunView(summary, targets, baseline, style, tools=tools,
                 tool_names={n: w.tool for n, w in sc.workloads.items()},
                 descriptions={n: w.description for n, w in sc.workloads.items()},
                 clients=sc.client_processes(), side_tools={k.tool: k for k in COLLECTORS if k.tool})
    specs = [dict(v) for v in rspec.views] or default_views(rv, list(sc.workloads))
    views = _views(rv, specs, cases, tools)
    per_host.attach_per_host(views, specs, results)  # across hosts: which client gave what, under each view
    floors = floors_of(data)
    generated = (tool_sentences(views, baseline, floors, str(sc.use_case.get("application") or ""))
                 + [(v["title"], view_sentences(v)) for v in views])
    note = single_run_note(views)
    if note:
        generated.append(("", [note]))
    verdicts: dict[str, int] = {}
    for v in views:
        for t in v["tables"]:
            for r in t["rows"]:
                for c in r["cells"]:
                    if c.get("verdict"):
                        verdicts[c["verdict"]] = verdicts.get(c["verdict"], 0) + 1
    validity_mod.mark_tables(views)
    for v in views:  # after the counting and the sentences: a split repeats the baseline's cells
        v["tables"] = [part for t in v["tables"] for part in split_wide(t, baseline)]
    unstable, more_unstable = summary_mod.unstable(summary, style.cv_threshold,
                                                   summary_mod.shown_metrics(specs, tools), cases)
    ctx = {
        "title": sc.name or manifest.get("scenario", "fsbench run"),
        "description": sc.description,
        "use_case": [(k.replace("_", " ").capitalize(), v) for k, v in sc.use_case.items()],
        "conclusions": rspec.conclusions,
        "own_conclusions": paragraphs(rspec.conclusions),
        "generated": [(title, lines) for title, lines in generated if lines],
        "manifest": manifest,
        "counts": counts,
        "total_cases": len(cases),
        "hosts": [h.get("host", "") for h in hosts],
        "host_facts": _host_facts(hosts),
        "targets": [{"name": n, "path": t.path, "description": t.description, "baseline": n == baseline}
                    for n, t in sc.targets.items()],
        "baseline": baseline,
        "floors": floors,
        "failed": [c for c in cases if c["status"] != "ok" and not not_needed(c["status"], c.get("reason") or "")],
        "problems": summary_mod.problems(cases),
        "warnings": per_host.run_warning_groups(read_csv(run / WARNINGS_CSV)) + summary_mod.warnings(cases, results),
        "placement": per_host.placement_groups(read_csv(run / PLACEMENT_CSV)),
        "monitor_groups": monitor_groups.group_tables(results, monitor_groups.host_groups(hosts)),
        "validity": validity_mod.overview(results),
        "warned_ok": sum(1 for c in cases if c.get("status") == "ok" and summary_mod.split_warnings(
            str(c.get("warnings") or ""))),
        "scale": _scale(data.get("scale_run")),
        "unstable": unstable,
        "more_unstable": more_unstable,
        "unstable_count": sum(u["count"] for u in unstable),
        "warmup": summary_mod.warmups(summary),
        "verdicts": verdicts,
        "cv_threshold": f"{style.cv_threshold * 100:.0f}%",
        "same_band": f"{style.same_band * 100:.0f}%",
        "views": views,
        "workloads": [_split_all(_workload(name, w, summary[summary["workload"] == name] if not summary.empty
                                           else summary, targets, baseline, style, rspec.metrics), baseline)
                      for name, w in sc.workloads.items()],
        "variables": {str(k): yaml_text(v) for k, v in sc.variables.items()},
        "templates_folder": rspec.templates,
    }
    ctx["findings"] = check_findings(summary, [dict(f) for f in rspec.findings], floors)
    ctx["summary"] = one_page(ctx)  # the one-page summary and the answer chart: from what is above, no more
    ctx["answer_chart"] = ratio_chart(ctx["summary"]["answers"], baseline, ctx["summary"]["log"]) \
        if ctx["summary"]["answers"] else ""
    return ctx


def _scale(run: object) -> dict | None:
    """The scale the run used and the variables that differ from scale full (scenario.yaml's scale_run)."""
    if not isinstance(run, dict) or "value" not in run:
        return None
    found = run.get("differs")
    differs: dict = found if isinstance(found, dict) else {}
    return {"variable": str(run.get("variable") or "scale"), "value": yaml_text(run["value"]),
            "full": str(run["full"]) if run.get("full") else "",
            "differs": [(str(k), yaml_text(v.get("run")), yaml_text(v.get("full")))
                        for k, v in differs.items() if isinstance(v, dict)]}


#: a line that starts a list item keeps its own line in the scenario's conclusions
LIST_ITEM = re.compile(r"\s*(?:[-*•]|\d+[.)])\s")


def paragraphs(text: str) -> list[str]:
    """The scenario's own conclusions as paragraphs (blank lines apart): the line breaks of a YAML block
    are the author's wrapping, not the reader's, except before a list item."""
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if lines:
            out.append("".join(("\n" if i and LIST_ITEM.match(line) else " " if i else "") + line
                               for i, line in enumerate(lines)))
    return out


def yaml_text(value: object) -> str:
    """A variable's value as the scenario writes it (true, [1, 4, 16], {client1: {}}), not as Python does."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (list, dict)):
        return yaml.safe_dump(value, default_flow_style=True, width=10**6, sort_keys=False, allow_unicode=True).strip()
    return str(value)


def _views(rv: RunView, specs: list[dict], cases: list[dict], tools: dict[str, object]) -> list[dict]:
    """Every view of the report in order; one with nothing to show says why instead of vanishing."""
    views = []
    anchors: set[str] = set()
    for spec in specs:
        v = build_view(rv, spec)
        if not v["tables"] and not v["charts"]:
            v["empty"] = why_empty(spec, cases, rv.summary, tools)
        anchor, n = v["anchor"], 1
        while v["anchor"] in anchors:  # two views of one workload and shape (at 20 and at 100)
            n += 1
            v["anchor"] = f"{anchor}-{n}"
        anchors.add(v["anchor"])
        views.append(v)
    return views


def _split_all(workload: dict, baseline: str) -> dict:
    for key in ("tables", "extra_tables"):
        workload[key] = [part for t in workload[key] for part in split_wide(t, baseline)]
    return workload


def _host_facts(hosts: list[dict]) -> list[tuple[str, list[str]]]:
    """Facts as rows and hosts as columns: easier to read than a wide table."""
    keys: list[str] = []
    for h in hosts:
        keys += [k for k in h if k != "host" and k not in keys]
    rows = []
    for k in keys:
        values = [h.get(k, "") for h in hosts]
        if k == "memory_bytes":
            values = [format_value(float(v), "B") if is_whole_number(str(v)) else v for v in values]
        rows.append((k.replace("_bytes", "").replace("mount_", "mount: ").replace("_", " "), values))
    return rows


def _point_labels(df: pd.DataFrame, pcols: list[str]) -> list[str]:
    """Each row's sweep point as text (numjobs=4 iodepth=16), column by column (apply by row took 0.5 s)."""
    names = [c.removeprefix("param_") for c in pcols]
    return [" ".join(f"{n}={v}" for n, v in zip(names, values) if str(v) != "")
            for values in zip(*(df[c].tolist() for c in pcols))]


def _workload(name: str, w: Workload, sub: pd.DataFrame, targets: list[str], baseline: str, style: Style,
              metrics: dict[str, list[str]]) -> dict:
    """Every measurement of one workload, for engineers: each metric its tool reported (or the scenario's
    `report.metrics` of it), a pivot per swept value, % of the best, the tool's own statistics (tables only:
    the charts are the views')."""
    tool = w.tool
    plugin = TOOLS.get(tool) if tool in TOOLS else None
    out: dict = {"name": name, "tool": tool, "description": w.description,
                 "options": {str(k): yaml_text(v) for k, v in w.options.items()},
                 "tables": [], "extra_tables": []}
    if sub.empty:
        return out
    present = [t for t in targets if t in set(sub["target"])]
    peak = (sub["tool"] == "monitor") & (sub["metric"] == "memory_peak")  # a peak is the value to compare
    # tools that report their own summary (mdtest's Max / Min / Mean / Std Dev) get that table whole
    summarising = set(sub.loc[sub["stat"].isin(["max", "min", "stddev"]) & (sub["tool"] != "monitor"), "tool"])
    tool_stats = sub[sub["tool"].isin(summarising) & sub["stat"].isin(["max", "min", "mean", "stddev"])]
    main = sub[sub["stat"].isin(["value", "mean"]) | peak]
    keep = ~((main["tool"] == "monitor") & ~main["metric"].isin(MONITOR_METRICS))
    for t, wanted in metrics.items():
        keep &= ~((main["tool"] == t) & ~main["metric"].isin(wanted))
    main = main[keep]
    primary = list(metrics.get(tool) or declarations(plugin).primary_metrics)
    pcols = [c for c in main.columns if c.startswith("param_") and (main[c].astype(str) != "").any()]
    main = main.assign(point=_point_labels(main, pcols) if pcols else "")
    if len(pcols) == 1 and main[pcols[0]].nunique() > 1:
        out["tables"] = pivot_tables(main, pcols[0], present, baseline, style, name,
                                     primary or sorted(set(main["metric"]))[:3], plugin)
    else:
        for point, psub in main.groupby("point", sort=False):
            out["tables"].append(compare_table(psub, present, baseline, style, name, str(point), plugin))
    if len(present) > 1:
        firsts = main[(main["tool"] != "monitor") & main["metric"].isin(summary_mod.PRIMARY)]
        for point, psub in firsts.groupby("point", sort=False):
            out["extra_tables"].append(best_table(psub, present, f"% of the best{' · ' + point if point else ''}",
                                                  plugin))
    if not tool_stats.empty:
        for t in present:
            out["extra_tables"].append(stats_table(tool_stats, t))
    return out
