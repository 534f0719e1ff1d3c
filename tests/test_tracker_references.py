"""The book cites no tracker issue numbers a reader cannot open ("issue 21", "issues 9 and 10").

A reader sees the pages (``book/*.md``), the chapters' text (``book/text/*.md``, the notebooks' Markdown),
what the notebooks print (their stored outputs), the benchmark tables the performance page includes and
the package's docstrings on the API pages; the tracker is not theirs to open, so each such place names the
study, the chapter or the record instead. Text inside a registered section of ``book/registration.md`` stays
as registered (a dated note outside it explains). The code and the tests say the same for their readers.

:data:`PENDING` lists the files other sessions were rewriting when this test was written; each must still
have a hit (so that the list shrinks as they are fixed, rather than hide a new one).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lagtheory.experiments.confirmatory.registration import SECTIONS, registered_section

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
ISSUE = re.compile(r"\bissues?\s+#?\d+", re.I)

PENDING = {
    # the template of the registered transformer section keeps the registered "issue 32" for good
    "lagtheory/experiments/confirmatory/transformer_text.py": "the registered section's template (stays)",
}
"""Files with a tracker reference left for the sessions that own them, with the reason."""


def without_registered_sections(text: str) -> str:
    """``text`` with every registered section (the text between its marker lines) left out."""
    for name in SECTIONS:
        text = text.replace(registered_section(text, name), "") if SECTIONS[name].begin in text else text
    return text


def outputs(notebook: Path) -> str:
    """Everything the notebook's stored outputs print, as text."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return "\n".join(json.dumps(output) for cell in cells for output in cell.get("outputs", []))


def prose() -> dict[str, str]:
    """What a reader sees, by file."""
    seen = {}
    for path in [*sorted(BOOK.glob("*.md")), *sorted((BOOK / "text").glob("*.md"))]:
        seen[str(path.relative_to(ROOT))] = without_registered_sections(path.read_text(encoding="utf-8"))
    for page in sorted(BOOK.glob("*.md")):
        for included in re.findall(r"^```\{include\} (\S+)", page.read_text(encoding="utf-8"), flags=re.M):
            path = (page.parent / included).resolve()
            seen[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for notebook in sorted(BOOK.glob("*.ipynb")):
        seen[str(notebook.relative_to(ROOT))] = outputs(notebook)
    return seen


def code() -> dict[str, str]:
    """The package (its docstrings are the API pages), the tests, the benchmarks and the book's tooling."""
    files = [ROOT / "conftest.py"]
    for folder in ("lagtheory", "tests", "benchmarks", "book/_ext"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in files}


def hits(text: str) -> list[str]:
    return [text[max(0, m.start() - 40) : m.end() + 20].replace("\n", " ") for m in ISSUE.finditer(text)]


@pytest.mark.parametrize("kind", [prose, code], ids=["prose", "code"])
def test_no_tracker_issue_numbers(kind):
    found = {
        name: hits(text)
        for name, text in kind().items()
        if name not in PENDING and name != "tests/test_tracker_references.py"
    }
    assert not {name: where for name, where in found.items() if where}


def test_the_registered_template_is_exempt_only_in_its_registered_text():
    # The registered transformer section is generated from a template in confirmatory.transformer_text, whose
    # "issue 32" is registered text; the page's copy is exempt (inside the markers), the rest is not.
    page = (BOOK / "registration.md").read_text(encoding="utf-8")
    assert ISSUE.search(registered_section(page, "transformer"))
    assert not hits(without_registered_sections(page))
    assert hits("see issue 21 for it") and hits("Issues 9") and not hits("tissue 3 mm")


def test_pending_files_still_have_their_hit():
    everything = {**prose(), **code()}
    for name, reason in PENDING.items():
        assert name in everything, f"{name} ({reason}) is gone: remove it from PENDING"
        assert hits(everything[name]), f"{name} has no tracker reference left: remove it from PENDING ({reason})"
