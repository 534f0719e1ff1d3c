"""Every page of the built book, as a reader sees it: headless Chromium, file://, no network.

The README's test command does not build the book, so this module skips unless
told where a fresh build is:

    jupyter-book build . --all -W -n --keep-going
    LAGTHEORY_RENDERED_BOOK=_build/html python -m pytest tests/test_rendered_book.py

``.ci/run`` does exactly that after its book build. Each page must load with no
MathJax error, nothing wider than the content column outside a scroll container,
no Markdown table left as text, no stream output split into boxes, no console
error, no network request, no TeX left as text, no emphasis glued to a word, no
display or printed output that scrolls sideways, no internal label shown as text,
no claim link to a hidden target, and no page wider than a phone's screen (see
``tests/browser_check.py``); every internal link and anchor must resolve. Every
table that a cell generates shows, cell by cell, the text the cell gave it (a
``*`` in a name read as emphasis would drop it). The verdict page answers its
question before any table, and its tables keep their key columns on a phone's
screen; the introduction opens with the same answer; the verdict page is at most 15
screens long at 1400 px. No page has near-invisible text in the theme's light or dark mode (the claim map is
also looked at in both modes at 390 px, and shot), figure captions take the body text's
colour, and every figure's smallest text shows at least 6 px at 1400 px and at 390 px. Every figure a cell draws opens at full size on a click. A screenshot of every page (1400 px and 390 px wide, full height) is saved
under ``_build/screenshots/`` so a change in the look can be seen (unless ``LAGTHEORY_SCREENSHOTS=0``, as in
CI, which keeps no files), with
``scrolling-boxes.txt``: the tables and graphs of the prose a reader has to scroll
sideways (allowed, but worth shortening).
"""

import json
import os
import re
from pathlib import Path

import browser_check
import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = os.environ.get("LAGTHEORY_RENDERED_BOOK")
SCREENSHOTS = ROOT / "_build" / "screenshots"
SHOOT = os.environ.get("LAGTHEORY_SCREENSHOTS", "1") != "0"
"""Whether to save the screenshots (``LAGTHEORY_SCREENSHOTS=0``: not; they are for a person to look at and
check nothing, so CI, which keeps no files, leaves them out)."""
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


TABLE_CELLS = (
    "return [...document.querySelectorAll('article.bd-article .cell_output table')]"
    ".flatMap(t => [...t.querySelectorAll('th, td')].map(c => c.textContent.trim().replace(/\\s+/g, ' ')));"
)
PAGE_HEIGHT = "return document.documentElement.scrollHeight"
SEEN: dict[str, dict] = {}
"""What test_page_reads_cleanly read of each page while it had it loaded, for the tests below that would
otherwise load the page again: the cells of its generated tables ("tables", at 1400 px), its height ("height", at
1400 px), the boxes that scroll sideways ("scrolling", at 1400 px, for scrolling-boxes.txt) and its figures' scales
at each width (browser_check.figure_scales). A test run alone (-k) loads the page itself."""


@pytest.mark.parametrize("page", _pages())
def test_page_reads_cleanly(driver, page):
    site = _site()
    name = page.removesuffix(".html").replace("/", "__")
    seen = SEEN[page] = {}

    def observe(size):
        if size == browser_check.WINDOW:
            seen["tables"] = driver.execute_script(TABLE_CELLS)
            seen["height"] = driver.execute_script(PAGE_HEIGHT)
            seen["scrolling"] = browser_check.scrolling_boxes(driver)
        seen[size] = browser_check.figure_scales(driver)

    problems = browser_check.check_page(
        driver,
        site / page,
        screenshot=SCREENSHOTS / f"{name}.png" if SHOOT else None,
        phone_screenshot=SCREENSHOTS / f"{name}-390.png" if SHOOT else None,
        observe=observe,
        claim_links=False,  # test_claim_links_lead_to_visible_targets, once every page was read
        restore_window=False,  # what this module reads at 1400 px, it reads in observe
    )
    # not a failure: what a reader must scroll sideways to see, listed for authors to shorten
    with (SCREENSHOTS / "scrolling-boxes.txt").open("a", encoding="utf-8") as report:
        report.writelines(f"{page}: {box}\n" for box in seen["scrolling"])
    assert problems == [], f"{page}:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", _pages())
def test_claim_links_lead_to_visible_targets(driver, page):
    """No "Checked by" or claim-map link of the page leads to a target a reader cannot see (browser_check),
    read from each page's load in test_page_reads_cleanly above (a test run alone loads the pages it needs):
    the chapters' links lead back and forth between them, so checking each page's links as it was loaded
    loaded five pages twice."""
    problems = browser_check.links_to_hidden_targets(driver, _site() / page)
    assert problems == [], f"{page}:\n" + "\n".join(problems)


def test_internal_links_and_anchors_resolve():
    site = _site()
    problems = browser_check.check_links(browser_check.book_pages(site), site)
    assert problems == [], "\n".join(problems)


def _notebook_pages() -> list[str]:
    return [page for page in _pages() if (ROOT / page).with_suffix(".ipynb").is_file()]


QUOTES = str.maketrans("\u2018\u2019\u201c\u201d", "''\"\"")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash-escaped ASCII punctuation character
_CODE = re.compile(r"`([^`]*)`")
_STRONG = re.compile(r"^\*\*(.*)\*\*$")


def _cell_text(source: str) -> str:
    """What a generated Markdown table cell must show: escapes resolved, code spans as their text,
    a cell wrapped whole in ``**`` as its text. Any other ``*`` is text the reader must see."""
    source = _STRONG.sub(r"\1", source.strip())
    parts = _CODE.split(source)  # even: Markdown, odd: code span contents (no escapes there)
    return "".join(part if i % 2 else _ESCAPED.sub(r"\1", part) for i, part in enumerate(parts)).strip()


def _split_row(line: str) -> list[str]:
    cells, current, escaped, code = [], "", False, False
    for char in line.strip().removeprefix("|").removesuffix("|"):
        if char == "|" and not escaped and not code:
            cells.append(current)
            current = ""
            continue
        code ^= char == "`" and not escaped
        escaped = char == "\\" and not escaped
        current += char
    return [*cells, current]


def generated_table_cells(notebook: Path) -> list[str]:
    """The text of every cell of every Markdown table in the notebook's stored outputs, in order."""
    cells = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            markdown = output.get("data", {}).get("text/markdown")
            if output.get("metadata", {}).get("scrapbook") or not markdown:
                continue
            for line in "".join(markdown).splitlines():
                if line.lstrip().startswith("|") and not re.fullmatch(r"[\s|:-]+", line):
                    cells.extend(_cell_text(c) for c in _split_row(line))
    return cells


def test_generated_table_cells_are_shown_as_written():
    """Cell names like base*0.316 or T*2 survive rendering: each rendered cell
    of a table printed by a cell equals the text the cell wrote, unescaped."""
    cells = [r"(0.3, 1) base\*0.316", r"`T*2`", "**hurts**", r"a \| b", "(3, 3)"]
    assert [_cell_text(c) for c in cells] == ["(0.3, 1) base*0.316", "T*2", "hurts", "a | b", "(3, 3)"]
    assert _split_row(r"| x | a \| b | `c|d` |") == [" x ", r" a \| b ", " `c|d` "]


@pytest.mark.parametrize("page", _notebook_pages())
def test_generated_tables_render_as_written(driver, page):
    site = _site()
    expected = generated_table_cells((ROOT / page).with_suffix(".ipynb"))
    if not expected:
        pytest.skip(f"{page}: no table printed by a cell")
    if "tables" in SEEN.get(page, {}):
        shown = SEEN[page]["tables"]
    else:
        browser_check._load(driver, site / page)
        shown = driver.execute_script(TABLE_CELLS)
    # Sphinx's smartquotes set every quote of the page, generated text too, as typography (r' as r + U+2019)
    differ = [(e, s) for e, s in zip(expected, shown, strict=False) if " ".join(e.split()) != s.translate(QUOTES)]
    assert len(shown) == len(expected) and not differ, f"{page}: cells written -> shown: {differ[:5]}"


ANSWER_BLOCK = (
    "const a = document.querySelector('article.bd-article');"
    "const top = e => e ? e.getBoundingClientRect().top + scrollY : null;"
    "const block = a.querySelector('div.lag-answer');"
    "return [top(block), block ? block.getBoundingClientRect().bottom + scrollY : null,"
    " top(a.querySelector('.cell_output img, figure')), top(a.querySelector('.cell_output table'))];"
)


def answer_block_problems(driver, page: Path, size: tuple[int, int]) -> list[str]:
    """Where the verdict's answer block (div.lag-answer) is not wholly on the first screen of a window of ``size``, or
    not before the page's first figure and first table."""
    driver.set_window_size(*size)
    browser_check._load(driver, page, size)
    top, bottom, figure, table = driver.execute_script(ANSWER_BLOCK)
    if top is None:
        return [f"{page.name}: no answer block (div.lag-answer)"]
    problems = []
    if bottom > size[1]:
        problems.append(
            f"at {size[0]} px the answer block ends {bottom:.0f} px down, below the first screen ({size[1]} px)"
        )
    for name, position in (("figure", figure), ("table", table)):
        if position is not None and position < bottom:
            problems.append(f"at {size[0]} px the first {name} starts at {position:.0f} px, inside the answer block")
    return problems


def test_verdict_answers_first_and_fits_a_phone(driver):
    """The verdict page's answer block lies wholly within the first screen at 1400 px and at 390 px, before any
    figure or table, and at 390 px the columns that carry the answer (task and verdict) are on the screen."""
    page = _site() / "book" / "verdict.html"
    problems = []
    for size in (browser_check.WINDOW, browser_check.PHONE):
        problems += answer_block_problems(driver, page, size)
    off = driver.execute_script(
        "const w = document.documentElement.clientWidth; const off = [];"
        "for (const t of document.querySelectorAll('article.bd-article .cell_output table')) {"
        "  const heads = [...t.querySelectorAll('thead th')];"
        "  for (const [i, h] of heads.entries()) {"
        "    if (!/^(task|verdict|helps|hurts|optimiser|opt)/.test(h.textContent.trim())) continue;"
        "    if (h.getBoundingClientRect().right > w + 1) off.push(`${h.textContent.trim()} (${Math.round(h.getBoundingClientRect().right)} px)`);"
        "  }"
        "}"
        "return off;"
    )
    driver.set_window_size(*browser_check.WINDOW)
    assert problems == [], problems
    assert off == [], f"key columns off a {browser_check.PHONE[0]} px screen: {off}"


def test_intro_answers_first(driver):
    """The introduction opens with the same plain answer as the verdict (div.lag-answer), wholly within the first
    screen at 1400 px and at 390 px, before any figure or table."""
    page = _site() / "book" / "intro.html"
    problems = []
    for size in (browser_check.WINDOW, browser_check.PHONE):
        problems += answer_block_problems(driver, page, size)
    driver.set_window_size(*browser_check.WINDOW)
    assert problems == [], problems


MAX_VERDICT_SCREENS = 15


def test_verdict_is_at_most_15_screens(driver):
    """The verdict page (the answer, the figures per outcome, the step size, H5, the sensitivity; its exploratory
    history is a page of its own) is at most 15 screens long at 1400 px (it was 34.3)."""
    driver.set_window_size(*browser_check.WINDOW)
    browser_check._load(driver, _site() / "book" / "verdict.html")
    height = driver.execute_script("return document.documentElement.scrollHeight")
    assert height <= MAX_VERDICT_SCREENS * SCREEN, f"verdict.html is {height} px, {height / SCREEN:.1f} screens"


CLAIM_ROW_LINES = (
    "return [...document.querySelectorAll('article.bd-article table.lag-claims tbody tr')].map(row => {"
    "  const lines = [...row.cells].map(c => { const s = getComputedStyle(c);"
    "    const inner = c.clientHeight - parseFloat(s.paddingTop) - parseFloat(s.paddingBottom);"
    "    return inner / parseFloat(s.lineHeight); });"
    "  return [row.cells[0].textContent.trim().slice(0, 40), Math.max(...lines)]; });"
)


def test_intro_claims_fit_two_lines(driver):
    """At 1400 px every row of the introduction's claims table is at most two lines high."""
    driver.set_window_size(*browser_check.WINDOW)
    browser_check._load(driver, _site() / "book" / "intro.html")
    rows = driver.execute_script(CLAIM_ROW_LINES)
    assert len(rows) >= 10, rows
    tall = [(claim, round(lines, 2)) for claim, lines in rows if lines > 2.5]
    assert tall == [], f"claims rows taller than two lines at {browser_check.WINDOW[0]} px: {tall}"


def test_cell_figures_open_at_full_size(driver):
    """Every figure a cell draws (the twelve-panel heat maps among them) is a link to its own image
    file, which exists, so a reader can open it unscaled (book/_static/figure_links.js)."""
    site = _site()
    page = site / "book" / "empirical_languages.html"
    browser_check._load(driver, page)
    figures = driver.execute_script(
        "return [...document.querySelectorAll('article.bd-article .cell_output img')]"
        ".map(img => { const a = img.closest('a.figure-full-size'); return a ? a.getAttribute('href') : null; });"
    )
    assert len(figures) >= 2, f"{page.name}: expected the chapter's figures, found {len(figures)}"
    unlinked = figures.count(None)
    missing = [href for href in figures if href and not (page.parent / href).is_file()]
    assert unlinked == 0 and not missing, f"{unlinked} figures without a link; links to missing files: {missing}"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_claim_map_reads_in_light_and_dark_mode(driver, theme):
    """The claim map (drawing, key, table, prose) at 1400 and 390 px in the theme's light and dark modes: no
    text near-invisible against what is behind it (its bands' titles were #343a40 on the dark mode's
    #121212); a screenshot of each under _build/screenshots/claim_map-<theme>-<width>.png."""
    page = _site() / "book" / "claim_map.html"
    problems = []
    for size in (browser_check.WINDOW, browser_check.PHONE):
        browser_check._load(driver, page, size)
        browser_check.set_theme(driver, theme)
        background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        problems += [f"{size[0]} px: {p}" for p in browser_check.low_contrast_text(driver)]
        if SHOOT:
            browser_check._screenshot(driver, SCREENSHOTS / f"claim_map-{theme}-{size[0]}.png", size)
        dark = background not in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)")
        assert dark == (theme == "dark"), f"the page did not switch to {theme} mode: body {background}"
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_captions_take_the_body_texts_colour(driver, theme):
    """A figure's caption is read as the prose is: in the body text's colour (the theme's captions were the light
    grey of secondary text)."""
    browser_check._load(driver, _site() / "book" / "threshold.html")
    browser_check.set_theme(driver, theme)
    caption, body = driver.execute_script(
        "const css = el => getComputedStyle(el).color;"
        "return [css(document.querySelector('article.bd-article figure figcaption .caption-text')),"
        " css(document.querySelector('article.bd-article section > p'))];"
    )
    assert caption == body, f"{theme} mode: captions in {caption}, the body text in {body}"


def _figure_pages() -> list:
    from test_figure_text import NOT_YET_LEGIBLE

    pages = [page for page in _notebook_pages() if "image/png" in (ROOT / page).with_suffix(".ipynb").read_text()]
    return [
        pytest.param(
            page,
            marks=[pytest.mark.xfail(strict=True, reason=NOT_YET_LEGIBLE[Path(page).stem])]
            if Path(page).stem in NOT_YET_LEGIBLE
            else [],
        )
        for page in pages
    ]


@pytest.mark.parametrize("page", _figure_pages())
def test_figure_text_is_legible_as_shown(driver, page):
    """Each figure a cell draws, as the page shows it at 1400 px and on a 390 px phone: its smallest text
    (stored with the figure by the chapter recipe, lagtheory.palette.record_text_sizes) times the scale the
    page shows the PNG at is at least SMALLEST_PHONE_PIXELS; and the phone's column is no narrower than the
    PHONE_COLUMN_PIXELS that tests/test_figure_text.py assumes."""
    import base64

    from lagtheory import palette

    notebook = json.loads((ROOT / page).with_suffix(".ipynb").read_text())
    stored = [
        (int.from_bytes(base64.b64decode(out["data"]["image/png"])[16:20], "big"), out.get("metadata", {}))
        for cell in notebook["cells"]
        for out in cell.get("outputs", [])
        if "image/png" in out.get("data", {})
    ]
    problems = []
    html = page.replace(".ipynb", ".html")
    for size in (browser_check.WINDOW, browser_check.PHONE):
        if size in SEEN.get(html, {}):
            shown = SEEN[html][size]
        else:
            browser_check._load(driver, _site() / html, size)
            shown = browser_check.figure_scales(driver)
        assert [natural for _, natural, _ in shown] == [width for width, _ in stored], f"{page}: figures differ"
        for number, ((name, natural, width), (_, metadata)) in enumerate(zip(shown, stored, strict=True), 1):
            points = metadata.get("image/png", {}).get(palette.TEXT_SIZE_KEY)
            if points is None:
                problems.append(f"figure {number}: no text size stored (re-execute with the recipe)")
                continue
            pixels = points * palette.INLINE_DPI / 72 * width / natural
            if pixels < palette.SMALLEST_PHONE_PIXELS:
                problems.append(f"figure {number} ({name}) at {size[0]} px: smallest text {pixels:.1f} px")
            if size == browser_check.PHONE and natural > palette.PHONE_COLUMN_PIXELS:
                assert width >= palette.PHONE_COLUMN_PIXELS - 1, f"the phone's column is {width:.0f} px"
    assert problems == [], "\n".join(problems)


def raw_rest_runs(html: str) -> list[str]:
    """The reST markup shown as text on a page: ``literal`` runs and :role:`target` runs."""
    text = re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)
    text = re.sub(r"<[^>]+>", "", text)
    return re.findall(r"``[^`]+``|:[a-z]+(?::[a-z]+)?:`[^`]+`", text)


def test_raw_rest_runs_are_found():
    page = "<p>see <code>x</code>, ``p(n, k)`` and :func:`population`, :prf:ref:`thm-threshold`</p>"
    assert raw_rest_runs(page) == ["``p(n, k)``", ":func:`population`", ":prf:ref:`thm-threshold`"]
    assert raw_rest_runs('<p><code class="xref py">population()</code> (1.3)</p>') == []


def _api_pages() -> list[str]:
    return [page for page in _pages() if page == "book/api.html" or page.startswith("book/api/")]


SCREEN = 757
"""Pixels of one screen in a review's measure (the one-page API reference: 240,000 px, 317 screens)."""
MAX_API_SCREENS = 20


@pytest.mark.parametrize("page", _api_pages())
def test_api_page_shows_no_raw_rest_and_is_at_most_20_screens(driver, page):
    """The docstrings are rendered (napoleon, roles resolved), not shown as reST source, and each page of
    the API reference is at most 20 screens long at 1400 px (the reference was one page of 317)."""
    runs = raw_rest_runs((_site() / page).read_text(encoding="utf-8"))
    assert not runs, f"{len(runs)} raw reST runs on {page}, e.g. {runs[:5]}"
    if "height" in SEEN.get(page, {}):
        height = SEEN[page]["height"]
    else:
        browser_check._load(driver, _site() / page)
        height = driver.execute_script(PAGE_HEIGHT)
    assert height <= MAX_API_SCREENS * SCREEN, f"{page} is {height} px, {height / SCREEN:.1f} screens"


def test_the_api_reference_has_an_index_and_its_pages():
    assert "book/api.html" in _api_pages() and len(_api_pages()) >= 10, _api_pages()
