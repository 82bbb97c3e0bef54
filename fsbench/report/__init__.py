"""The HTML report: context from the run directory, matplotlib figures, a Jinja template."""

from fsbench.report.html import write_report

__all__ = ["write_report"]
