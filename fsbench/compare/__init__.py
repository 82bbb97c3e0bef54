"""Run-to-run comparison: cases matched by what they ran, verdicts with tolerance bands and Welch's t-test."""

from fsbench.compare.history import history
from fsbench.compare.match import compare, compare_runs
from fsbench.compare.model import MARKS, VERDICTS, Comparison, RunInfo, exit_code
from fsbench.compare.runs import RunData, load_run
from fsbench.compare.tolerance import ToleranceError, parse_metrics, parse_tolerances, tolerance_for

__all__ = ["MARKS", "VERDICTS", "Comparison", "RunData", "RunInfo", "ToleranceError", "compare", "compare_runs",
           "exit_code", "history", "load_run", "parse_metrics", "parse_tolerances", "to_html", "to_markdown",
           "tolerance_for"]


def to_markdown(comparison: Comparison) -> str:
    """GitHub-flavoured Markdown of a comparison (for pull requests and wikis)."""
    from fsbench.compare.markdown import render

    return render(comparison)


def to_html(comparison: Comparison) -> str:
    """A self-contained HTML page of a comparison (inline CSS, nothing fetched)."""
    from fsbench.compare.html import render

    return render(comparison)
