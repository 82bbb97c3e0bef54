"""Render report.html with Jinja2; a top-level templates/ folder overrides the packaged template."""

from __future__ import annotations

import os
from pathlib import Path

import jinja2

from fsbench.report.context import build_context
from fsbench.report.tables import command_line

PACKAGE_TEMPLATES = Path(__file__).parent / "templates"


def environment(extra: Path | None = None) -> jinja2.Environment:
    """Templates from ./templates (or extra) first, then the packaged ones."""
    paths = [p for p in (extra, Path.cwd() / "templates") if p and p.is_dir()] + [PACKAGE_TEMPLATES]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([str(p) for p in paths]),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["command_line"] = command_line  # a client's script shows its mount command, the rest folded
    return env


def write_report(run_dir: str | Path, output: str | Path | None = None, baseline: str | None = None) -> Path:
    """Build the report of a run directory; returns the file written."""
    run = Path(run_dir)
    ctx = build_context(run, baseline)
    out = Path(output) if output else run / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    rel = Path(os.path.relpath(run.resolve(), out.resolve().parent))
    ctx["results_href"] = (rel / "results.csv").as_posix()
    ctx["cases_href"] = (rel / "cases.csv").as_posix()
    html = environment().get_template("report.html.j2").render(**ctx)
    out.write_text(html)
    return out
