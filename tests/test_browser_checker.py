"""The rendered-page checker (tests/browser_check.py) on small pages, each with one planted defect.

Each fixture is a page shaped like the book's (an ``article.bd-article`` column)
that is clean except for one defect a reader would trip over; the checker must
name that defect and nothing else, and must pass the clean page. These need
Chromium and chromedriver (Debian: ``apt-get install chromium chromium-driver``);
without them the tests skip, unless ``LAGTHEORY_REQUIRE_BROWSER=1`` (set by
``.ci/run``, which installs both) makes a missing browser a failure.
"""

import itertools
import os
from pathlib import Path

import browser_check
import pytest

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>fixture</title>
<style>
body {{ margin: 0; }}
article.bd-article {{ width: min(600px, calc(100vw - 110px)); margin-left: 100px; }}
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

OTHER = (
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>other</title></head><body><p id="there">x</p>'
    '<div style="display: none"><span id="check-other-1"></span><p>a check in a folded solution</p></div></body></html>'
)

CLEAN_BODY = """
<div class="cell_input"><pre>lines = ["| a | b |", "|---|---|"]  # table syntax in code is fine</pre></div>
<div style="overflow-x: auto"><div style="width: 1500px">a wide table inside a scroll container</div></div>
<table><tr><td>a</td><td>b</td></tr></table>
<p>The label <code>thm-threshold</code> in code, <em>emphasis</em> between words, <strong>bold</strong>, and typeset
maths: <span class="math"><mjx-container>\\frac{a}{b} $</mjx-container></span>; the page other.html and three-phase.</p>
<p class="checked-by">Checked by <a href="#visible-check">check 1</a> and <a href="other.html#there">2</a></p>
<span id="visible-check"></span><p class="check-header">Check 1</p>
<ul><li><p>a list item after prose with no maths</p></li></ul>
"""

WIDE_ON_A_PHONE = "page wider than a 390 px phone screen"

# name: (planted defect, what every reported problem must say, or one of the also-allowed
# descriptions: a defect that has a second face, e.g. a 900 px box is also too wide for a phone)
DEFECTS = {
    "mathjax error": (
        '<span><mjx-merror data-mjx-error="Undefined control sequence \\foo">\\foo</mjx-merror></span>',
        "MathJax error: Undefined control sequence",
        (),
    ),
    "wide element": (
        '<div style="width: 900px">a display equation that runs off the column</div>',
        "wider than the content column",
        (WIDE_ON_A_PHONE,),
    ),
    "wide element in a clipping box": (
        '<div style="overflow: hidden"><div style="width: 900px">cut off</div></div>',
        "wider than the content column",
        (),
    ),
    "markdown table": ("<p>| row | task |\n|—|—|\n| 1 | languages |</p>", "literal Markdown table syntax", ()),
    "unmerged streams": (
        '<div class="cell_output"><div class="output stream"><pre>row 1</pre></div><div class="output stream"><pre>row 2</pre></div></div>',
        "streams not merged",
        (),
    ),
    "console error": ('<script>console.error("planted error")</script>', "console error", ()),
    "script exception": ("<script>undefinedFunction()</script>", "console error", ()),
    "missing resource": ('<img src="_static/missing.png" alt="x">', "console error", ()),
    # a blocked request also logs a failed load: both lines name the address
    "network request": ('<img src="https://example.org/logo.png" alt="x">', "https://example.org/logo.png", ()),
    # a review's find: a maths span that Markdown broke is left as TeX text
    "tex control word": (
        "<p>(c) hence \\operatorname{Var}(\\hat t_1) = \\frac{4}{B}</p>",
        "TeX outside typeset maths",
        (),
    ),
    "dollar outside maths": (
        "<p>which to first order in 1/B$ (the delta method) is</p>",
        "TeX outside typeset maths",
        (),
    ),
    "list item inside a maths span": (
        "<p>(c) hence $V = a</p><ul><li><p>b, which to first order</p></li></ul>",
        "list item that starts inside a maths span",
        ("TeX outside typeset maths",),
    ),
    # item 4: base*0.316, ..., base*3.16 in a generated cell, read as emphasis
    "star read as emphasis": (
        "<table><tr><td>(0.3, 1) base<em>0.316, (0.3, 1) base</em>3.16</td></tr></table>",
        "emphasis glued to a word",
        (),
    ),
    # item 5: printed output and displays that the reader has to scroll sideways
    "scrolling printed output": (
        '<div class="cell_output"><div class="output stream highlight-myst-ansi"><pre>'
        + "x" * 400
        + "</pre></div></div>",
        "printed output scrolls sideways",
        (),
    ),
    "scrolling printed table": (
        '<div class="cell_output"><div class="pst-scrollable-table-container" style="overflow-x: auto">'
        '<table><tr><td style="min-width: 900px">a wide row</td></tr></table></div></div>',
        "printed table scrolls sideways",
        ("table wider than two",),
    ),
    # a review's find: a table written in the prose that scrolls at 1400 px (the mutation page's 589-783 px)
    "scrolling prose table": (
        '<div class="pst-scrollable-table-container" style="overflow-x: auto">'
        '<table><tr><td style="min-width: 900px">a wide row</td></tr></table></div>',
        "table scrolls sideways",
        ("table wider than two",),
    ),
    # and a table that a phone shows only by scrolling more than one more screen (1000 px in 390)
    "table wider than two phone screens": (
        '<div class="pst-scrollable-table-container" style="overflow-x: auto">'
        '<table style="width: 1000px"><tr><td>a</td><td>b</td></tr></table></div>',
        "table wider than two",
        ("table scrolls sideways",),
    ),
    "scrolling display": (
        '<div class="math"><mjx-container display="true" style="display: block; overflow-x: auto">'
        '<span style="display: inline-block; width: 900px">a long display</span></mjx-container></div>',
        "display equation scrolls sideways",
        (),
    ),
    # item 8: internal labels in figure titles, check headers, outputs and tooltips
    "label in text": (
        "<p>Figure 3.1: thm-threshold (a), exact.</p>",
        'internal label shown to readers: "thm-threshold"',
        (),
    ),
    "label in parentheses": ("<p>Check 1 · numeric · the experiment (emp-languages)</p>", '"emp-languages"', ()),
    "label in printed output": (
        '<div class="cell_output"><div class="output stream highlight-myst-ansi"><pre>eq-boundary: gap &lt; 1e-12</pre></div></div>',
        '"eq-boundary"',
        (),
    ),
    "label in an svg tooltip": (
        '<svg width="20" height="20"><path d="M0 0 L9 9" stroke="black"><title>lem-gradients is cited by Lemma 2.3</title></path></svg>',
        '"lem-gradients"',
        (),
    ),
    "label in a link tooltip": ('<a href="#top" title="check of eq-phase2">a link</a>', '"eq-phase2"', ()),
    # item 7: "Checked by" links into a collapsed solution
    "checked-by link to a folded check": (
        '<p class="checked-by">Checked by <a href="#check-page-2">2</a></p>'
        '<details><summary>Solution</summary><span id="check-page-2"></span><p class="check-header">Check 2</p></details>',
        "claim link to a hidden target",
        (),
    ),
    "checked-by link to a hidden check on another page": (
        '<p class="checked-by">Checked by <a href="other.html#check-other-1">1</a></p>',
        "claim link to a hidden target",
        (),
    ),
    # a review's find: chapter pages wider than a phone screen
    "page too wide for a phone": (
        '<div style="width: 500px">fits the column at 1400 px, not a phone</div>',
        WIDE_ON_A_PHONE,
        (),
    ),
    # a word that cannot break spills out of a paragraph that fits: the boxes fit, their content does not
    # (the API page's module docstrings set command lines this way)
    "unbreakable word wider than a phone": (
        "<blockquote><p>python -m lagtheory.experiments.a_module_path_long_enough_to_run_past_a_phone</p></blockquote>",
        '<p> "python -m lagtheory.experiments.a_module',
        (),
    ),
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


_PAGE_NUMBERS = itertools.count()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """One folder for the module's pages, holding the page they link to (``other.html``, never changed): the
    checker reads which ids of a linked page are hidden once per page and run, as on the book's site, so the
    pages here cost one load each rather than three (the page, ``other.html``, the page again). The pages in a
    folder of their own (``tmp_path``) still take the three loads."""
    return tmp_path_factory.mktemp("site")


def _site(folder: Path, body: str, head: str = "") -> Path:
    """A page of its own name in ``folder`` with ``body`` in its content column, and the page it links to."""
    page = folder / f"page-{next(_PAGE_NUMBERS)}.html"
    page.write_text(PAGE.format(body=body, head=head), encoding="utf-8")
    (folder / "other.html").write_text(OTHER, encoding="utf-8")
    return page


def test_a_clean_page_passes(driver, tmp_path):
    page = _site(tmp_path, CLEAN_BODY)
    assert browser_check.check_page(driver, page, screenshot=tmp_path / "shots" / "page.png") == []
    assert (tmp_path / "shots" / "page.png").stat().st_size > 1000
    assert browser_check.check_links([page], tmp_path) == []


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_planted_defect_is_found(driver, site, defect):
    body, expected, allowed = DEFECTS[defect]
    problems = browser_check.check_page(driver, _site(site, CLEAN_BODY + body))
    assert any(expected in problem for problem in problems), f"the planted {defect} was not found: {problems}"
    assert all(any(says in problem for says in (expected, *allowed)) for problem in problems), problems
    if defect == "network request":
        assert "network request: https://example.org/logo.png" in problems


def test_markdown_table_in_printed_output_is_found(driver, site):
    """Printed output is rendered text too: a table printed as Markdown source shows its pipes."""
    printed = (
        '<div class="cell_output"><div class="output text_plain"><pre>| a | b |\n|---|---|\n| 1 | 2 |</pre></div></div>'
    )
    problems = browser_check.check_page(driver, _site(site, CLEAN_BODY + printed))
    assert problems == ["literal Markdown table syntax: |---|---|"]


def test_broken_links_and_anchors_are_found(tmp_path):
    page = _site(
        tmp_path,
        '<a href="missing.html">a</a> <a href="other.html#nowhere">b</a> <a href="#gone">c</a>'
        ' <a href="https://example.org/">external, not followed</a> <a href="other.html#there">fine</a>',
    )
    problems = browser_check.check_links([page], tmp_path)
    assert problems == [
        f"{page.name}: link to a missing file: missing.html",
        f"{page.name}: anchor that does not resolve: other.html#nowhere",
        f"{page.name}: anchor that does not resolve: #gone",
    ]


def test_book_pages_skip_static_assets(tmp_path):
    for name in ("index.html", "book/a.html", "_static/x.html", "_sources/b.html"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("<html></html>")
    assert browser_check.book_pages(tmp_path) == [tmp_path / "book" / "a.html", tmp_path / "index.html"]


def test_boxes_that_scroll_are_listed(driver, site):
    """A wide block of code in the prose scrolls in its container: no defect, but listed for authors to shorten."""
    wide = '<div class="highlight"><pre style="overflow-x: auto">' + "x" * 400 + "</pre></div>"
    page = _site(site, CLEAN_BODY + wide)
    assert browser_check.check_page(driver, page) == []  # a scroll container is no defect
    (listed,) = browser_check.scrolling_boxes(driver)
    assert listed.startswith("pre needs ") and "xxxx" in listed


def test_screenshots_at_both_widths(driver, site, tmp_path):
    page = _site(site, CLEAN_BODY)
    wide, phone = tmp_path / "wide.png", tmp_path / "phone.png"
    assert browser_check.check_page(driver, page, screenshot=wide, phone_screenshot=phone) == []
    assert _png_width(wide) == browser_check.WINDOW[0] and _png_width(phone) == browser_check.PHONE[0]


def _png_width(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[16:20], "big")


# The claim map in the theme's dark mode: its bands' titles were #343a40 on #121212 (contrast 1.6).
DARK = "<style>html[data-theme=dark] body { background: #121212; } html[data-theme=dark] body * { color: #ced6dd; }</style>"
SVG_CLEAN = (
    '<svg width="300" height="60" style="color: inherit"><text x="5" y="15" fill="currentColor">A band title</text>'
    '<rect x="5" y="25" width="200" height="30" fill="#ffffff"/><text x="20" y="45" fill="#212529">Lemma 1.1</text></svg>'
)


def _contrast_problems(driver, page: Path, theme: str) -> list[str]:
    browser_check._load(driver, page)
    browser_check.set_theme(driver, theme)
    return browser_check.low_contrast_text(driver)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_text_that_takes_the_pages_colour_reads_in_both_modes(driver, site, theme):
    page = _site(site, CLEAN_BODY + SVG_CLEAN, head=DARK)
    assert _contrast_problems(driver, page, theme) == []


def test_near_invisible_text_is_found_in_dark_mode(driver, site):
    """Planted: a band title and a paragraph in a fixed dark grey pass on the light page and are found on the dark one;
    dark type inside a white box stays legible in both."""
    planted = (
        '<svg width="300" height="60"><text x="5" y="15" fill="#343a40">A band title</text>'
        '<rect x="5" y="25" width="200" height="30" fill="#ffffff"/><text x="20" y="45" fill="#212529">Lemma 1.1</text></svg>'
        '<p style="color: #343a40">A caption in a fixed grey</p>'
    )
    page = _site(site, CLEAN_BODY + planted, head=DARK)
    assert _contrast_problems(driver, page, "light") == []
    problems = _contrast_problems(driver, page, "dark")
    assert len(problems) == 2, problems
    assert problems[0].startswith("near-invisible SVG text (contrast 1.6") and '"A band title"' in problems[0]
    assert problems[1].startswith("near-invisible text (contrast 1.6") and '"A caption in a fixed grey"' in problems[1]


def test_check_page_reports_near_invisible_text_in_dark_mode(driver, tmp_path):
    """The page sits in a folder of its own, so its linked page is one the checker has not seen: it loads that
    page to read its hidden ids and must load the checked page again before the dark-mode check (and the phone's),
    which finds the planted text only on the checked page."""
    planted = '<svg width="200" height="30"><text x="5" y="15" fill="#343a40">A band title</text></svg>'
    problems = browser_check.check_page(driver, _site(tmp_path, CLEAN_BODY + planted, head=DARK))
    assert len(problems) == 1 and problems[0].startswith("dark mode: near-invisible SVG text"), problems


def test_figure_scales_report_the_shown_width(driver, site):
    """A 800 px wide figure in a 600 px column is shown at 600 px; a 200 px one at its own width."""
    import base64
    import struct
    import zlib

    def png(width: int) -> str:
        row = b"\x00" + b"\xff" * (3 * width)
        chunks = [
            (b"IHDR", struct.pack(">IIBBBBB", width, 10, 8, 2, 0, 0, 0)),
            (b"IDAT", zlib.compress(row * 10)),
            (b"IEND", b""),
        ]
        data = b"\x89PNG\r\n\x1a\n" + b"".join(
            struct.pack(">I", len(c)) + t + c + struct.pack(">I", zlib.crc32(t + c)) for t, c in chunks
        )
        return "data:image/png;base64," + base64.b64encode(data).decode()

    body = "".join(f'<div class="cell_output"><img src="{png(w)}" style="max-width: 100%"></div>' for w in (800, 200))
    browser_check._load(driver, _site(site, body))
    (_, wide, wide_shown), (_, narrow, narrow_shown) = browser_check.figure_scales(driver)
    assert (wide, narrow) == (800, 200) and wide_shown == 600 and narrow_shown == 200
