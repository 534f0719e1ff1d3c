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
