"""The claim map parser (book/_ext/claims.py) on a synthetic book, and the rules on the real book."""

import json
import re
from pathlib import Path

import pytest
from claims import CheckCell, read_claims  # book/_ext (pytest.ini puts it on the path)

BOOK = Path(__file__).resolve().parents[1] / "book"


def notebook(cells):
    return json.dumps(
        {
            "cells": [{"cell_type": kind, "source": text, "metadata": {}} for kind, text in cells],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


@pytest.fixture
def mini_book(tmp_path):
    (tmp_path / "a.md").write_text(
        "```{prf:definition} Thing\n:label: def-thing\nA thing.\n```\n\n"
        "```{prf:lemma} Small\n:label: lem-small\nStatement.\n```\n"
        "```{prf:proof}\nBy {prf:ref}`def-thing`.\n```\n"
    )
    (tmp_path / "b.ipynb").write_text(
        notebook(
            [
                (
                    "markdown",
                    ":::{prf:theorem} Big\n:label: thm-big\n:nonumber:\nText.\n:::\n:::{prf:proof}\n"
                    "Uses {prf:ref}`the small lemma <lem-small>` and {prf:ref}`def-thing`.\n:::\n",
                ),
                ("code", "# check[sympy]: lem-small, thm-big\nassert True"),
                ("code", "# check[numeric]: thm-big\nassert 1 + 1 == 2"),
            ]
        )
    )
    return tmp_path


def test_statements_edges_and_status(mini_book):
    claims = read_claims(mini_book)
    assert set(claims.statements) == {"def-thing", "lem-small", "thm-big"}
    assert claims.edges() == [("def-thing", "lem-small"), ("def-thing", "thm-big"), ("lem-small", "thm-big")]
    assert claims.statements["thm-big"].status == "sympy and numeric"
    assert claims.statements["lem-small"].status == "sympy only"
    assert claims.statements["def-thing"].status == "none"
    assert claims.problems() == []  # definitions need no check


def test_check_cells_are_kept_with_their_place(mini_book):
    claims = read_claims(mini_book)
    sympy_cell = CheckCell("sympy", ("lem-small", "thm-big"), "b.ipynb", 1, 1)
    numeric_cell = CheckCell("numeric", ("thm-big",), "b.ipynb", 2, 2)
    assert claims.check_cells == [sympy_cell, numeric_cell]
    assert claims.statements["thm-big"].check_cells == [sympy_cell, numeric_cell]
    assert claims.statements["lem-small"].check_cells == [sympy_cell]
    assert numeric_cell.anchor == "check-b-2"
    assert CheckCell("numeric", ("x",), "sub/c.ipynb", 4, 3).anchor == "check-sub-c-3"


def test_text_forms_are_skipped(mini_book):
    """book/text holds the notebooks' jupytext pairs: reading them too would define every label twice."""
    (mini_book / "text").mkdir()
    (mini_book / "text" / "b.md").write_text(":::{prf:theorem} Big\n:label: thm-big\nText.\n:::\n")
    (mini_book / "text" / "new.md").write_text(":::{prf:lemma} Only here\n:label: lem-text-only\nText.\n:::\n")
    claims = read_claims(mini_book)
    assert claims.problems() == []
    assert "lem-text-only" not in claims.statements


def test_experiment_labels_are_kept_but_need_no_statement(mini_book):
    (mini_book / "g.ipynb").write_text(notebook([("markdown", "text"), ("code", "# check[numeric]: emp-run\n1")]))
    claims = read_claims(mini_book)
    assert claims.problems() == []
    assert CheckCell("numeric", ("emp-run",), "g.ipynb", 1, 1) in claims.check_cells


def test_unchecked_theorem_is_a_problem(mini_book):
    (mini_book / "c.md").write_text("```{prf:corollary} Lonely\n:label: cor-lonely\nX.\n```\n")
    assert read_claims(mini_book).problems() == ["c.md: corollary cor-lonely has no check attached"]


def test_unknown_citation_is_a_problem(mini_book):
    (mini_book / "a.md").write_text(
        "```{prf:lemma} Small\n:label: lem-small\nS.\n```\n```{prf:proof}\nBy {prf:ref}`lem-missing`.\n```\n"
    )
    problems = read_claims(mini_book).problems()
    assert any("cites unknown label lem-missing" in p for p in problems)


def test_check_naming_unknown_label_is_a_problem(mini_book):
    (mini_book / "d.ipynb").write_text(notebook([("code", "# check[numeric]: thm-nowhere\n1")]))
    assert any("unknown label thm-nowhere" in p for p in read_claims(mini_book).problems())


def test_duplicate_label_and_unknown_check_kind(mini_book):
    (mini_book / "e.md").write_text("```{prf:lemma} Again\n:label: lem-small\nS.\n```\n")
    (mini_book / "f.ipynb").write_text(notebook([("code", "# check[vibes]: lem-small\n1")]))
    problems = read_claims(mini_book).problems()
    assert any("defined twice" in p for p in problems)
    assert any("'vibes'" in p for p in problems)


def test_certified_checks(mini_book):
    """A certified check colours its statement 'certified'; alone, without a float or sympy check, it is a problem."""
    (mini_book / "g.ipynb").write_text(
        notebook([("code", "# check[certified]: thm-big\n1"), ("code", "# check[certified]: lem-small\n1")])
    )
    claims = read_claims(mini_book)
    assert claims.statements["thm-big"].status == "certified"
    assert claims.statements["lem-small"].status == "certified"
    assert claims.statements["def-thing"].status == "none"
    assert claims.problems() == []
    (mini_book / "h.md").write_text("```{prf:lemma} Only balls\n:label: lem-balls\nX.\n```\n")
    (mini_book / "i.ipynb").write_text(notebook([("code", "# check[certified]: lem-balls\n1")]))
    assert read_claims(mini_book).problems() == [
        "h.md: lemma lem-balls has certified checks but no sympy or numeric check beside them"
    ]


def test_bad_directory():
    with pytest.raises(ValueError, match="book_dir"):
        read_claims("/nonexistent/book")


def test_certified_cells_say_so_and_use_ball_arithmetic():
    """Every certified check cell of the book computes with lagtheory.certified and its stored output
    says "certified (ball arithmetic)" or "certified (exact rationals)", so a reader sees which
    results are proved at their instances, and how."""
    claims = read_claims(BOOK)
    certified = [c for c in claims.check_cells if c.kind == "certified"]
    assert certified  # the theory chapters have them
    for cell in certified:
        stored = json.loads((BOOK / cell.source).read_text())["cells"][cell.cell]
        source = "".join(stored["source"])
        text = "".join("".join(o.get("text", "")) for o in stored.get("outputs", []))
        assert re.search(r"\b(?:C|certified)\.\w+\(", source), (cell.source, cell.number)  # calls lagtheory.certified
        assert re.search(r"certified \((?:ball arithmetic|exact rationals)\)", text), (cell.source, cell.number)


def test_the_book_follows_its_rules():
    """Every lemma, theorem, proposition and corollary of the book has a check,
    and every label a proof cites exists."""
    claims = read_claims(BOOK)
    assert claims.problems() == []


def _verified_section(text: str) -> str | None:
    """The section "What this chapter (page) verified" of a notebook's text, up to the next level-2 heading."""
    match = re.search(r"^## What this (?:chapter|page) verified\n(?P<body>.*?)(?=^## |\Z)", text, re.M | re.S)
    return match["body"] if match else None


@pytest.mark.parametrize("source", sorted({c.source for c in read_claims(BOOK).check_cells}))
def test_every_chapter_closes_with_what_it_verified(source):
    """A page with check cells ends with "What this chapter verified": the table generated from its check
    markers ({chapter-checks}, book/_ext/claim_links.py), and prose that names each distinctive kind of
    check the page has (with sympy, certified), so the list cannot leave out a kind the cells perform."""
    cells = [c for c in read_claims(BOOK).check_cells if c.source == source]
    notebook_text = json.loads((BOOK / source).read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in notebook_text if c["cell_type"] == "markdown")
    section = _verified_section(text)
    assert section is not None, f"{source} has check cells but no section 'What this chapter verified'"
    assert "```{chapter-checks}" in section, f"{source}: the section lacks the generated table"
    kinds = {c.kind for c in cells}
    if "sympy" in kinds:
        assert "sympy" in section, f"{source} has sympy checks; its closing section does not say so"
    if "certified" in kinds:
        assert "certified" in section.lower(), f"{source} has certified checks; its closing section does not say so"
