"""report.md: the HTML report's content as GitHub-flavoured Markdown, for wikis and pull requests."""

from __future__ import annotations

import os
import re
from pathlib import Path

from fsbench.report.context import build_context
from fsbench.report.md_text import code, escape, findings_markdown

__all__ = ["code", "escape", "render", "table", "write_markdown_report"]


def _cell(text: object) -> str:
    # pipes would end the cell, newlines the row
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def table(head: list[str], rows: list[list[str]], align: list[str] | None = None) -> list[str]:
    """A GitHub table as lines (with a blank line after it); align: 'l' or 'r' per column."""
    marks = ["---:" if a == "r" else "---" for a in (align or ["l"] * len(head))]
    lines = ["| " + " | ".join(_cell(h) for h in head) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _fenced(text: str) -> list[str]:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return [fence, text.rstrip(), fence]


def render(ctx: dict, *, html_href: str = "", results_href: str = "results.csv",
           cases_href: str = "cases.csv") -> str:
    """The report context (fsbench.report.context.build_context) as Markdown."""
    m = ctx["manifest"]
    out = [f"# {escape(ctx['title'])}", ""]
    if ctx.get("description"):
        out += [escape(ctx["description"]), ""]
    out += [f"Run {code(m.get('run_id', ''))} · {m.get('started', '')} → {m.get('ended') or 'unfinished'} · "
            f"status **{m.get('status', '')}** · scenario hash {code(m.get('scenario_hash', ''))} · "
            f"fsbench {m.get('fsbench_version', '')}", ""]
    out += _scale(ctx.get("scale"))
    if ctx.get("use_case"):  # the evaluation guide asks for it first
        out += ["## Use case", ""]
        out += table(["", ""], [[f"**{escape(label)}**", escape(text)] for label, text in ctx["use_case"]])
    out += _conclusions(ctx)
    out += findings_markdown(ctx.get("findings") or [], "##")
    out += _summary(ctx)
    for v in ctx.get("views", []):
        out += _view(v, ctx.get("baseline", ""), html_href)
    out += ["## All measurements", "", "Every metric of every workload, resources included.", ""]
    for w in ctx.get("workloads", []):
        out += _workload(w, ctx.get("baseline", ""))
    out += _environment(ctx)
    links = [f"[results.csv]({results_href}) (one measurement per row)", f"[cases.csv]({cases_href})"]
    if html_href:
        links.append(f"[report.html]({html_href}) (with charts)")
    rebuild = code(f"fsbench report {m.get('run_id', '')} --markdown")
    out += ["---", "", "Raw data: " + " · ".join(links) + f". Rebuild with {rebuild}."]
    return "\n".join(out) + "\n"


def _conclusions(ctx: dict) -> list[str]:
    out = ["## Conclusions", ""]
    if ctx.get("conclusions"):
        out += [escape(ctx["conclusions"]).strip(), ""]
    lines = [line for _title, group in ctx.get("generated", []) for line in group]
    out += [f"- {escape(line)}" for line in lines] + ([""] if lines else [])
    return out


def _view(v: dict, baseline: str, html_href: str) -> list[str]:
    out = [f"## {escape(v['title'])}" + (f" ({escape(v['tool'])})" if v.get("tool") else ""), ""]
    if v.get("description"):
        out += [escape(v["description"]), ""]
    if v.get("empty"):
        out += [f"*{escape(v['empty'])}*", ""]
    for t in v.get("tables", []):
        out += _table(t, baseline)
    if v.get("charts"):
        where = f"[report.html]({html_href})" if html_href else "report.html"
        titles = "; ".join(escape(c.get("title") or c.get("metric", "")) for c in v["charts"])
        out += [f"*Charts in {where}: {titles}.*", ""]
    return out


def _summary(ctx: dict) -> list[str]:
    out = ["## Cases", ""]
    counts = ", ".join(f"{n} {escape(status)}" for status, n in ctx.get("counts", {}).items())
    band, cv = ctx.get("same_band", "5%"), ctx.get("cv_threshold", "10%")
    if len(ctx.get("targets") or []) > 1:
        out += [f"{ctx.get('total_cases', 0)} cases: {counts or 'none'}. Baseline target "
                f"**{escape(ctx.get('baseline', ''))}**; values in parentheses are the ratio to it (✅ better, "
                f"❌ worse, by more than {band} and significant by Welch's t at 95%; [low–high]: the ratio's 95% "
                f"interval; ±: the value's 95% interval; ⚠ wider than ±{cv}).", ""]
    else:  # one system under test: nothing to compare with, no ratios
        out += [f"{ctx.get('total_cases', 0)} cases: {counts or 'none'}. One target, so no ratios "
                f"(±: the value's 95% interval; ⚠ wider than ±{cv}).", ""]
    marks = {"good": "🟢", "fair": "🟡", "poor": "🔴"}
    if ctx.get("verdicts"):
        out += ["Verdicts (the scenario's thresholds, else the tool's own limits): " + ", ".join(
            f"{marks.get(v, '')} {n} {escape(v)}" for v, n in ctx["verdicts"].items()) + ".", ""]
    if ctx.get("unstable"):
        n = ctx.get("unstable_count") or len(ctx["unstable"])
        out += ["<details>", f"<summary>{n} measurements too uncertain for a conclusion (95% interval wider than "
                f"±{cv})</summary>", ""]
        for u in ctx["unstable"]:
            more = f" and {u['more']} more" if u["more"] else ""
            out += [f"- **{escape(u['workload'])}** ({u['count']}): {escape('; '.join(u['items']))}{more}. "
                    f"Fix: {escape(u['fix'])}."]
        out += ["", "</details>", ""]
    warm = ctx.get("warmup") or {}
    if warm.get("count"):
        out += [f"{warm['count']} first repetitions look like a warm-up (far off the others) and were "
                f"{'left out' if warm['excluded'] else 'kept (settings: exclude_warmup: true leaves them out)'}: "
                f"{escape(', '.join(warm['items']))}{_more(warm)}.", ""]
    failed = ctx.get("problems")
    if failed is None:  # older contexts list failed cases one by one
        failed = [{"status": c["status"], "reason": c.get("reason") or "not run", "count": 1,
                   "cases": [c["case_id"]], "more": 0} for c in ctx.get("failed", [])]
    v = ctx.get("validity") or {}
    if v.get("checked") or v.get("unchecked"):
        out += ["### Validity", "", f"{v.get('checked', 0)} measurements checked against the backend's counters, "
                f"{v.get('flagged', 0)} flagged (⛔ in the tables)"
                + (f"; {v['unchecked']} not checked" + (", each for the reason listed below" if v.get("why_unchecked")
                                                        else " (no counter of the storage side covers them)")
                   if v.get("unchecked") else "") + "."
                + (f" Beside them, {v['beside']} figures the collectors recorded "
                   f"({escape(', '.join(v.get('beside_tools') or []))}): the client's or the host's own counts, the "
                   "evidence, not measurements of the storage." if v.get("beside") else ""), ""]
        out += [f"- {u['count']} not checked ({escape(', '.join(u['tools']))}): {escape(u['why'])}"
                for u in (v.get("why_unchecked") or [])]
        out += [f"- {code(f['case'])} {escape(f['operation'])}: {escape(f['detail'])}" for f in v.get("items", [])]
        out += [f"- … and {v['more']} more (results.csv, column validity)"] if v.get("more") else []
        out += [""]
    if ctx.get("warnings"):
        out += ["### Warnings", "", "What the run said about its own figures (a row left out or flagged).", ""]
        for g in ctx["warnings"]:
            ids = ", ".join(code(c) for c in g["cases"]) + (f" and {g['more']} more" if g.get("more") else "")
            out += [f"- {ids}: {escape(str(g['warning']))}"]
        out += [""]
    if failed:
        out += ["### Cases that did not succeed", ""]
        for g in failed:
            ids = ", ".join(code(c) for c in g["cases"]) + (f" and {g['more']} more" if g.get("more") else "")
            out += [f"- {g['count']} × {escape(g['status'])}: {ids}", ""]
            out += ["  " + line for line in _fenced(str(g["reason"]))] + [""]
    return out


def _scale(scale: dict | None) -> list[str]:
    """The scale the run used and how it differs from the full one, in a line."""
    if not scale:
        return []
    line = f"Scale **{escape(scale['value'])}**"
    if scale.get("full") and scale["value"] != scale["full"]:
        parts = [f"{code(n)} {escape(ran)} (at {escape(scale['full'])}: {escape(full)})"
                 for n, ran, full in scale.get("differs", [])]
        line += f", not {escape(scale['full'])}: " + (", ".join(parts) or "the same values") + ". Sizes and " \
            f"times in this report are this run's; {code('--set ' + scale['variable'] + '=' + scale['full'])} " \
            "runs the full one."
    else:
        line += "."
    return [line, ""]


def _environment(ctx: dict) -> list[str]:
    out = ["## Environment", "", "### Targets (systems under test)", ""]
    out += table(["target", "path", "description"],
                 [[f"**{escape(t['name'])}**" + (" (baseline)" if t.get("baseline") else ""),
                   code(t["path"]) if t.get("path") else "", escape(t.get("description") or "")]
                  for t in ctx.get("targets", [])])
    if ctx.get("hosts"):
        out += ["### Hosts", ""]
        out += table(["", *(escape(h) for h in ctx["hosts"])],
                     [[f"**{escape(label)}**", *(escape(v) for v in values)] for label, values in ctx["host_facts"]])
    if ctx.get("variables"):
        out += ["Variables: " + " ".join(code(f"{k}={v}") for k, v in ctx["variables"].items()), ""]
    return out


def _workload(w: dict, baseline: str) -> list[str]:
    out = [f"## {escape(w['name'])} ({escape(w['tool'])})", ""]
    if w.get("description"):
        out += [escape(w["description"]), ""]
    if w.get("options"):
        out += [" ".join(code(f"{k}={v}") for k, v in w["options"].items()), ""]
    if not w.get("tables"):
        out += ["*No results for this workload.*", ""]
    for t in [*w.get("tables", []), *w.get("extra_tables", [])]:
        out += _table(t, baseline)
    return out


def _table(t: dict, baseline: str) -> list[str]:
    """A report table: labels on the left, value cells on the right (both context shapes)."""
    title = t.get("title") or t.get("point") or ""
    out = [f"### {escape(title)}", ""] if title else []
    targets = t.get("targets", [])
    head = t.get("head") or ["operation", "metric", *targets]
    if t.get("groups"):  # a column per metric of each target: one header row names both
        per = int(t.get("per_target") or 1)
        lead = len(head) - len(t["groups"]) * per
        head = [*head[:lead], *(f"{g}{' (baseline)' if g == baseline else ''} · {h}"
                                for i, g in enumerate(t["groups"]) for h in head[lead + i * per:lead + (i + 1) * per])]
        head = [escape(h) for h in head]
    else:
        head = [escape(h) + (" (baseline)" if h == baseline and h in targets and len(targets) > 1 else "")
                for h in head]
    rows, n_labels = [], 0
    for r in t["rows"]:
        if r.get("section") is not None:  # a block's heading row: bold in the first column
            rows.append([f"**{escape(r['section'])}**", *([""] * (len(head) - 1))])
            continue
        labels = r.get("labels") or [r["operation"], r["metric"]]
        n_labels = len(labels)
        rows.append([*(escape(x) for x in labels), *(_value(c) for c in r["cells"])])
    return out + table(head, rows, ["l"] * n_labels + ["r"] * (len(head) - n_labels))


def _value(c: dict) -> str:
    mark = {"better": " ✅", "worse": " ❌"}.get(c.get("cls", ""), "")
    ratio = f" {c['ratio'][:-1]}{' ' + c['interval'] if c.get('interval') else ''}{mark})" if c.get("ratio") else ""
    cv = f" {c['cv']}{' ⚠' if c.get('unstable') else ''}" if c.get("cv") else ""
    verdict = {"good": " 🟢", "fair": " 🟡", "poor": " 🔴"}.get(c.get("verdict", ""), "")
    flag = f" ⛔{c.get('mark') or ''}" if c.get("validity") == "flagged" else ""  # its words: under Validity
    return f"{escape(c['text'])}{ratio}{cv}{verdict}{flag}"


def write_markdown_report(run_dir: str | Path, output: str | Path | None = None,
                          baseline: str | None = None) -> Path:
    """Write report.md (default: in the run directory, next to report.html); returns the file written."""
    run = Path(run_dir)
    ctx = build_context(run, baseline)
    out = Path(output) if output else run / "report.md"
    rel = Path(os.path.relpath(run.resolve(), out.resolve().parent))
    html = out.with_suffix(".html") if output else run / "report.html"
    html_href = os.path.relpath(html.resolve(), out.resolve().parent) if html.exists() else ""
    out.parent.mkdir(parents=True, exist_ok=True)
    text = render(ctx, html_href=Path(html_href).as_posix() if html_href else "",
                  results_href=(rel / "results.csv").as_posix(), cases_href=(rel / "cases.csv").as_posix())
    out.write_text(text, encoding="utf-8")  # marks are not ASCII, whatever the locale
    return out


def _more(group: dict) -> str:
    """' and 12 more' where a list was cut."""
    return f" and {group['more']} more" if group.get("more") else ""
