"""The claim map: every statement of the book, what its proof cites, and what checks it.

It reads the book's own sources (MyST markdown files and the markdown and code
cells of notebooks) and collects

* statements: sphinx-proof directives ``{prf:definition}``, ``{prf:lemma}``,
  ``{prf:theorem}``, ``{prf:proposition}``, ``{prf:corollary}`` with a ``:label:``;
* citations: every ``{prf:ref}`` inside a ``{prf:proof}`` block. A proof proves
  the statement directly above it in the same file (the book's convention);
* checks: a code cell whose first line is ``# check[sympy]: label, label``,
  ``# check[numeric]: label`` or ``# check[certified]: label`` attaches a symbolic,
  numeric (float64) or certified (ball arithmetic, ``lagtheory.certified``) check to
  those labels.
  Each check cell is kept with its notebook and cell index, so the book can link
  a statement to the cells that check it (``book/_ext/claim_links.py``).

It is book tooling, not mathematics: it lives beside the book in ``book/_ext``,
where the Sphinx extension ``claim_links`` imports it; the claim-map page and
``tests/test_claims.py`` import it from there too. The text forms in
``book/text/`` are skipped (they pair the notebooks cell for cell, and reading
both would define every label twice).

:meth:`ClaimMap.problems` lists what breaks the book's rules: a theorem-like
statement with no check, a proof that cites a label that does not exist, a
check naming an unknown label, a label defined twice, a proof with no statement
above it, a statement whose only checks are certified (a certified check keeps a
sympy or float64 check beside it as a second, independent path).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

THEOREM_LIKE = ("lemma", "theorem", "proposition", "corollary")
STATEMENT_KINDS = ("definition", *THEOREM_LIKE)
CHECK_KINDS = ("sympy", "numeric", "certified")
CERTIFIED = "certified"  # the kind of a ball-arithmetic check: it proves its inequalities at its instances
TEXT_FORMS = "text"  # the folder of the chapters' jupytext text forms, under the book directory

_OPEN = re.compile(r"^(?P<fence>`{3,}|:{3,})\{prf:(?P<kind>\w+)\}(?P<title>.*)$")
_LABEL = re.compile(r"^:label:\s*(?P<label>\S+)\s*$")
_REF = re.compile(r"\{prf:ref\}`(?:[^`<]*<)?(?P<label>[^`<>]+?)>?`")
_CHECK = re.compile(r"^#\s*check\[(?P<kind>\w+)\]:\s*(?P<labels>.+)$")


@dataclass(frozen=True)
class CheckCell:
    """One check cell: its kind, the labels on its first line, and where it is.

    ``source`` is the notebook's path relative to the book directory, ``cell``
    the cell's 0-based index in the notebook, and ``number`` its 1-based
    position among the check cells of that notebook (the "check 3" a reader sees).
    """

    kind: str
    labels: tuple[str, ...]
    source: str
    cell: int
    number: int

    @property
    def anchor(self) -> str:
        """The HTML id of the cell on its page, e.g. ``check-representation-3``."""
        return f"check-{Path(self.source).with_suffix('').as_posix().replace('/', '-')}-{self.number}"


@dataclass
class Statement:
    """One labelled statement of the book: a node of the claim map."""

    label: str
    kind: str
    title: str
    source: str
    cites: set[str] = field(default_factory=set)
    check_cells: list[CheckCell] = field(default_factory=list)

    @property
    def checks(self) -> set[str]:
        """The kinds of check attached ('sympy', 'numeric', 'certified')."""
        return {c.kind for c in self.check_cells}

    @property
    def status(self) -> str:
        """'certified' (at least one certified check, beside a sympy or numeric one), else
        'sympy and numeric', 'numeric only', 'sympy only' or 'none'."""
        if CERTIFIED in self.checks:
            return "certified"
        if {"sympy", "numeric"} <= self.checks:
            return "sympy and numeric"
        if self.checks:
            return f"{next(iter(self.checks))} only"
        return "none"


@dataclass
class ClaimMap:
    """All statements of a book, keyed by label, and the rule violations found while reading."""

    statements: dict[str, Statement]
    errors: list[str]
    check_cells: list[CheckCell] = field(default_factory=list)

    def edges(self) -> list[tuple[str, str]]:
        """(cited, citing) pairs: an edge from each result to the statements whose proofs use it."""
        return sorted((cited, s.label) for s in self.statements.values() for cited in s.cites)

    def problems(self) -> list[str]:
        """Every violation of the book's rules, one line each (empty when the book is sound)."""
        found = list(self.errors)
        for s in self.statements.values():
            if s.kind in THEOREM_LIKE and not s.checks:
                found.append(f"{s.source}: {s.kind} {s.label} has no check attached")
            if s.checks == {CERTIFIED}:
                found.append(
                    f"{s.source}: {s.kind} {s.label} has certified checks but no sympy or numeric check beside them"
                )
            found.extend(
                f"{s.source}: the proof of {s.label} cites unknown label {c}"
                for c in sorted(s.cites)
                if c not in self.statements
            )
        return found


def _markdown_and_code(path: Path) -> list[tuple[str, str]]:
    """The (cell type, text) sequence of a notebook or a MyST markdown file."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return [(c["cell_type"], "".join(c["source"])) for c in cells]
    return [("markdown", path.read_text(encoding="utf-8"))]


def _directives(text: str):
    """Yield (kind, title, label, body) for every prf directive in a markdown text."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _OPEN.match(lines[i].strip())
        if not match:
            i += 1
            continue
        fence, kind, title = match["fence"], match["kind"], match["title"].strip()
        label, body = None, []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            label_match = _LABEL.match(lines[i].strip())
            if label_match and label is None and not body:
                label = label_match["label"]
            elif not (lines[i].strip().startswith(":") and not body and label is None):
                body.append(lines[i])
            i += 1
        yield kind, title, label, "\n".join(body)
        i += 1


def read_claims(book_dir: str | Path) -> ClaimMap:
    """Collect the claim map of every .md and .ipynb file under ``book_dir`` (build outputs skipped)."""
    book_dir = Path(book_dir)
    if not book_dir.is_dir():
        raise ValueError(f"book_dir must be an existing directory, got {str(book_dir)!r}")
    statements: dict[str, Statement] = {}
    check_cells: list[CheckCell] = []
    errors: list[str] = []
    files = sorted(
        p
        for p in book_dir.rglob("*")
        if p.suffix in (".md", ".ipynb")
        and not any(part.startswith(("_build", ".")) for part in p.relative_to(book_dir).parts)
        # book/text/*.md are the notebooks' paired text forms: the same cells a second time
        and not p.is_relative_to(book_dir / TEXT_FORMS)
    )
    for path in files:
        source = str(path.relative_to(book_dir))
        current: Statement | None = None
        number = 0
        for index, (cell_type, text) in enumerate(_markdown_and_code(path)):
            if cell_type == "code":
                first = text.lstrip().splitlines()[0] if text.strip() else ""
                match = _CHECK.match(first)
                if match:
                    number += 1
                    labels = tuple(part.strip() for part in match["labels"].split(",") if part.strip())
                    check_cells.append(CheckCell(match["kind"], labels, source, index, number))
                continue
            for kind, title, label, body in _directives(text):
                if kind in STATEMENT_KINDS:
                    if label is None:
                        errors.append(f"{source}: a {kind} '{title}' has no :label:")
                        current = None
                        continue
                    if label in statements:
                        errors.append(f"{source}: label {label} is defined twice")
                    current = statements[label] = Statement(label, kind, title, source)
                elif kind == "proof":
                    if current is None:
                        errors.append(f"{source}: a proof with no labelled statement above it")
                        continue
                    current.cites.update(m["label"] for m in _REF.finditer(body))
    for check in check_cells:
        if check.kind not in CHECK_KINDS:
            errors.append(f"{check.source}: check kind {check.kind!r} is not one of {CHECK_KINDS}")
            continue
        for label in check.labels:
            if label in statements:
                statements[label].check_cells.append(check)
            elif not label.startswith("emp-"):
                errors.append(f"{check.source}: a check names unknown label {label}")
    return ClaimMap(statements, errors, check_cells)
