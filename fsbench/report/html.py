"""Render report.html with Jinja2 in a sandbox: a team's templates folder (--templates, or the scenario
`fsbench run` runs) first, by block; a run directory's own scenario.yaml never names them (docs/report.md)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from fsbench.core.errors import FsbenchError
from fsbench.report.context import build_context
from fsbench.report.summary_page import summary_markdown
from fsbench.report.template_env import environment, render

#: what a template may use (docs/report.md, "Templates"): raised when a name is removed or changes meaning
TEMPLATE_CONTEXT_VERSION = 1
#: where the report's text columns keep their strings (pandas' mode.string_storage, only while the report's
#: tables are built): Python objects, not Arrow arrays. The same `str` dtype and semantics either way; the report
#: works on many small frames (a view's rows, a metric's cells), where each Arrow-backed step (take, cast,
#: compare) costs more than the work itself: 0.27 s against 0.19 s for a run of 10 fio cases
#: (docs/benchmarks.md, session 20)
STRING_STORAGE = "python"

__all__ = ["environment", "render_html", "templates_dir", "write_report"]


def templates_dir(given: str | Path | None) -> Path | None:
    """The folder of a team's templates the user named (--templates, or their scenario's), checked."""
    if not given:
        return None
    chosen = Path(given)
    if not chosen.is_dir():
        raise FsbenchError(f"--templates: {chosen} is not a folder of templates; give the folder that holds your "
                           "report.html.j2 (see docs/report.md, Templates), or leave the option out for "
                           "fsbench's own")
    return chosen


def render_html(run: Path, baseline: str | None = None, templates: str | Path | None = None,
                out: Path | None = None, warn: Callable[[str], None] | None = None) -> tuple[str, dict]:
    """The report's HTML and the context it was rendered from. Templates come from `templates` only: the
    run's scenario.yaml may come from someone else, so its report.templates is named in a warning, not used."""
    with pd.option_context("mode.string_storage", STRING_STORAGE):
        ctx = build_context(run, baseline)
    target = out or run / "report.html"
    rel = Path(os.path.relpath(run.resolve(), target.resolve().parent))
    ctx["results_href"] = (rel / "results.csv").as_posix()
    ctx["cases_href"] = (rel / "cases.csv").as_posix()
    ctx["template_context_version"] = TEMPLATE_CONTEXT_VERSION
    folder = templates_dir(templates)
    named = str(ctx.get("templates_folder") or "")
    if named and folder is None and warn is not None:
        warn(f"{run / 'scenario.yaml'} names report templates (report.templates: {named}); they are not used, "
             "as a run directory may come from someone else: to use them, look at them, then pass "
             f"--templates {named}")
    ctx["templates_folder"] = str(folder or "")
    return render(environment(folder), "report.html.j2", ctx), ctx


def write_report(run_dir: str | Path, output: str | Path | None = None, baseline: str | None = None,
                 templates: str | Path | None = None, warn: Callable[[str], None] | None = None) -> Path:
    """Build the report of a run directory (and summary.md beside it); returns the HTML file written.
    `templates`: a folder of the user's templates; `warn` hears of a run's own report.templates, not used."""
    run = Path(run_dir)
    out = Path(output) if output else run / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    html, ctx = render_html(run, baseline, templates, out, warn)
    out.write_text(html)
    (out.parent / "summary.md").write_text(summary_markdown(ctx))
    return out
