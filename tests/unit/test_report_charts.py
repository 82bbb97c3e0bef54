"""The report's charts: drawn only by its views, and report.md points to exactly those."""

from __future__ import annotations

from fsbench.report.html import write_report
from fsbench.report.markdown import write_markdown_report
from tests.unit.test_markdown_report import make_run


def test_report_md_points_only_to_charts_the_html_report_draws(tmp_path):
    run = make_run(tmp_path / "reports")
    html = write_report(run).read_text()
    md = write_markdown_report(run).read_text()
    titles = [line.split(": ", 1)[1].rstrip(".*").split("; ") for line in md.splitlines()
              if line.startswith("*Charts in")]
    assert titles and " charts in " not in md  # the workloads' own sections draw none
    answer = html.count('id="answer-chart"')  # the summary's chart of every view's ratios is not a view's
    drawn = html.count("<figure") - answer
    assert sum(len(t) for t in titles) == drawn == html.count("<svg") - answer
