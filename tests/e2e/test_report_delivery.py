"""The report where stakeholders read it (issue 27): a team's templates by block (the repository's example and
a scenario's report.templates), report.pdf printed by the real Chromium, the one-page summary (also summary.md)
and the answer chart the report opens with.

Run directories are built from genuine tool outputs (tests/e2e/test_example_scenarios.build_run) and the
report is built by the CLI, as a user would.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import require, run_cli
from tests.e2e import test_seed_reports
from tests.e2e.test_example_scenarios import build_run
from tests.e2e.test_seed_reports import META_ENGINES
from tests.paths import REPO

QUICKSTART = REPO / "scenarios" / "quickstart.yaml"
EXAMPLE = REPO / "templates"

browser = test_seed_reports.browser  # the seed reports' Chromium fixture, one per module




def _page(browser, report: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(report.as_uri(), wait_until="load")
    return page, errors


def _report(*args: str, cwd: Path | None = None) -> list[str]:
    proc = run_cli("report", *args, cwd=cwd, check=True)
    return proc.stdout.splitlines()


def test_example_templates_restyle_a_seed_report_by_block(tmp_path, browser):
    run = build_run(tmp_path, META_ENGINES, [])
    [html] = _report(str(run), "--templates", str(EXAMPLE))
    page, errors = _page(browser, Path(html))
    assert errors == []
    # the example's blocks: its header with the logo and colours, its appendix
    assert page.locator("header.house .house-logo svg title").text_content() == "Example Storage Team"
    assert page.locator("header.house .house-logo svg").bounding_box()["width"] > 50
    assert page.locator("header.house h1").evaluate("e => getComputedStyle(e).color") == "rgb(0, 76, 151)"
    assert "Appendix: how to read this report" in page.locator("#appendix h2").inner_text()
    assert "Template context version 1" in page.locator("#appendix").inner_text()
    assert page.title().endswith("· Example Storage Team")
    # every block it left alone is fsbench's own: the summary, conclusions, the seed's views, the environment
    for section in ("#summary", "#conclusions", "#environment", "#more"):
        assert page.locator(section).count() == 1, section
    assert page.locator("section.view").count() >= 4
    page.close()


def test_a_runs_own_templates_are_used_only_through_templates_and_cwd_is_not_read(tmp_path, browser):
    """A run's report.templates (resolved beside its scenario file) is named in a warning by a plain `fsbench
    report RUN`, never used (the run directory may come from someone else: test_template_safety.py); given
    with --templates it restyles the report. A ./templates where the command runs is never read."""
    src = tmp_path / "src"
    (src / "house").mkdir(parents=True)
    (src / "house" / "report.html.j2").write_text(
        '{% extends "fsbench/report.html.j2" %}\n'
        '{% block conclusions %}<section id="conclusions"><h2>Our reading</h2>'
        '<p id="ours">Decided by the storage team.</p></section>{% endblock %}\n')
    scenario = src / "quickstart.yaml"
    scenario.write_text(QUICKSTART.read_text() + "\nreport:\n  templates: house\n")
    run = build_run(tmp_path / "runs", scenario, ["scale=smoke"])
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "templates").mkdir(parents=True)
    (elsewhere / "templates" / "report.html.j2").write_text("<p id='cwd'>from the working directory</p>\n")
    plain = run_cli("report", str(run), cwd=elsewhere, check=True)
    assert f"--templates {src / 'house'}" in plain.stderr
    assert 'id="ours"' not in (run / "report.html").read_text()
    [html] = _report(str(run), "--templates", "../src/house", cwd=elsewhere)
    page, errors = _page(browser, Path(html))
    assert errors == []
    assert page.locator("#ours").inner_text() == "Decided by the storage team."
    assert page.locator("#conclusions h2").inner_text() == "Our reading"
    assert page.locator("#cwd").count() == 0 and page.locator("section.view").count() >= 4
    page.close()
    # a folder that is not there is refused with where it came from and what to do
    bad = run_cli("report", str(run), "--templates", str(tmp_path / "nope"))
    assert bad.returncode != 0 and "--templates" in bad.stderr and "is not a folder of templates" in bad.stderr


def test_pdf_of_a_seed_report_has_the_summary_on_page_one_and_numbered_pages(tmp_path):
    require("chromium")
    require("pdftotext")
    run = build_run(tmp_path, QUICKSTART, ["scale=smoke"])
    html, pdf = _report(str(run), "--pdf", "--templates", str(EXAMPLE))
    assert Path(pdf) == Path(html).with_suffix(".pdf") and Path(pdf).read_bytes().startswith(b"%PDF")
    info = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    assert 2 <= pages <= 40, pages

    def text(first: int, last: int) -> str:
        return subprocess.run(["pdftotext", "-layout", "-f", str(first), "-l", str(last), pdf, "-"],
                              capture_output=True, text=True, check=True).stdout

    one = text(1, 1)
    for words in ("Summary", "Question:", "Answer per item", "Flagged", "Not run here", "scale smoke, not full"):
        assert words in one, words
    assert f"page 1 of {pages}" in one
    everything = text(1, pages)
    assert f"page {pages} of {pages}" in everything
    # the folded parts are printed too (All measurements, the example's appendix), and the views' tables
    assert "Appendix: how to read this report" in everything and "rand-write-4k" in everything
    assert "All measurements" in everything


def test_quickstart_report_opens_with_the_answer_chart_and_summary_md(tmp_path, browser):
    run = build_run(tmp_path, QUICKSTART, ["scale=smoke"])
    [html] = _report(str(run))
    page, errors = _page(browser, Path(html))
    assert errors == []
    # the first chart of the page is the answer's, in the summary, before the first view
    first = page.locator("figure").first
    assert first.get_attribute("id") == "answer-chart"
    assert page.evaluate("""() => { const s = document.querySelector('#summary');
        const v = document.querySelector('section.view');
        return !!(s.compareDocumentPosition(v) & Node.DOCUMENT_POSITION_FOLLOWING); }""")
    assert first.locator("svg").bounding_box()["height"] > 100
    # accessible: the chart's numbers in the table beside it, one row per measurement, one column per target
    rows = page.locator("table.answer-numbers tr")
    assert rows.count() == 1 + 8
    assert page.locator("table.answer-numbers th").all_inner_texts() == ["measurement", "disk ÷ tmpfs"]
    assert re.fullmatch(r"\d\.\d+×( \[\d\.\d+–\d\.\d+\])?", rows.nth(1).locator("td.num").inner_text().strip())
    # numjobs 1 and 4: a sweep of two values gets its line chart by default
    assert page.locator("section.view.chart figure svg").count() >= 1
    page.close()
    md = (Path(html).parent / "summary.md").read_text()
    assert md.startswith("# quickstart: summary")
    for words in ("**Question:** a scratch area", "## Answer", "| measurement | disk |", "## Flagged",
                  "## Not run here", "- scale smoke, not full: runtime 1s (at full: 60s)"):
        assert words in md, words


def test_meta_engines_report_opens_with_the_answer_chart(tmp_path, browser):
    run = build_run(tmp_path, META_ENGINES, [])
    [html] = _report(str(run))
    page, errors = _page(browser, Path(html))
    assert errors == [] and page.locator("figure").first.get_attribute("id") == "answer-chart"
    heads = page.locator("table.answer-numbers th").all_inner_texts()
    assert heads[0] == "measurement" and len(heads) == 1 + 5  # five engines against redis-always
    page.close()
