"""The API reference is one page per part of the package (book/api/*.md) under an index page (book/api.md).

Every public module of ``lagtheory`` (and the claim reader's modules in book/_ext) is documented on
exactly one page; every page is in the table of contents and in the index page's table. A new
module fails here until a page documents it (``.. automodule:: <module>`` with ``:members:``). How
long each page renders is checked by the browser test (tests/test_rendered_book.py).
"""

from __future__ import annotations

import pkgutil
import re
from collections import Counter
from pathlib import Path

import yaml

import lagtheory

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "book" / "api").glob("*.md"))
AUTOMODULE = re.compile(r"^\.\. automodule:: (\S+)", re.M)
TOOLING = {"claims", "claim_graph"}


def documented() -> Counter:
    return Counter(module for page in PAGES for module in AUTOMODULE.findall(page.read_text()))


def test_every_module_is_documented_on_exactly_one_page():
    walked = [info for info in pkgutil.walk_packages(lagtheory.__path__, "lagtheory.") if "._" not in f".{info.name}"]
    modules = {info.name for info in walked}
    count = documented()
    # a package is documented by its modules' pages (a page may document the package too)
    missing = sorted(info.name for info in walked if not info.ispkg and info.name not in count)
    assert not missing, f"modules on no API page (add an automodule to a page of book/api): {missing}"
    twice = sorted(name for name, n in count.items() if n > 1)
    assert not twice, f"modules on more than one API page: {twice}"
    unknown = sorted(set(count) - modules - TOOLING)
    assert not unknown, f"API pages document modules that do not exist: {unknown}"


def test_every_page_is_in_the_contents_and_the_index_table():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [
        section["file"]
        for part in toc["parts"]
        for chapter in part["chapters"]
        if chapter["file"] == "book/api"
        for section in chapter.get("sections", [])
    ]
    names = [f"book/api/{page.stem}" for page in PAGES]
    assert sorted(files) == sorted(names)
    index = (ROOT / "book" / "api.md").read_text()
    linked = re.findall(r"\]\(api/([a-z_]+)\.md\)", index)
    assert sorted(linked) == sorted(page.stem for page in PAGES)
    for page in PAGES:  # the index's modules column names what the page documents
        row = next(line for line in index.splitlines() if f"](api/{page.stem}.md)" in line)
        for module in AUTOMODULE.findall(page.read_text()):
            assert module.rpartition(".")[2] in row, (page.name, module)
