"""The PDF breaks long hexadecimal digests (book/_ext/latex_layout.py, breakable_digests).

The registration's SHA-256 hashes are 64 characters of inline code with no place where LaTeX may break a
line: two of them ran 79 pt and 32 pt into the margin of the PDF (tests/pdf_log_check.py found them). In the
PDF each digest may break after every 8 characters; its characters, and the HTML, stay as written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import SimpleNamespace

from docutils import nodes
from docutils.utils import new_document

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

from latex_layout import breakable_digests  # noqa: E402

DIGEST = "1880aeda8ae751cd14fd453b965f6a14f7f55eeb764925d78bc825acc05da58e"


def laid_out(texts: list[str], builder: str) -> nodes.paragraph:
    document = new_document("page")
    paragraph = nodes.paragraph()
    for text in texts:
        paragraph += nodes.literal(text, text)
        paragraph += nodes.Text(" and ")
    document += paragraph
    breakable_digests(SimpleNamespace(builder=SimpleNamespace(format=builder)), document, "page")
    return paragraph


def test_a_digest_breaks_every_8_characters_in_the_pdf_only():
    paragraph = laid_out([DIGEST, "book/data/transformer_design.json", "deadbeef"], "latex")
    (raw,) = paragraph.findall(nodes.raw)
    assert raw["format"] == "latex"
    inner = re.fullmatch(r"\\sphinxcode\{\\sphinxupquote\{(.*)\}\}", raw.astext()).group(1)
    chunks = inner.split(r"\allowbreak{}")
    assert "".join(chunks) == DIGEST and [len(c) for c in chunks] == [8] * 8
    # a path and a short hexadecimal word stay inline code as Sphinx writes it
    assert [n.astext() for n in paragraph.findall(nodes.literal)] == ["book/data/transformer_design.json", "deadbeef"]
    html = laid_out([DIGEST], "html")
    assert [n.astext() for n in html.findall(nodes.literal)] == [DIGEST] and not list(html.findall(nodes.raw))


def test_the_books_digests_are_the_ones_it_breaks():
    # every inline SHA-256 of the book's pages is a digest the transform breaks (it would otherwise stick out)
    found = {
        digest
        for page in [*ROOT.glob("book/*.md"), *ROOT.glob("book/text/*.md")]
        for digest in re.findall(r"`([0-9a-fA-F]{32,})`", page.read_text(encoding="utf-8"))
    }
    assert found, "the registration page quotes its hashes"
    for digest in found:
        (raw,) = laid_out([digest], "latex").findall(nodes.raw)
        assert r"\allowbreak" in raw.astext(), digest
