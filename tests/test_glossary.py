"""Every chapter links a glossary word (book/glossary.md) at its first use.

A chapter's prose (its Markdown, without code, mathematics, inline code, roles and links) is read in
order; the first time it uses a word of the glossary, in one of the word's forms below, that use must be
the role ``{term}`...``` pointing at the word's entry. The forms are those that carry the glossary's
sense: "fails" alone is the plain verb, "a failed run" or "the failures" the experiments' term; a code
cell of a notebook is not an experiment's cell.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
GLOSSARY = BOOK / "glossary.md"
CHAPTERS = sorted((BOOK / "text").glob("*.md"))
NOT_AN_EXPERIMENT_CELL = r"(?<!check )(?<!code )(?<!next )(?<!this )(?<!that )(?<!notebook )(?<!sympy )(?<!the )"
FORMS = {
    "calibrated rate": r"\bcalibrat(?:ion|ed)\b",
    "cell": NOT_AN_EXPERIMENT_CELL + r"\bcells?\b(?! (?:below|above|of this|prints|checks))",
    "equivalence": r"\bequivalen(?:ce|t)\b",
    "failure": r"\bfailures?\b|\bfailed runs?\b",
    "Holm": r"\bHolm\b",
    "paired seed": r"\bpaired seeds?\b",
    "recognition": r"\brecogni[sz](?:e|es|ed|ing|ion)\b",
    "regime": r"\bregimes?\b",
    "schedule": r"\bschedules?\b",
    "step budget": r"\bstep budgets?\b",
    "warm-up": r"\bwarm-ups?\b",
    "window": r"\bstep-size windows?\b|\bwindows?\b",
}
# Spans that are not prose: display and inline maths, inline code, roles (their text too, except {term}),
# Markdown links, HTML, label targets.
MASKS = [
    r"\$\$.*?\$\$",
    r"\$[^$\n]*\$",
    r"(?<!\})`[^`]*`",
    r"\{(?!term\})[a-z:-]+\}`[^`]*`",
    r"\[[^\]]*\]\([^)]*\)",
    r"<[^>]+>",
]
TERM_ROLE = re.compile(r"\{term\}`(?P<text>[^`<]*?)(?:\s*<(?P<target>[^>]+)>)?`")


def glossary_terms() -> list[str]:
    text = GLOSSARY.read_text()
    body = text[text.index("```{glossary}") : text.rindex("```")]
    return re.findall(r"^(\S[^\n]*)$", body.split("\n", 1)[1], re.M)


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the prose of a chapter's text form, in order."""
    lines, out, fence = text.split("\n"), [], None
    start = lines.index("---", 1) + 1 if lines and lines[0] == "---" else 0
    for number, line in enumerate(lines[start:], start + 1):
        opening = re.match(r"^\s*(`{3,}|~{3,})(.*)$", line)
        if fence is None and opening:
            if not opening.group(2).strip().startswith("{") or opening.group(2).strip().startswith("{code-cell}"):
                fence = opening.group(1)
            continue
        if fence is not None:
            if line.strip() == fence:
                fence = None
            continue
        if line.lstrip().startswith((":", "#", "%", "|")) or re.match(
            r"^\s*(caption|name|mystnb|figure|tags)\s*:", line
        ):
            continue
        out.append((number, line))
    return out


def first_use(text: str, term: str) -> tuple[int, str, bool] | None:
    """(line, the words, whether linked to ``term``) of the chapter's first use of ``term``, or None."""
    for number, line in prose_lines(text):
        masks = [m.span() for rx in MASKS for m in re.finditer(rx, line)]
        found = []
        for role in TERM_ROLE.finditer(line):
            if (role["target"] or role["text"]).strip().lower() == term.lower():
                found.append((role.start(), role.group(), True))
            masks.append(role.span())
        for m in re.finditer(FORMS[term], line, re.I):
            if not any(a <= m.start() < b for a, b in masks):
                found.append((m.start(), m.group(), False))
        if found:
            _, words, linked = min(found)
            return number, words, linked
    return None


def test_the_glossary_defines_the_words_of_issue_34():
    terms = {term.lower() for term in glossary_terms()}
    assert terms == {term.lower() for term in FORMS}


# The theory chapters (and the explore page) share two of the glossary's words in its sense; their "cells" are the notebooks'
# and a "failure" there is a plain word. The claim map is a page about the book.
THEORY = ("setting", "representation", "threshold", "failures", "three_phase", "generalisations", "explore")
WORDS = {chapter.stem: tuple(FORMS) for chapter in CHAPTERS} | dict.fromkeys(THEORY, ("recognition", "schedule"))
WORDS["claim_map"] = ()
LINKED_BY_OWNERS: dict[str, str] = {}


def chapter_params() -> list:
    return [
        pytest.param(
            chapter,
            id=chapter.stem,
            marks=[pytest.mark.xfail(strict=True, reason=LINKED_BY_OWNERS[chapter.stem])]
            if chapter.stem in LINKED_BY_OWNERS
            else [],
        )
        for chapter in CHAPTERS
    ]


@pytest.mark.parametrize("chapter", chapter_params())
def test_each_glossary_word_is_linked_at_its_first_use(chapter):
    text = chapter.read_text()
    unlinked = []
    for term in WORDS[chapter.stem]:
        use = first_use(text, term)
        if use and not use[2]:
            unlinked.append(f"line {use[0]}: {use[1]!r} ({term})")
    assert not unlinked, f"{chapter.name}: first uses not linked to the glossary: {unlinked}"


def test_first_use_finds_the_first_form_and_its_link():
    text = "# Title\n\nThe $cells$ aside, each `cell` too, one {term}`cell` then a cell.\n\nLag's warm-up.\n"
    assert first_use(text, "cell") == (3, "{term}`cell`", True)
    assert first_use(text, "warm-up") == (5, "warm-up", False)
    assert first_use("The check cell below; the failures.", "cell") is None
    assert first_use("It fails.", "failure") is None
