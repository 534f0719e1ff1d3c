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
* a request for anything but ``file:``, ``data:``, ``blob:`` or ``about:``.

:func:`check_links` reads the HTML files themselves and reports every internal
link (``a href``, and ``src``/``href`` of scripts, stylesheets and images) whose
file does not exist, and every ``#anchor`` that no ``id`` (or ``name``) on the
target page defines.
"""

from __future__ import annotations

import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ALLOWED_SCHEMES = ("file", "data", "blob", "about")
WINDOW = (1400, 1000)
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
return found;
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
    const box = el.closest("mjx-container, pre, div.claim-graph, .pst-scrollable-table-container, table") || el;
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


def check_page(driver, page: Path, screenshot: Path | None = None) -> list[str]:
    """Load one page and return its problems (empty when a reader would see nothing wrong)."""
    driver.get_log("browser")  # drop what earlier pages left
    driver.get_log("performance")
    driver.set_window_size(*WINDOW)
    driver.get(page.resolve().as_uri())
    driver.execute_async_script(_WAIT)
    problems = list(driver.execute_script(_MEASURE))
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            problems.append(f"console error: {entry['message'][:240]}")
    problems.extend(f"network request: {url}" for url in _network_requests(driver.get_log("performance")))
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(WINDOW[0], min(max(height, WINDOW[1]), MAX_SCREENSHOT_HEIGHT))
        driver.save_screenshot(str(screenshot))
    return problems


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
