"""The PDF does not say that something opens when clicked (book/_ext/latex_layout.py, HTML_ONLY_PHRASES).

Every chapter's sentence above its table of checks says "each number opens the cell", which is true of
the HTML (a number unfolds the check cell) and not of print. Each such paragraph of the chapters' text
forms, as the Markdown parser hands it to Sphinx (soft line breaks kept), must come out of the PDF's
rewrite without "opens", and the HTML must keep it as written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils import nodes
from docutils.utils import new_document

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

from latex_layout import printed_phrases  # noqa: E402

PARAGRAPHS = [
    (path.stem, paragraph)
    for path in sorted((ROOT / "book" / "text").glob("*.md"))
    for paragraph in re.split(r"\n\s*\n", path.read_text(encoding="utf-8"))
    if re.search(r"each\s+number\s+opens", paragraph)
]


def rewritten(paragraph: str, builder: str) -> str:
    document = new_document("page")
    # MyST hands a soft line break to docutils as its own text node.
    lines = paragraph.strip().split("\n")
    node = nodes.paragraph()
    for i, line in enumerate(lines):
        node += nodes.Text(line)
        if i < len(lines) - 1:
            node += nodes.Text("\n")
    document += node
    printed_phrases(SimpleNamespace(builder=SimpleNamespace(format=builder)), document, "page")
    return document.astext()


def test_every_chapter_with_a_checks_table_says_it():
    assert len(PARAGRAPHS) >= 10, [name for name, _ in PARAGRAPHS]


@pytest.mark.parametrize(("chapter", "paragraph"), PARAGRAPHS, ids=[name for name, _ in PARAGRAPHS])
def test_the_pdf_says_where_a_number_leads(chapter, paragraph):
    printed = rewritten(paragraph, "latex")
    assert "opens" not in printed, printed
    assert "each number links to the check cell" in printed
    assert rewritten(paragraph, "html") == paragraph.strip()
