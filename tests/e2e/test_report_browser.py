"""The report in a real headless Chromium: renders, no console error, no request leaves the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import require, run_cli, write_scenario
from tests.paths import REPO

ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    require("fio")
    tmp = tmp_path_factory.mktemp("browser")
    scenario = write_scenario(tmp, f"""\
        name: browser
        description: a report for the browser test
        use_case: {{application: checking the report, data_scale: a few MiB}}
        targets:
          a: {{path: {tmp}, baseline: true}}
          b: {{path: {tmp}, description: 对象存储上的文件系统}}
        workloads:
          w:
            tool: fio
            options: {{rw: randrw, bs: 4k, size: 2m}}
            sweep: {{product: {{numjobs: [1, 2, 4]}}}}
        """)
    run = Path(run_cli("run", str(scenario), "-o", str(tmp / "out"), check=True).stdout.splitlines()[0])
    return run / "report.html"


def test_report_in_headless_chromium(report):
    from playwright.sync_api import sync_playwright

    chromium = require("chromium")
    requests, errors = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(report.as_uri(), wait_until="load")
            assert page.title() == "browser · fsbench report"
            # one swept parameter: per thread count a table of targets x metrics (seed 004's layout),
            # then a chart per target of each operation against numjobs
            assert page.locator("section.view table.results.by_value").count() == 3
            assert page.locator("section.view h3", has_text="numjobs=4").count() == 1
            head = page.locator("section.view table.results.by_value").first.locator("th").all_inner_texts()
            assert head[1:5] == ["read bandwidth", "read iops", "write bandwidth", "write iops"], head
            assert page.locator("section.view figure svg").count() >= 2
            cells = page.locator("section.view table.results td.num")
            assert cells.count() > 0 and "(1.00)" in cells.first.inner_text()
            # the use case, then the conclusions, then the tables; nothing wider than the page
            order = page.evaluate("""() => ['use-case', 'conclusions'].map(id =>
                document.getElementById(id).getBoundingClientRect().top)
                .concat([document.querySelector('section.view').getBoundingClientRect().top])""")
            assert order == sorted(order)
            assert page.evaluate("document.documentElement.scrollWidth") <= 1200
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert requests == [report.as_uri()], f"the report fetched something: {requests}"
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


def test_chinese_text_is_drawn_with_a_font_that_has_its_glyphs(report):
    """Seeds 000 and 004 are in Chinese: a target's Chinese description is drawn by a real CJK font (the
    platform fonts Chromium used for it, as its DevTools report them), not as empty boxes."""
    from playwright.sync_api import sync_playwright

    chromium = require("chromium")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.goto(report.as_uri(), wait_until="load")
            cell = page.locator("td", has_text="对象存储上的文件系统").first
            assert cell.count() == 1
            cell.evaluate("e => e.id = 'cjk-cell'")
            cdp = page.context.new_cdp_session(page)
            cdp.send("DOM.enable")
            cdp.send("CSS.enable")
            root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
            node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "#cjk-cell"})["nodeId"]
            fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        finally:
            browser.close()
    drawn = sum(f["glyphCount"] for f in fonts)
    assert drawn >= 10 and any("WenQuanYi" in f["familyName"] or "CJK" in f["familyName"] for f in fonts), fonts
