"""Every chapter notebook has a text form, book/text/<chapter>.md (MyST, paired by jupytext),
and the two agree cell by cell: same cell types, sources and cell metadata. The text form
is what authors edit and reviewers read; the notebook keeps the stored outputs that nbval
compares. `jupytext --sync book/text/<chapter>.md` brings the notebook up to date."""

from pathlib import Path

import jupytext
import pytest
from jupytext.compare import compare_notebooks

BOOK = Path(__file__).resolve().parent.parent / "book"
NOTEBOOKS = sorted(BOOK.glob("*.ipynb"))
TEXTS = sorted((BOOK / "text").glob("*.md"))
PAIRING = "ipynb,text//md:myst"


def test_every_notebook_has_a_text_form_and_back():
    assert NOTEBOOKS, "no chapter notebook found"
    assert [p.stem for p in NOTEBOOKS] == [p.stem for p in TEXTS]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_text_form_agrees_with_the_notebook(notebook: Path):
    text = BOOK / "text" / f"{notebook.stem}.md"
    from_notebook = jupytext.read(notebook)
    from_text = jupytext.read(text)
    assert from_notebook.metadata["jupytext"]["formats"] == PAIRING
    # Raises AssertionError naming the first cell that differs (type, source or metadata).
    compare_notebooks(from_text, from_notebook, fmt="md:myst", compare_outputs=False)


ROLE_AS_CODE = __import__("re").compile(r"(?<!`)`\{[\w:-]+\}`(?!`)")
"""A MyST role or directive name (``{prf:ref}``) written as inline code: markup the reader sees as text."""


def markup_shown_as_text(markdown: str) -> list[str]:
    """The MyST role and directive names that a chapter's prose shows as inline code (fenced blocks aside)."""
    import re

    prose = re.sub(r"^(`{3,}|:{3,}).*?^\1\s*$", "", markdown, flags=re.M | re.S)
    return ROLE_AS_CODE.findall(prose)


def test_markup_shown_as_text_is_found():
    assert markup_shown_as_text("to the statements whose proofs cite it with `{prf:ref}`. Next.") == ["`{prf:ref}`"]
    assert markup_shown_as_text("cite it.\n\n```{prf:lemma}\n:label: lem-a\nx\n```\n") == []


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_chapter_shows_markup_as_text(notebook: Path):
    """The claim map's explanation read "cite it with `{prf:ref}`" in the HTML and the PDF: the reader
    is shown the book's markup, not told what it means."""
    import nbformat

    cells = nbformat.read(notebook, as_version=4).cells
    found = [hit for cell in cells if cell.cell_type == "markdown" for hit in markup_shown_as_text(cell.source)]
    assert not found, f"{notebook.name} shows markup as text: {found}"
