"""The shootout report: a page whose table fits a laptop's window and whose numbers stay whole.

The layout is measured in headless Chromium (through Playwright) at a 1400 px
wide window; without them that test is skipped, unless ODEKIT_REQUIRE_BROWSER=1
(as `make test` sets), when it fails instead.
"""

import html
import os
import re
import shutil

import pytest

import odekit
from odekit.report import write_report

REQUIRED = os.environ.get("ODEKIT_REQUIRE_BROWSER") == "1"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The report of the default eight methods on Kepler's orbit: its table has every column of the README's."""
    result = odekit.shootout("kepler", budget=200, t_end=13.0, backend="python")
    return write_report(result, tmp_path_factory.mktemp("report")), result


def test_numbers_never_wrap_and_column_names_break_only_after_underscores(report):
    page, result = report
    text = page.read_text()
    assert re.search(r"\btd \{[^}]*white-space: nowrap", text)
    heads = re.findall(r"<th>(.*?)</th>", text)
    assert [html.unescape(h.replace("<wbr>", "")) for h in heads] == result.columns
    assert all(re.fullmatch(r"[^<]*(_<wbr>[^<]*)*", h) for h in heads)       # a break after each "_", nowhere else


def test_the_table_fits_a_1400_px_window_with_every_cell_on_one_line(report):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install -e '.[test]')")
    if not os.access(CHROMIUM, os.X_OK):
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium, or make test)")
    page_path, result = report
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(page_path.as_uri())
            layout = page.evaluate("""() => {
                const cells = [...document.querySelectorAll("td")].map(td => {
                    const range = document.createRange();
                    range.selectNodeContents(td);
                    return {text: td.textContent, lines: new Set([...range.getClientRects()].map(r => r.top)).size};
                });
                return {page: document.documentElement.scrollWidth,
                        table: document.querySelector("table").getBoundingClientRect().right, cells};
            }""")
        finally:
            browser.close()
    assert layout["page"] <= 1400 and layout["table"] <= 1400, layout
    assert len(layout["cells"]) == len(result.rows) * len(result.columns)
    wrapped = [cell["text"] for cell in layout["cells"] if cell["lines"] != 1]
    assert not wrapped, f"cells broken over lines: {wrapped}"


def _missing(reason):
    if REQUIRED:
        pytest.fail(f"{reason}; ODEKIT_REQUIRE_BROWSER=1 asks for the browser tests to run", pytrace=False)
    pytest.skip(reason)
