"""The rendered-page checker (tests/browser_check.py) on small pages, each with one planted defect.

Each fixture is a page shaped like the book's (an ``article.bd-article`` column)
that is clean except for one defect a reader would trip over; the checker must
name that defect and nothing else, and must pass the clean page. These need
Chromium and chromedriver (Debian: ``apt-get install chromium chromium-driver``);
without them the tests skip, unless ``LAGTHEORY_REQUIRE_BROWSER=1`` (set by
``.ci/run``, which installs both) makes a missing browser a failure.
"""

import os
from pathlib import Path

import browser_check
import pytest

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>fixture</title>
<style>
body {{ margin: 0; }}
article.bd-article {{ width: 600px; margin-left: 100px; }}
pre {{ overflow-x: auto; }}
</style>
{head}
</head><body><main><article class="bd-article">
<section id="top"><h1>A page</h1>
<p>Prose with a <a href="#top">link to the top</a> and one to <a href="other.html#there">another page</a>.</p>
<div class="cell_output"><div class="output stream"><pre>one box of printed output</pre></div></div>
{body}
</section></article></main></body></html>
"""

OTHER = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>other</title></head><body><p id="there">x</p></body></html>'

CLEAN_BODY = """
<div class="cell_input"><pre>lines = ["| a | b |", "|---|---|"]  # table syntax in code is fine</pre></div>
<div style="overflow-x: auto"><div style="width: 1500px">a wide table inside a scroll container</div></div>
<table><tr><td>a</td><td>b</td></tr></table>
"""

DEFECTS = {
    "mathjax error": (
        '<span><mjx-merror data-mjx-error="Undefined control sequence \\foo">\\foo</mjx-merror></span>',
        "MathJax error: Undefined control sequence",
    ),
    "wide element": (
        '<div style="width: 900px">a display equation that runs off the column</div>',
        "wider than the content column",
    ),
    "wide element in a clipping box": (
        '<div style="overflow: hidden"><div style="width: 900px">cut off</div></div>',
        "wider than the content column",
    ),
    "markdown table": ("<p>| row | task |\n|—|—|\n| 1 | languages |</p>", "literal Markdown table syntax"),
    "unmerged streams": (
        '<div class="cell_output"><div class="output stream"><pre>row 1</pre></div><div class="output stream"><pre>row 2</pre></div></div>',
        "streams not merged",
    ),
    "console error": ('<script>console.error("planted error")</script>', "console error"),
    "script exception": ("<script>undefinedFunction()</script>", "console error"),
    "missing resource": ('<img src="_static/missing.png" alt="x">', "console error"),
    # a blocked request also logs a failed load: both lines name the address
    "network request": ('<img src="https://example.org/logo.png" alt="x">', "https://example.org/logo.png"),
}


def _browser_or_skip():
    browser, driver = browser_check.chromium_paths()
    if browser and driver:
        return
    message = "Chromium and chromedriver not found: apt-get install chromium chromium-driver (.ci/run installs them)"
    if os.environ.get("LAGTHEORY_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def driver():
    _browser_or_skip()
    driver = browser_check.start_browser()
    yield driver
    driver.quit()


def _site(tmp_path: Path, body: str, head: str = "") -> Path:
    """A page with ``body`` in its content column, and the page it links to."""
    page = tmp_path / "page.html"
    page.write_text(PAGE.format(body=body, head=head), encoding="utf-8")
    (tmp_path / "other.html").write_text(OTHER, encoding="utf-8")
    return page


def test_a_clean_page_passes(driver, tmp_path):
    page = _site(tmp_path, CLEAN_BODY)
    assert browser_check.check_page(driver, page, screenshot=tmp_path / "shots" / "page.png") == []
    assert (tmp_path / "shots" / "page.png").stat().st_size > 1000
    assert browser_check.check_links([page], tmp_path) == []


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_planted_defect_is_found(driver, tmp_path, defect):
    body, expected = DEFECTS[defect]
    problems = browser_check.check_page(driver, _site(tmp_path, CLEAN_BODY + body))
    assert problems, f"the planted {defect} was not found"
    assert all(expected in problem for problem in problems), problems
    if defect == "network request":
        assert "network request: https://example.org/logo.png" in problems


def test_markdown_table_in_printed_output_is_found(driver, tmp_path):
    """Printed output is rendered text too: a table printed as Markdown source shows its pipes."""
    printed = (
        '<div class="cell_output"><div class="output text_plain"><pre>| a | b |\n|---|---|\n| 1 | 2 |</pre></div></div>'
    )
    problems = browser_check.check_page(driver, _site(tmp_path, CLEAN_BODY + printed))
    assert problems == ["literal Markdown table syntax: |---|---|"]


def test_broken_links_and_anchors_are_found(tmp_path):
    page = _site(
        tmp_path,
        '<a href="missing.html">a</a> <a href="other.html#nowhere">b</a> <a href="#gone">c</a>'
        ' <a href="https://example.org/">external, not followed</a> <a href="other.html#there">fine</a>',
    )
    problems = browser_check.check_links([page], tmp_path)
    assert problems == [
        "page.html: link to a missing file: missing.html",
        "page.html: anchor that does not resolve: other.html#nowhere",
        "page.html: anchor that does not resolve: #gone",
    ]


def test_book_pages_skip_static_assets(tmp_path):
    for name in ("index.html", "book/a.html", "_static/x.html", "_sources/b.html"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("<html></html>")
    assert browser_check.book_pages(tmp_path) == [tmp_path / "book" / "a.html", tmp_path / "index.html"]


def test_boxes_that_scroll_are_listed(driver, tmp_path):
    wide = '<div class="cell_output"><pre>' + "x" * 400 + "</pre></div>"
    page = _site(tmp_path, CLEAN_BODY + wide)
    assert browser_check.check_page(driver, page) == []  # a scroll container is no defect
    (listed,) = browser_check.scrolling_boxes(driver)
    assert listed.startswith("pre needs ") and "xxxx" in listed
