"""report.pdf beside report.html, printed by a headless Chromium (playwright's page.pdf) with the report's print CSS."""

from __future__ import annotations

import shutil
from pathlib import Path

from fsbench.core.errors import FsbenchError

#: Chromium without the parts a local file needs none of (no sandbox: CI containers run as root)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
#: the page number on every page (Chromium fills the classes in)
FOOTER = ('<div style="font-size:8px;width:100%;text-align:center;color:#5b6472">'
          '<span class="title"></span> · page <span class="pageNumber"></span> of '
          '<span class="totalPages"></span></div>')
#: a 1280 px report on landscape A4: at 0.85 its tables fit the width without a second layout
SCALE = 0.85
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def find_browser() -> str:
    """The local Chromium's path, or an error saying what to install."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    raise FsbenchError("--pdf: no Chromium found (looked for " + ", ".join(BROWSERS) + " on PATH); install "
                       "Debian's chromium package (install.sh does) or leave --pdf out for report.html alone")


def write_pdf(html: Path, output: Path | None = None, timeout_s: float = 120.0) -> Path:
    """Print report.html to a PDF (default: beside it); folded sections are opened so the PDF has them all."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        raise FsbenchError("--pdf: the Python package playwright is not installed in fsbench's environment; "
                           "install it (pip install playwright) or leave --pdf out") from None
    out = output or html.with_suffix(".pdf")
    browser_path = find_browser()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=browser_path, args=ARGS, timeout=timeout_s * 1000)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                page.goto(html.resolve().as_uri(), wait_until="load", timeout=timeout_s * 1000)
                page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
                page.emulate_media(media="print")
                page.pdf(path=str(out), landscape=True, format="A4", scale=SCALE, print_background=True,
                         display_header_footer=True, header_template="<div></div>", footer_template=FOOTER,
                         prefer_css_page_size=True)
            finally:
                browser.close()
    except Error as exc:
        raise FsbenchError(f"--pdf: {browser_path} could not print {html}: {str(exc).splitlines()[0]}; "
                           "report.html is written, open it in a browser and print it instead") from None
    return out
