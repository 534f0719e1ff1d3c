"""One answer everywhere: the verdict chapter, the introduction and the README say the same thing,
drawn from one source, lagtheory.experiments.confirmatory.answer, computed from the committed confirmatory records.

* the verdict notebook's stored glue values of the answer are the sentences computed now from the records, and its
  answer block glues every sentence, in order, and nothing else;
* the README's opening (before its first ``##`` heading) is the book's description and those sentences, at most
  200 words;
* the introduction's claims table states the empirical answer once, as the verdict's glued short form with a link,
  and no other line of the introduction states a count about lag or joint by hand (a planted stale sentence fails,
  below).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from lagtheory.experiments.confirmatory import answer as A

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = A.answer(ROOT / "book" / "data" / "confirmatory")
INTRO_ROW = (
    "| Attention lagging output helps in other tasks. | not a theorem: a [registered study](confirmatory.ipynb) | "
    "[the verdict](verdict.ipynb): {glue:text}`verdict.ipynb::answer_short:s` |"
)
"""The introduction's one row about the empirical answer: the answer itself is glued from the verdict."""
CLAIM_WORDS = re.compile(
    r"\b(fail\w*|helps?|helped|hurts?|hurt|cells?|seeds?|recogni\w*|fewer|less often|more often)\b", re.I
)


def words(text: str) -> int:
    return len(text.split())


def glued_values(notebook: Path) -> dict[str, str]:
    """The values a notebook glued (scrapbook outputs), by name, as the text the page shows."""
    found = {}
    for cell in json.loads(notebook.read_text())["cells"]:
        for output in cell.get("outputs", []):
            scrapbook = output.get("metadata", {}).get("scrapbook")
            if scrapbook is not None:
                plain = "".join(output["data"][scrapbook["mime_prefix"] + "text/plain"])
                found[scrapbook["name"]] = ast.literal_eval(plain) if plain[:1] in "'\"" else plain
    return found


def readme_opening(text: str) -> str:
    """The README before its first ``##`` heading, without its title."""
    head = text[: text.index("\n## ")]
    return " ".join(line for line in head.splitlines() if not line.startswith("# "))


def intro_problems(text: str) -> list[str]:
    """What in the introduction states the empirical answer other than through the one glued row: the row itself
    changed, or any other line that names lag or joint together with a number and a word of the answer."""
    problems = []
    rows = [line for line in text.splitlines() if line.startswith("| Attention lagging output")]
    if rows != [INTRO_ROW]:
        problems.append(f"the empirical row is not the glued one: {rows}")
    for number, line in enumerate(text.splitlines(), 1):
        if line == INTRO_ROW:
            continue
        if re.search(r"\b(lag|joint)\b", line, re.I) and re.search(r"\d", line) and CLAIM_WORDS.search(line):
            problems.append(f"line {number} states a count about lag or joint by hand: {line[:80]}")
        if "exploratory so far" in line:
            problems.append(f"line {number} calls the answer exploratory: {line[:80]}")
    return problems


def test_the_verdict_glues_the_sentences_of_the_records():
    glued = glued_values(ROOT / "book" / "verdict.ipynb")
    for key, sentence in SENTENCES.items():
        assert glued.get(f"answer_{key}") == sentence, key


def test_the_verdicts_answer_block_is_the_sentences_in_order():
    text = (ROOT / "book" / "text" / "verdict.md").read_text()
    block = re.search(r"^:::\{container\} lag-answer\n(.*?)^:::$", text, re.S | re.M)
    assert block is not None, "the verdict has no lag-answer block"
    roles = re.findall(r"\{glue:text\}`answer_(\w+)`", block.group(1))
    assert roles == list(A.KEYS)
    rest = re.sub(r"\{glue:text\}`answer_\w+`", "", block.group(1))
    assert words(rest.replace("*", "")) <= 6, rest  # a short lead-in, no hand-written answer
    assert words(" ".join(SENTENCES[key] for key in A.KEYS)) <= 160


def test_the_readme_opens_with_the_same_sentences():
    opening = " ".join(readme_opening((ROOT / "README.md").read_text()).split())
    assert " ".join(A.readme_paragraph(SENTENCES).split()) in opening
    assert words(opening) <= 200, words(opening)


def test_the_intro_states_the_answer_once_through_the_glued_row():
    assert intro_problems((ROOT / "book" / "intro.md").read_text()) == []
    assert "short" in SENTENCES


@pytest.mark.parametrize(
    "stale",
    [
        "Lag failed significantly less often than joint in 46 of 108 cells, exploratory so far.",
        "On the log loss lag helped in 86 of the 450 main-grid cells and hurt in 82.",
    ],
)
def test_a_stale_sentence_in_the_intro_fails(stale):
    intro = (ROOT / "book" / "intro.md").read_text()
    planted = intro.replace("## Related work", f"{stale}\n\n## Related work")
    assert planted != intro
    assert intro_problems(planted)


def test_a_hand_written_answer_in_the_row_fails():
    intro = (ROOT / "book" / "intro.md").read_text()
    planted = intro.replace("{glue:text}`verdict.ipynb::answer_short:s`", "fewer failures in 46 of 108 cells")
    assert planted != intro and intro_problems(planted)


def test_a_stale_readme_fails():
    readme = (ROOT / "README.md").read_text()
    planted = readme.replace(SENTENCES["helps"].split()[-1], "2.", 1)
    assert planted != readme
    assert " ".join(A.readme_paragraph(SENTENCES).split()) not in " ".join(readme_opening(planted).split())
