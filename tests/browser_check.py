"""What a reader of the built book would trip over, found by loading its pages in headless Chromium.

Used by ``tests/test_rendered_book.py`` (every page of ``_build/html``, run by
``.ci/run`` after the book is built) and ``tests/test_browser_checker.py`` (small
HTML fixtures, each with one planted defect). A page is loaded from ``file://``
with the network switched off (Chrome's offline emulation, and a host resolver
that resolves nothing), and :func:`check_page` reports, one line each:

* a MathJax error (an ``mjx-merror`` element: TeX that MathJax could not typeset);
* an element that reaches past the left or right edge of the content column
  (``article.bd-article``) and is not inside a scroll container (an ancestor
  with ``overflow-x: auto`` or ``scroll``; one that hides the overflow cuts the
  content off, which counts as running off) — the outermost such element only;
* literal Markdown table syntax (a ``|---|`` separator row) in rendered text:
  prose and cell outputs, not code cells' source or code blocks in the prose;
* printed output of one cell split into several boxes (stream outputs not merged);
* a browser console error (a failed resource load, a JavaScript exception, a
  ``console.error``);
* a request for anything but ``file:``, ``data:``, ``blob:`` or ``about:``;
* TeX left as text: a TeX control word (``\\frac``), a ``\\(`` or a ``$`` in
  rendered text outside typeset mathematics (prose and printed output; code aside),
  and a list item that starts inside a maths span (a source line starting with
  ``+``, ``-`` or ``*`` inside ``$...$`` becomes a bullet and breaks the span);
* emphasis glued to a word (``base<em>0.316</em>``): a ``*`` in generated text
  read as Markdown emphasis, which drops the ``*`` from what the reader sees;
* a display equation, a cell's printed output, or any table (printed by a cell
  or written in the prose) that scrolls sideways at 1400 px (the reader has to
  scroll to see the end of it);
* an internal label shown as text (``thm-threshold``, ``eq-phase2``,
  ``(emp-languages)``, a tooltip "lem-gradients is cited by ..."): in prose,
  printed output, figure text given as HTML, SVG tooltips and link tooltips
  (code is exempt: a label in code is the author's name for it);
* a "Checked by" or claim-map link whose target a reader cannot see (inside a
  collapsed solution or any hidden element), on this page or another;
* text near-invisible against what is behind it (WCAG contrast below 3), in the
  theme's light and dark modes (HTML text and SVG text, such as the claim map's);
* at a phone's width (390 px): a page wider than the screen (the reader scrolls
  the whole page sideways), and a table wider than two screens (it may scroll in
  its own box, by one more screen at most).

:func:`check_links` reads the HTML files themselves and reports every internal
link (``a href``, and ``src``/``href`` of scripts, stylesheets and images) whose
file does not exist, and every ``#anchor`` that no ``id`` (or ``name``) on the
target page defines.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ALLOWED_SCHEMES = ("file", "data", "blob", "about")
WINDOW = (1400, 1000)
PHONE = (390, 844)
MAX_SCREENSHOT_HEIGHT = 16000  # Chromium's limit for one capture is about 16k pixels

_MEASURE = r"""
const article = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
const column = article.getBoundingClientRect();
const found = [];
for (const error of document.querySelectorAll("mjx-merror")) {
    const message = error.getAttribute("data-mjx-error") || error.textContent;
    found.push("MathJax error: " + message.trim().slice(0, 160));
}
function describe(el) {
    let name = el.tagName.toLowerCase();
    if (el.id) name += "#" + el.id;
    if (typeof el.className === "string" && el.className.trim())
        name += "." + el.className.trim().split(/\s+/).slice(0, 3).join(".");
    return name;
}
function inScrollContainer(el) {
    for (let a = el.parentElement; a && a !== article.parentElement; a = a.parentElement) {
        const overflow = getComputedStyle(a).overflowX;
        if (overflow === "auto" || overflow === "scroll") return true;  // "hidden" and "clip" cut content off
    }
    return false;
}
const wide = [];
for (const el of article.querySelectorAll("*")) {
    if (wide.some(w => w.contains(el))) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.clip !== "auto" && style.position === "absolute") continue;
    if ((box.right > column.right + 1 || box.left < column.left - 1) && !inScrollContainer(el)) {
        wide.push(el);
        const text = (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 60);
        found.push(`wider than the content column: <${describe(el)}> spans ${Math.round(box.left)}..${Math.round(box.right)} px, column ${Math.round(column.left)}..${Math.round(column.right)} px: "${text}"`);
    }
}
const prose = article.cloneNode(true);
for (const el of prose.querySelectorAll(".cell_input, code, script, style")) el.remove();
for (const el of prose.querySelectorAll("div[class*='highlight-']")) {
    if (!el.closest(".cell_output")) el.remove();
}
// a separator row: cells of dashes (smart quotes turn "---" into an em dash), e.g. |---|:--:| or |—|—|
const cell = "[ \\t]*:?(?:-{3,}|[\u2013\u2014][-\u2013\u2014]*):?[ \\t]*";
const separator = new RegExp(`^[ \\t]*\\|?${cell}(?:\\|${cell})+\\|?[ \\t]*$`);
const lines = prose.textContent.split("\n").filter(line => separator.test(line));
for (const line of lines.slice(0, 3)) found.push("literal Markdown table syntax: " + line.trim().slice(0, 120));
for (const output of article.querySelectorAll(".cell_output")) {
    const streams = output.querySelectorAll(":scope > .output.stream");
    if (streams.length > 1) found.push(`stream output in ${streams.length} boxes (streams not merged): "${streams[0].textContent.trim().slice(0, 60)}"`);
}
// What a reader reads as text: the column without code, scripts and typeset maths.
const NOT_TEXT = "mjx-container, mjx-merror, mjx-assistive-mml, script, style, code, .cell_input, div[class*='highlight-']";
function readable(el) {
    const copy = el.cloneNode(true);
    for (const c of copy.querySelectorAll(NOT_TEXT)) {
        if (c.matches("div[class*='highlight-']") && c.closest(".cell_output")) continue;  // printed output: text
        c.remove();
    }
    return copy.textContent;
}
const excerpt = (s, i) => s.slice(Math.max(0, i - 40), i + 40).replace(/\s+/g, " ").trim();
const body = readable(article);
const tex = /\\[A-Za-z]+|\\[()\[\]]|\$/g;
let texFound = 0;
for (const m of body.matchAll(tex)) {
    if (texFound++ < 5) found.push(`TeX outside typeset maths: "${m[0]}" in "${excerpt(body, m.index)}"`);
}
if (texFound > 5) found.push(`TeX outside typeset maths: ${texFound - 5} more`);
for (const item of article.querySelectorAll("li")) {
    if (item.closest(".cell_input, pre, code")) continue;
    const list = item.parentElement;
    const before = item === list.firstElementChild && list.previousElementSibling ? readable(list.previousElementSibling) : "";
    const dollars = s => (s.match(/\$/g) || []).length;
    if (dollars(before) % 2 === 1 || dollars(readable(item)) % 2 === 1)
        found.push(`list item that starts inside a maths span: "${readable(item).trim().replace(/\s+/g, " ").slice(0, 70)}"`);
}
for (const em of article.querySelectorAll("em, strong")) {
    if (em.closest("code, pre, .cell_input")) continue;
    const before = em.previousSibling, after = em.nextSibling;
    // glued: no space between the emphasis and a word on either side ("base<em>0.316, ... base</em>3.16")
    const inner = em.textContent;
    const glued = (before && before.nodeType === Node.TEXT_NODE && /[A-Za-z0-9)]$/.test(before.data) && /^\S/.test(inner)) ||
                  (after && after.nodeType === Node.TEXT_NODE && /^[A-Za-z0-9(]/.test(after.data) && /\S$/.test(inner));
    if (glued) {
        const context = ((before ? before.textContent : "") + "*" + em.textContent + "*" + (after ? after.textContent : ""));
        const at = (before ? before.textContent.length : 0);
        found.push(`emphasis glued to a word (a * read as emphasis?): "${excerpt(context, at)}"`);
    }
}
// Internal labels shown as text: in readable text, SVG tooltips (inside the text above) and link tooltips.
const LABEL = /(?<![\w/#.-])(?:thm|lem|prop|cor|def|eq|emp|ex|fig|sol|tbl)-[a-z0-9]+(?:[-_][a-z0-9]+)*(?![\w/.-]*\.(?:html|ipynb|md|py)\b)/g;
const labels = new Map();
for (const m of body.matchAll(LABEL)) if (!labels.has(m[0])) labels.set(m[0], excerpt(body, m.index));
for (const a of article.querySelectorAll("[title]")) {
    if (a.closest("code, .cell_input")) continue;
    const tip = a.getAttribute("title");
    for (const m of tip.matchAll(LABEL)) if (!labels.has(m[0])) labels.set(m[0], "tooltip: " + tip.slice(0, 80));
}
for (const [label, where] of labels) found.push(`internal label shown to readers: "${label}" in "${where}"`);
// Display equations, printed output and every table (printed by a cell or written in the prose) that
// scroll sideways.
for (const el of article.querySelectorAll("mjx-container[display='true'], .cell_output pre, table")) {
    if (!el.checkVisibility()) continue;  // folded: seen only when opened
    const box = el.matches("table") ? (el.closest(".pst-scrollable-table-container") || el) : el;
    if (box.scrollWidth > box.clientWidth + 1) {
        const what = el.matches("mjx-container") ? "display equation" : el.matches("table")
            ? (el.closest(".cell_output") ? "printed table" : "table") : "printed output";
        found.push(`${what} scrolls sideways (${box.scrollWidth - box.clientWidth} px hidden): "${(el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 70)}"`);
    }
}
return found;
"""

# Ids of the page's elements that a reader cannot see (display: none, a collapsed solution, a closed
# <details>); an empty anchor (a target span) counts as what follows it.
_HIDDEN_IDS = r"""
const hidden = [];
for (const el of document.querySelectorAll("[id]")) {
    let probe = el;
    while (probe && probe.getBoundingClientRect().height === 0 && probe.children.length === 0 && probe.nextElementSibling) probe = probe.nextElementSibling;
    const seen = probe.checkVisibility({contentVisibilityAuto: true, opacityProperty: true, visibilityProperty: true})
        && !probe.closest("details:not([open]) > :not(summary)");
    if (!seen) hidden.push(el.id);
}
return hidden;
"""

# The links of "Checked by" lines, check headers and the claim map (graph and table).
_CLAIM_LINKS = r"""
const links = [];
for (const a of document.querySelectorAll("p.checked-by a[href], p.check-header a[href], .claim-graph a, table.claim-table a[href]")) {
    const href = a.getAttribute("href") || a.getAttribute("xlink:href");
    if (href && href.includes("#")) links.push(href);
}
return [...new Set(links)];
"""

# At a phone's width: how far the page reaches past the screen, and the outermost elements that do it.
_PHONE = r"""
const width = document.documentElement.clientWidth;
const found = [];
// A table may scroll sideways on a phone, inside its own box, but by no more than one more screen.
for (const table of (document.querySelector("article.bd-article") || document.body).querySelectorAll("table")) {
    if (!table.checkVisibility()) continue;
    const box = table.closest(".pst-scrollable-table-container") || table.parentElement;
    if (table.scrollWidth > 2 * box.clientWidth + 1)
        found.push(`table wider than two ${width} px phone screens (${table.scrollWidth} px in a ${box.clientWidth} px column): "${(table.textContent || "").trim().replace(/\s+/g, " ").slice(0, 60)}"`);
}
// Inline mathematics scrolls in its own box on a phone (lagtheory.css) only when it is longer than the line:
// a formula that fits must show no scroll bar (MathJax's hidden assistive MathML, wider than the formula, gave
// short formulas scroll bars).
for (const math of document.querySelectorAll('article.bd-article mjx-container:not([display="true"])')) {
    let line = math.parentElement;  // the block whose width bounds the formula's box (max-width: 100%)
    while (line && !["block", "list-item", "table-cell"].includes(getComputedStyle(line).display)) line = line.parentElement;
    const style = getComputedStyle(line);
    const room = line.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const o = getComputedStyle(math).overflowX;
    if ((o === "auto" || o === "scroll") && math.scrollWidth > math.clientWidth + 1 && math.getBoundingClientRect().width < room - 1)
        found.push(`inline math shows a scroll bar though it fits the line (${math.scrollWidth} px in a ${math.clientWidth} px box): "${(math.textContent || "").trim().slice(0, 40)}"`);
}
const over = document.documentElement.scrollWidth - width;
if (over <= 1) return found;
function inScroller(el) {  // or in a fixed box (the theme's drawers: off the screen until opened)
    for (let a = el; a && a !== document.body; a = a.parentElement) {
        if (getComputedStyle(a).position === "fixed") return true;
        if (a === el) continue;
        const o = getComputedStyle(a).overflowX;
        if (o === "auto" || o === "scroll" || o === "hidden" || o === "clip") return true;
    }
    return false;
}
const culprits = [];
for (const el of document.body.querySelectorAll("*")) {
    if (culprits.some(c => c.contains(el))) continue;
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > width + 1 && !inScroller(el)) culprits.push(el);
}
// No box reaches past the screen: then content does, spilling out of a box that fits (an unbreakable
// word in a paragraph, overflow visible). Name the innermost such boxes.
if (culprits.length === 0) {
    const spilling = [];
    for (const el of document.body.querySelectorAll("*")) {
        if (inScroller(el) || getComputedStyle(el).overflowX !== "visible") continue;
        const box = el.getBoundingClientRect();
        if (box.width > 0 && box.left + el.scrollWidth > width + 1) spilling.push(el);
    }
    culprits.push(...spilling.filter(el => !spilling.some(other => other !== el && el.contains(other))));
}
const names = culprits.slice(0, 3).map(el => `<${el.tagName.toLowerCase()}${el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/)[0] : ""}> "${(el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40)}"`);
return [...found, `page wider than a ${width} px phone screen by ${over} px: ${names.join(", ")}`];
"""

_WAIT = r"""
const done = arguments[arguments.length - 1];
function settle() { setTimeout(() => done(true), 50); }
function typeset() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) MathJax.startup.promise.then(settle, settle);
    else settle();
}
if (document.readyState === "complete") typeset(); else window.addEventListener("load", typeset);
"""


def chromium_paths() -> tuple[str | None, str | None]:
    """(chromium, chromedriver) executables, or None where absent."""
    browser = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    return browser, driver


def start_browser():
    """A headless Chromium under selenium, network off, logging the console and the requests."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = chromium_paths()
    if not (browser and driver_path):
        raise RuntimeError("chromium and chromedriver are needed: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--no-first-run",
        "--hide-scrollbars",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_script_timeout(60)
    driver.set_page_load_timeout(60)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    return driver


def _network_requests(performance_log: list[dict]) -> list[str]:
    urls = []
    for entry in performance_log:
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if urlsplit(url).scheme not in ALLOWED_SCHEMES and url not in urls:
                urls.append(url)
    return urls


_SCROLLING = r"""
const article = document.querySelector("article.bd-article") || document.body;
const found = [];
for (const el of article.querySelectorAll("mjx-container[display='true'], pre, div.claim-graph, table")) {
    if (!el.checkVisibility()) continue;  // folded code: seen only when opened
    const box = el.matches("table") ? (el.closest(".pst-scrollable-table-container") || el) : el;
    if (box.scrollWidth > box.clientWidth + 1)
        found.push(`${el.tagName.toLowerCase()} needs ${box.scrollWidth - box.clientWidth} px more: "${(el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 70)}"`);
}
return [...new Set(found)];
"""


def scrolling_boxes(driver) -> list[str]:
    """The display equations, printed outputs, tables and graphs of the loaded page that scroll sideways.

    Not a defect (they are scroll containers), but each is something a reader
    must scroll to see: a list to shorten.
    """
    return list(driver.execute_script(_SCROLLING))


_hidden_ids_of: dict[Path, set[str]] = {}  # per page (pages do not change during a run)
_claim_links_of: dict[Path, list[str]] = {}  # per page, read with its hidden ids


def _load(driver, page: Path, size: tuple[int, int] = WINDOW) -> None:
    driver.set_window_size(*size)
    driver.get(page.resolve().as_uri())
    driver.execute_async_script(_WAIT)


def _read_claim_links(driver, page: Path) -> None:
    """Keep the loaded ``page``'s hidden ids and claim links (at 1400 px, light mode, as loaded)."""
    page = page.resolve()
    _hidden_ids_of[page] = set(driver.execute_script(_HIDDEN_IDS))
    _claim_links_of[page] = list(driver.execute_script(_CLAIM_LINKS))


def links_to_hidden_targets(driver, page: Path) -> list[str]:
    """Claim links of ``page`` whose target is hidden, from what was read at each page's load; loads
    ``page`` or a target only where it was not read before (and leaves the last page it loaded loaded)."""
    page = page.resolve()
    if page not in _claim_links_of:
        _load(driver, page)
        _read_claim_links(driver, page)
    problems = []
    for href in _claim_links_of[page]:
        parts = urlsplit(href)
        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not target.is_file():
            continue  # a missing file is check_links's finding
        if target not in _hidden_ids_of:
            _load(driver, target)
            _read_claim_links(driver, target)
        if unquote(parts.fragment) in _hidden_ids_of[target]:
            problems.append(f"claim link to a hidden target (a reader clicks and sees nothing): {href}")
    return problems


def check_page(
    driver,
    page: Path,
    screenshot: Path | None = None,
    phone_screenshot: Path | None = None,
    observe: Callable[[tuple[int, int]], None] | None = None,
    claim_links: bool = True,
    restore_window: bool = True,
) -> list[str]:
    """Load one page and return its problems (empty when a reader would see nothing wrong).

    The page is checked at 1400 px, then at a phone's width (390 px) for a page wider
    than the screen; it is left loaded at 1400 px (for :func:`scrolling_boxes`). ``observe(size)``, if given,
    is called while the page is shown at each of the two sizes (in light mode), so that a caller reads what
    else it needs from the same load. With ``claim_links=False`` the claim links and the hidden ids are only
    read, and :func:`links_to_hidden_targets` checks them later: a caller that checks every page then loads
    no page twice (the targets of a page's links are the pages checked before or after it). With
    ``restore_window=False`` the page is left at the phone's width: a caller that reads what it needs at
    1400 px through ``observe`` saves the page's layout at 1400 px a second time.
    """
    driver.get_log("browser")  # drop what earlier pages left
    driver.get_log("performance")
    _load(driver, page)
    problems = list(driver.execute_script(_MEASURE))
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            problems.append(f"console error: {entry['message'][:240]}")
    problems.extend(f"network request: {url}" for url in _network_requests(driver.get_log("performance")))
    _read_claim_links(driver, page)
    if observe is not None:
        observe(WINDOW)
    for theme in ("dark", "light"):  # the page opens in light mode; dark is the theme's switch
        set_theme(driver, theme)
        problems.extend(f"{theme} mode: {problem}" for problem in low_contrast_text(driver))
    if screenshot is not None:
        _screenshot(driver, screenshot, WINDOW)
    driver.set_window_size(*PHONE)
    driver.execute_async_script(_WAIT)
    problems.extend(driver.execute_script(_PHONE))
    if observe is not None:
        observe(PHONE)
    if phone_screenshot is not None:
        _screenshot(driver, phone_screenshot, PHONE)
    if restore_window:
        driver.set_window_size(*WINDOW)
    if claim_links:
        problems.extend(links_to_hidden_targets(driver, page))
        if driver.current_url != page.resolve().as_uri():
            _load(driver, page)  # a target was loaded: the page is left loaded, as said
    return problems


MIN_CONTRAST = 3.0
"""The least WCAG 2 contrast ratio of text to what is behind it (WCAG's floor for large type): below it,
text is near-invisible (the claim map's band titles, #343a40 on the dark theme's #121212: 1.6)."""

# Every piece of text in the content column whose colour is too close to what lies behind it: HTML text
# against the composite of its ancestors' backgrounds; SVG text (fill) against the shape drawn under it
# (the last earlier sibling shape that contains its centre, in its own group or its parent's), else
# against the background of the <svg>.
_CONTRAST = r"""
const least = arguments[0];
const article = document.querySelector("article.bd-article") || document.body;
function rgba(text) {
    const m = (text || "").match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
}
function over(top, bottom) {
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]);
}
function luminance(c) {
    const f = v => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
}
function ratio(a, b) {
    const x = luminance(a), y = luminance(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}
const backdrops = new Map();  // each element's composite once: a page has tens of thousands of elements
function backdrop(el) {
    if (!el) return [255, 255, 255, 1];
    if (!backdrops.has(el)) {
        const below = backdrop(el.parentElement);
        const c = rgba(getComputedStyle(el).backgroundColor);
        backdrops.set(el, c && c[3] > 0 ? over(c, below) : below);
    }
    return backdrops.get(el);
}
const SHAPES = new Set(["rect", "path", "circle", "ellipse", "polygon"]);
function underSvgText(text) {
    const box = text.getBBox();
    const x = box.x + box.width / 2, y = box.y + box.height / 2;
    for (let scope = text; scope && scope.tagName.toLowerCase() !== "svg"; scope = scope.parentElement) {
        for (let s = scope.previousElementSibling; s; s = s.previousElementSibling) {
            const shapes = SHAPES.has(s.tagName.toLowerCase()) ? [s] : [...s.querySelectorAll("rect, circle, ellipse, polygon")].reverse();
            for (const shape of shapes) {
                const fill = rgba(getComputedStyle(shape).fill);
                if (!fill || fill[3] === 0 || getComputedStyle(shape).fillOpacity === "0") continue;
                const b = shape.getBBox();
                if (x >= b.x && x <= b.x + b.width && y >= b.y && y <= b.y + b.height)
                    return over(fill, backdrop(text.ownerSVGElement));
            }
        }
    }
    return backdrop(text.ownerSVGElement);
}
const SEEN = {checkOpacity: true, checkVisibilityCSS: true};  // a heading's "#" link shows only on hover
const found = [];
function report(kind, el, colour, behind) {
    const r = ratio(colour, behind);
    if (r < least)
        found.push(`near-invisible ${kind} (contrast ${r.toFixed(2)} < ${least}): "${(el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 50)}" rgb(${colour.slice(0, 3).map(Math.round)}) on rgb(${behind.slice(0, 3).map(Math.round)})`);
}
for (const text of article.querySelectorAll("svg text")) {
    if (!text.textContent.trim() || !text.checkVisibility(SEEN)) continue;
    const fill = rgba(getComputedStyle(text).fill);
    if (!fill) continue;
    const behind = underSvgText(text);
    report("SVG text", text, over(fill, behind), behind);
}
for (const el of article.querySelectorAll("*")) {
    const own = [...el.childNodes].some(n => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
    if (!own || el.closest("svg") || !el.checkVisibility(SEEN)) continue;
    const behind = backdrop(el);
    const colour = rgba(getComputedStyle(el).color);
    if (colour) report("text", el, over(colour, behind), behind);
}
return found;
"""


def set_theme(driver, theme: str) -> None:
    """Switch the loaded page to the theme's ``"light"`` or ``"dark"`` mode (pydata-sphinx-theme reads
    ``data-theme`` on ``<html>``), as its switcher does."""
    if theme not in ("light", "dark"):
        raise ValueError(f"theme must be 'light' or 'dark', got {theme!r}")
    # The theme eases colours from one mode to the other (CSS transitions): read at once, as the checks do, a
    # colour may be caught half-way (on a loaded machine, the search page's button was read mid-way from dark to
    # light, at contrast 1.9). Transitions and animations are switched off first, so every colour read after
    # the switch is the mode's own.
    driver.execute_script(
        "if (!document.getElementById('no-transitions')) {"
        "  const style = document.createElement('style'); style.id = 'no-transitions';"
        "  style.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }';"
        "  document.head.appendChild(style); }"
        "document.documentElement.dataset.theme = arguments[0]; document.documentElement.dataset.mode = arguments[0];",
        theme,
    )


def low_contrast_text(driver) -> list[str]:
    """Text of the loaded page's content column that is near-invisible: a WCAG contrast below
    :data:`MIN_CONTRAST` against what is drawn behind it, one line each."""
    return list(driver.execute_script(_CONTRAST, MIN_CONTRAST))


def figure_scales(driver) -> list[tuple[str, int, float]]:
    """(file name, natural width, shown width) of each figure a cell drew on the loaded page, in page order:
    the HTML shows a PNG pixel as ``shown / natural`` CSS pixels."""
    return [
        (src.rsplit("/", 1)[-1], int(natural), float(shown))
        for src, natural, shown in driver.execute_script(
            'return [...document.querySelectorAll("article.bd-article .cell_output img")]'
            '.map(img => [img.getAttribute("src"), img.naturalWidth, img.getBoundingClientRect().width]);'
        )
    ]


def _screenshot(driver, path: Path, size: tuple[int, int]) -> None:
    """The whole page at the width of ``size`` (up to Chromium's limit in height)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(size[0], min(max(height, size[1]), MAX_SCREENSHOT_HEIGHT))
    driver.save_screenshot(str(path))
    driver.set_window_size(*size)


class _Links(HTMLParser):
    """The ids and the internal links of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.add(attributes["id"])
        if tag == "a" and attributes.get("name"):
            self.ids.add(attributes["name"])
        for key in ("href", "src"):
            value = attributes.get(key)
            if value and (tag in ("a", "img", "script", "link", "source", "iframe")):
                self.links.append(value)


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8", errors="replace"))
    return parser


def check_links(pages: list[Path], site: Path) -> list[str]:
    """Every internal link of ``pages`` whose file or anchor does not exist under ``site``."""
    site = site.resolve()
    parsed: dict[Path, _Links] = {}

    def links_of(page: Path) -> _Links:
        if page not in parsed:
            parsed[page] = _parse(page)
        return parsed[page]

    problems = []
    for page in pages:
        page = page.resolve()
        for link in links_of(page).links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue  # external: followed only when clicked; network requests are checked in the browser
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                problems.append(f"{page.relative_to(site)}: link to a missing file: {link}")
            elif target.is_dir():
                problems.append(f"{page.relative_to(site)}: link to a folder (offline there is no index): {link}")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in links_of(target).ids:
                problems.append(f"{page.relative_to(site)}: anchor that does not resolve: {link}")
    return problems


def book_pages(site: Path) -> list[Path]:
    """Every HTML page of a built book (the static assets aside)."""
    skip = {"_static", "_sources", "_images", "_downloads"}
    return sorted(p for p in site.rglob("*.html") if not skip & set(p.relative_to(site).parts))
