"""Render report.html with Jinja2: a team's templates folder (--templates or report.templates) first, by block."""

from __future__ import annotations

import os
from pathlib import Path

import jinja2

from fsbench.core.errors import FsbenchError
from fsbench.report.context import build_context
from fsbench.report.summary_page import ratio_text, summary_markdown
from fsbench.report.tables import command_line

PACKAGE_TEMPLATES = Path(__file__).parent / "templates"
#: what a template may use (docs/report.md, "Templates"): raised when a name is removed or changes meaning
TEMPLATE_CONTEXT_VERSION = 1


def environment(templates: Path | None = None) -> jinja2.Environment:
    """Templates from `templates` first, then the packaged ones; `fsbench/NAME` is always the packaged one
    (so a team's report.html.j2 can extend fsbench's and replace only some blocks). Nothing is read from
    the working directory: a report must not depend on where it is built."""
    own = jinja2.FileSystemLoader(str(PACKAGE_TEMPLATES))
    loaders: list[jinja2.BaseLoader] = [jinja2.PrefixLoader({"fsbench": own}, delimiter="/")]
    if templates is not None:
        loaders.append(jinja2.FileSystemLoader(str(templates)))
    env = jinja2.Environment(loader=jinja2.ChoiceLoader([*loaders, own]),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["command_line"] = command_line  # a client's script shows its mount command, the rest folded
    env.filters["ratio_text"] = ratio_text
    return env


def templates_dir(run: Path, given: str | Path | None, scenario_value: str) -> Path | None:
    """The folder of a team's templates: --templates, else the scenario's report.templates; checked."""
    chosen, where = (Path(given), "--templates") if given else (
        (Path(scenario_value), f"{run / 'scenario.yaml'}: report.templates") if scenario_value else (None, ""))
    if chosen is None:
        return None
    if not chosen.is_dir():
        raise FsbenchError(f"{where}: {chosen} is not a folder of templates; give the folder that holds your "
                           "report.html.j2 (see docs/report.md, Templates), or leave the option out for "
                           "fsbench's own")
    return chosen


def render_html(run: Path, baseline: str | None = None, templates: str | Path | None = None,
                out: Path | None = None) -> tuple[str, dict]:
    """The report's HTML and the context it was rendered from."""
    ctx = build_context(run, baseline)
    target = out or run / "report.html"
    rel = Path(os.path.relpath(run.resolve(), target.resolve().parent))
    ctx["results_href"] = (rel / "results.csv").as_posix()
    ctx["cases_href"] = (rel / "cases.csv").as_posix()
    ctx["template_context_version"] = TEMPLATE_CONTEXT_VERSION
    folder = templates_dir(run, templates, str(ctx.get("templates_folder") or ""))
    ctx["templates_folder"] = str(folder or "")
    try:
        html = environment(folder).get_template("report.html.j2").render(**ctx)
    except jinja2.TemplateError as exc:  # a team's template: say which file and line
        where = f"{getattr(exc, 'filename', None) or 'report.html.j2'}:{getattr(exc, 'lineno', None) or '?'}"
        raise FsbenchError(f"{where}: the report template does not render: {exc}; fix the template (the names "
                           "a template may use are in docs/report.md, Templates)") from None
    return html, ctx


def write_report(run_dir: str | Path, output: str | Path | None = None, baseline: str | None = None,
                 templates: str | Path | None = None) -> Path:
    """Build the report of a run directory (and summary.md beside it); returns the HTML file written."""
    run = Path(run_dir)
    out = Path(output) if output else run / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    html, ctx = render_html(run, baseline, templates, out)
    out.write_text(html)
    (out.parent / "summary.md").write_text(summary_markdown(ctx))
    return out
