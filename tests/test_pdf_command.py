"""The PDF command the book shows (book/_ext/book_pages.py, on the introduction and the reproducibility page
while no PDF is built) is the README's third command: the PDF, its LaTeX log check, then the HTML.

A reader who copies the book's command must get the same checks as one who copies the README's (the
book's command once left out the log check, so a PDF with text cut at the page edge built silently).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

from book_pages import PDF_COMMAND  # noqa: E402


def readme_pdf_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## The PDF") :]
    return re.search(r"```bash\n(.+?)\n```", section, flags=re.S).group(1)


def test_the_book_shows_the_readme_pdf_command():
    readme = readme_pdf_command()
    assert readme.endswith(PDF_COMMAND), (readme, PDF_COMMAND)
    assert "tests/pdf_log_check.py _build/latex/lagtheory.log" in PDF_COMMAND
    steps = PDF_COMMAND.split(" && ")
    assert steps[0].endswith("--builder pdflatex") and "pdf_log_check" in steps[1] and "-W -n" in steps[2]
