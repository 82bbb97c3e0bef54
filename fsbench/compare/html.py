"""A comparison as one self-contained HTML page (Jinja, autoescaped; inline CSS, nothing fetched)."""

from __future__ import annotations

from fsbench.compare.model import TEXT_MARKS, Comparison
from fsbench.compare.view import build_view
from fsbench.report.html import environment

TEMPLATE = "compare.html.j2"


def render(c: Comparison) -> str:
    """The comparison page; a top-level templates/compare.html.j2 overrides the packaged one."""
    env = environment()
    assert env.autoescape is not False  # names and failure reasons from run directories go in as text
    return env.get_template(TEMPLATE).render(**build_view(c, TEXT_MARKS))
