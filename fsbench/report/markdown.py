"""report.md: the HTML report's content as GitHub-flavoured Markdown, for wikis and pull requests."""

from __future__ import annotations

import os
import re
from pathlib import Path

from fsbench.report.context import build_context


def escape(text: object) -> str:
    """Text that Markdown (and the HTML GitHub allows in it) shows as written."""
    s = str(text)
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code(text: object) -> str:
    """An inline code span that survives backticks inside it."""
    s = str(text)
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


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
    if ctx["description"]:
        out += [escape(ctx["description"]), ""]
    out += [f"Run {code(m.get('run_id', ''))} · {m.get('started', '')} → {m.get('ended') or 'unfinished'} · "
            f"status **{m.get('status', '')}** · scenario hash {code(m.get('scenario_hash', ''))} · "
            f"fsbench {m.get('fsbench_version', '')}", ""]
    out += ["## Summary", ""]
    counts = ", ".join(f"{n} {escape(status)}" for status, n in ctx["counts"].items())
    out += [f"{ctx['total_cases']} cases: {counts}. Baseline target **{escape(ctx['baseline'])}**; values in "
            "parentheses are the ratio to it (✅ better, ❌ worse, by more than 5 %; ⚠ repetitions spread "
            "more than 10 %).", ""]
    if ctx["failed"]:
        out += ["### Cases that did not succeed", ""]
        for c in ctx["failed"]:
            out += [f"- {code(c['case_id'])} ({escape(c['status'])})", ""]
            out += ["  " + line for line in _fenced(c.get("reason") or "not run")] + [""]
    if ctx["use_case"]:
        out += ["## Use case", ""]
        out += table(["", ""], [[f"**{escape(label)}**", escape(text)] for label, text in ctx["use_case"]])
    out += _environment(ctx)
    for w in ctx["workloads"]:
        out += _workload(w, ctx["baseline"], html_href)
    links = [f"[results.csv]({results_href}) (one measurement per row)", f"[cases.csv]({cases_href})"]
    if html_href:
        links.append(f"[report.html]({html_href}) (with charts)")
    out += ["---", "", "Raw data: " + " · ".join(links) + f". Rebuild with {code('fsbench report ' + m.get('run_id', ''))}."]
    return "\n".join(out) + "\n"


def _environment(ctx: dict) -> list[str]:
    out = ["## Environment", "", "### Targets (systems under test)", ""]
    out += table(["target", "path", "description"],
                 [[f"**{escape(t['name'])}**" + (" (baseline)" if t["baseline"] else ""),
                   code(t.get("path", "")) if t.get("path") else "", escape(t.get("description") or "")]
                  for t in ctx["targets"]])
    if ctx["hosts"]:
        out += ["### Hosts", ""]
        out += table(["", *(escape(h) for h in ctx["hosts"])],
                     [[f"**{escape(label)}**", *(escape(v) for v in values)] for label, values in ctx["host_facts"]])
    if ctx["variables"]:
        out += ["Variables: " + " ".join(code(f"{k}={v}") for k, v in ctx["variables"].items()), ""]
    return out


def _workload(w: dict, baseline: str, html_href: str) -> list[str]:
    out = [f"## {escape(w['name'])} ({escape(w['tool'])})", ""]
    if w["description"]:
        out += [escape(w["description"]), ""]
    if w["options"]:
        out += [" ".join(code(f"{k}={v}") for k, v in w["options"].items()), ""]
    if not w["tables"]:
        out += ["*No results for this workload.*", ""]
    for t in w["tables"]:
        if t["point"]:
            out += [f"### {escape(t['point'])}", ""]
        head = ["operation", "metric", *(escape(x) + (" (baseline)" if x == baseline else "") for x in t["targets"])]
        rows = [[r["operation"], r["metric"], *(_value(c) for c in r["cells"])] for r in t["rows"]]
        out += table(head, rows, ["l", "l", *["r"] * len(t["targets"])])
    if w["charts"]:
        where = f"[report.html]({html_href})" if html_href else "report.html"
        out += [f"*{len(w['charts'])} charts in {where}.*", ""]
    return out


def _value(c: dict) -> str:
    mark = {"better": " ✅", "worse": " ❌"}.get(c["cls"], "")
    ratio = f" {c['ratio'][:-1]}{mark})" if c["ratio"] else ""
    cv = f" {c['cv']}{' ⚠' if c.get('unstable') else ''}" if c["cv"] else ""
    return f"{c['text']}{ratio}{cv}"


def write_markdown_report(run_dir: str | Path, output: str | Path | None = None,
                          baseline: str | None = None) -> Path:
    """Write report.md (default: in the run directory, next to report.html); returns the file written."""
    run = Path(run_dir)
    ctx = build_context(run, baseline)
    out = Path(output) if output else run / "report.md"
    rel = Path(os.path.relpath(run.resolve(), out.resolve().parent))
    html = out.with_suffix(".html") if output else run / "report.html"
    html_href = os.path.relpath(html.resolve(), out.resolve().parent) if html.exists() else ""
    out.write_text(render(ctx, html_href=Path(html_href).as_posix() if html_href else "",
                          results_href=(rel / "results.csv").as_posix(), cases_href=(rel / "cases.csv").as_posix()))
    return out
