"""Every page of the built book, as a reader sees it: headless Chromium, file://, no network.

The README's test command does not build the book, so this module skips unless
told where a fresh build is:

    jupyter-book build . --all -W -n --keep-going
    LAGTHEORY_RENDERED_BOOK=_build/html python -m pytest tests/test_rendered_book.py

``.ci/run`` does exactly that after its book build. Each page must load with no
MathJax error, nothing wider than the content column outside a scroll container,
no Markdown table left as text, no stream output split into boxes, no console
error and no network request (see ``tests/browser_check.py``); every internal
link and anchor must resolve. A screenshot of every page (1400 px wide, full
height) is saved under ``_build/screenshots/`` so a change in the look can be seen,
with ``scrolling-boxes.txt``: the equations, outputs and tables a reader has to
scroll sideways (allowed, but worth shortening).
"""

import os
from pathlib import Path

import browser_check
import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = os.environ.get("LAGTHEORY_RENDERED_BOOK")
SCREENSHOTS = ROOT / "_build" / "screenshots"
HOW = (
    "the rendered book is checked only after a build: run `jupyter-book build . --all -W -n --keep-going`, "
    "then `LAGTHEORY_RENDERED_BOOK=_build/html python -m pytest tests/test_rendered_book.py` "
    "(needs apt-get install chromium chromium-driver; .ci/run does both)"
)

pytestmark = pytest.mark.skipif(not SITE, reason=HOW)


def _site() -> Path:
    site = (ROOT / SITE).resolve() if SITE else ROOT
    if not (site / "index.html").is_file():
        pytest.fail(f"LAGTHEORY_RENDERED_BOOK={SITE}: no index.html there; {HOW}")
    return site


def _pages() -> list[str]:
    if not SITE:
        return []
    return [str(p.relative_to(_site())) for p in browser_check.book_pages(_site())]


@pytest.fixture(scope="module")
def driver():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "scrolling-boxes.txt").write_text("", encoding="utf-8")
    browser, driver_path = browser_check.chromium_paths()
    if not (browser and driver_path):
        pytest.fail(f"Chromium and chromedriver are needed: apt-get install chromium chromium-driver; {HOW}")
    driver = browser_check.start_browser()
    yield driver
    driver.quit()


def test_the_book_has_its_pages():
    pages = _pages()
    assert "index.html" in pages and "book/intro.html" in pages and "book/claim_map.html" in pages, pages
    assert len(pages) >= 20, pages


@pytest.mark.parametrize("page", _pages())
def test_page_reads_cleanly(driver, page):
    site = _site()
    screenshot = SCREENSHOTS / (page.removesuffix(".html").replace("/", "__") + ".png")
    problems = browser_check.check_page(driver, site / page, screenshot=screenshot)
    # not a failure: what a reader must scroll sideways to see, listed for authors to shorten
    with (SCREENSHOTS / "scrolling-boxes.txt").open("a", encoding="utf-8") as report:
        report.writelines(f"{page}: {box}\n" for box in browser_check.scrolling_boxes(driver))
    assert problems == [], f"{page}:\n" + "\n".join(problems)


def test_internal_links_and_anchors_resolve():
    site = _site()
    problems = browser_check.check_links(browser_check.book_pages(site), site)
    assert problems == [], "\n".join(problems)
