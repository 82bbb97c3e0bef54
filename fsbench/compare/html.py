"""A comparison as one self-contained HTML page (Jinja in the report's sandbox, autoescaped; inline CSS,
nothing fetched)."""

from __future__ import annotations

from fsbench.compare.model import TEXT_MARKS, Comparison
from fsbench.compare.view import build_view
from fsbench.report import template_env

TEMPLATE = "compare.html.j2"


def render(c: Comparison) -> str:
    """The comparison page, from fsbench's own template only (names and reasons from run directories go in
    as text: autoescaped, in the sandbox)."""
    env = template_env.environment()
    assert env.autoescape is not False
    view = build_view(c, TEXT_MARKS)
    # the template's one line of method: the floors, and per run what was tested at which false-discovery rate
    notes = [f"Floors: {view['floors']}", *(f"{r['info'].label}: {r['tests']}" for r in view["runs"] if r["tests"])]
    view["metrics"] = ". ".join([view["metrics"], *notes])
    return template_env.render(env, TEMPLATE, view)
