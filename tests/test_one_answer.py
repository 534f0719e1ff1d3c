"""One answer everywhere: the verdict chapter, the introduction and the README open with the same plain answer,
drawn from one source, lagtheory.experiments.confirmatory.answer, computed from the committed records.

* the verdict notebook's stored glue values are the sentences computed now from the records; its answer block
  glues the plain answer's sentences, in order, and nothing else but a short lead-in; the registered study's
  counts follow it, glued in order;
* the plain answer has one sentence per question (at most five) and about twelve numbers;
* the README's opening (before its first ``##`` heading) is the book's description and the plain answer, and its
  first command comes within about 250 words;
* the introduction opens with the same answer block, glued from the verdict;
* the introduction's claims table states the empirical answer once, as the verdict's glued short form with a link,
  and no other line of the introduction states a count about lag or joint by hand (a planted stale sentence fails,
  below).
"""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path

import pytest

from lagtheory.experiments.confirmatory import answer as A
from lagtheory.experiments.confirmatory import replication_answer as RA
from lagtheory.experiments.confirmatory import transformer_replication as X

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = A.answer(ROOT / "book" / "data" / "confirmatory")
PLAIN = A.plain_answer(ROOT / "book" / "data")
ANSWER_BLOCK = re.compile(r"^:::\{container\} lag-answer\n(.*?)^:::$", re.S | re.M)
INTRO_ROW = (
    "| Lag helps the one-layer models in other tasks, in the selected cells. | not a theorem: a [registered study](confirmatory.ipynb) | "
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
    rows = [line for line in text.splitlines() if line.startswith("| Lag helps the one-layer models")]
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
    for key, sentence in PLAIN.items():
        assert glued.get(f"plain_{key}") == sentence, key


def test_the_plain_answer_is_short():
    assert len(A.PLAIN_KEYS) <= 5 and list(PLAIN) == list(A.PLAIN_KEYS)
    text = " ".join(PLAIN.values())
    assert len(re.findall(r"\d+(?:\.\d+)?", text)) <= 12, text
    assert all(sentence.count(". ") == 0 and sentence.endswith(".") for sentence in PLAIN.values())


def test_the_verdicts_answer_block_is_the_plain_answer_then_the_counts():
    text = (ROOT / "book" / "text" / "verdict.md").read_text()
    block = ANSWER_BLOCK.search(text)
    assert block is not None, "the verdict has no lag-answer block"
    roles = re.findall(r"\{glue:text\}`plain_(\w+)`", block.group(1))
    assert roles == list(A.PLAIN_KEYS)
    rest = re.sub(r"\{glue:text\}`plain_\w+`|\{term\}`[^`]*`", "", block.group(1))
    assert words(rest.replace("*", "")) <= 6, rest  # a short lead-in and the link to the verdicts' meaning
    after = text[block.end() :].split("\n\n", 2)[1]
    assert re.findall(r"\{glue:text\}`answer_(\w+)`", after) == list(A.KEYS), after
    assert words(" ".join(SENTENCES[key] for key in A.KEYS)) <= 160


def test_the_intro_opens_with_the_same_answer_block():
    text = (ROOT / "book" / "intro.md").read_text()
    block = ANSWER_BLOCK.search(text)
    assert block is not None and text[: block.start()].strip().count("\n") == 0, "the title, then the answer block"
    roles = re.findall(r"\{glue:text\}`verdict\.ipynb::plain_(\w+):s`", block.group(1))
    assert roles == list(A.PLAIN_KEYS)


def test_the_readme_opens_with_the_same_sentences():
    readme = (ROOT / "README.md").read_text()
    opening = " ".join(readme_opening(readme).split())
    assert " ".join(A.readme_paragraph(PLAIN).split()) in opening
    before = "\n".join(line for line in readme[: readme.index("```bash")].splitlines() if not line.startswith("#"))
    assert words(before) <= 250, words(before)


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
    planted = readme.replace("46 of 108", "47 of 108", 1)
    assert planted != readme
    assert " ".join(A.readme_paragraph(PLAIN).split()) not in " ".join(readme_opening(planted).split())


# A planted record with lag and joint exchanged: every sentence that states a count or a direction must change.
HELPS_HURTS = {"helps": "hurts", "hurts": "helps"}


def _exchanged_entry(entry: dict) -> dict:
    """One registered entry with lag and joint exchanged (written out here, not taken from the package)."""
    out = dict(entry)
    out["verdict"] = HELPS_HURTS.get(entry["verdict"], entry["verdict"])
    for a, b in (("joint_better", "lag_better"), ("joint_rate", "lag_rate"), ("joint_width", "lag_width")):
        if a in entry:
            out[a], out[b] = entry[b], entry[a]
    for key in ("difference", "mean", "advantage"):
        if entry.get(key) is not None:
            out[key] = -entry[key]
    for key in ("interval", "interval_95", "interval_bonferroni"):
        if entry.get(key) is not None and key == "interval":
            out[key] = [-entry[key][1], -entry[key][0]]
    if "ratio" in entry and entry["ratio"] is not None:
        out["ratio"] = (
            0.0 if entry["ratio"] == float("inf") else float("inf") if entry["ratio"] == 0 else 1 / entry["ratio"]
        )
    return out


def exchanged_analysis(analysis: dict) -> dict:
    out = copy.deepcopy(analysis)
    for variants in out["outcomes"].values():
        for variant, cells in variants.items():
            variants[variant] = {cell: _exchanged_entry(entry) for cell, entry in cells.items()}
    out["window"] = {a: {c: _exchanged_entry(e) for c, e in cells.items()} for a, cells in out["window"].items()}
    return out


def exchanged_replication(analysis: dict) -> dict:
    """The replication's analysis with lag and joint exchanged: outcome -> variant -> language -> entry."""
    return {
        outcome: {
            variant: {name: _exchanged_entry(e) for name, e in found.items()} for variant, found in variants.items()
        }
        for outcome, variants in analysis.items()
    }


def exchanged_predictor(predictor: dict) -> dict:
    out = copy.deepcopy(predictor)
    for row in out["cells"]:
        row["joint_only_fails"], row["lag_only_fails"] = row["lag_only_fails"], row["joint_only_fails"]
    return out


def exchanged_study(study: dict) -> dict:
    """The registered lag study with the attention and the output layer exchanged: every paired difference
    negated, the later and earlier counts and verdicts swapped."""
    out = copy.deepcopy(study)
    swap = {"later": "earlier", "earlier": "later"}
    for outcome in out["outcomes"].values():
        for entry in outcome.values():
            entry["mean"], entry["median"] = -entry["mean"], -entry["median"]
            entry["interval"] = [-entry["interval"][1], -entry["interval"][0]]
            entry["later"], entry["earlier"] = entry["earlier"], entry["later"]
            entry["verdict"] = swap.get(entry["verdict"], entry["verdict"])
    return out


def exchanged_grid(grid: dict) -> dict:
    """The grid record with joint's runs and lag's (equal total steps) exchanged; lag's equal-joint-phase runs
    become joint's old runs."""
    out = dict(grid)
    out["cells"] = {}
    for name, cell in grid["cells"].items():
        runs = dict(cell["runs"])
        for key, run in cell["runs"].items():
            if key.startswith("joint rate="):
                rate = key.removeprefix("joint rate=")
                total, joint_phase = (
                    f"lag rate={rate} warm=0.25 accounting=total",
                    f"lag rate={rate} warm=0.25 accounting=joint",
                )
                runs[key], runs[total], runs[joint_phase] = cell["runs"][total], run, run
        out["cells"][name] = {**cell, "runs": runs}
    return out


DATA = ROOT / "book" / "data"
REPLICATION_DESIGN = X.load_replication(DATA / "transformer_replication_design.json", ROOT / "book" / "registration.md")


def _records() -> dict:
    return {
        "study": json.loads((DATA / "lag_study" / "analysis.json").read_text()),
        "analysis": json.loads((DATA / "confirmatory" / "analysis.json").read_text()),
        "predictor": json.loads((DATA / "confirmatory" / "predictor.json").read_text()),
        "replication": json.loads((DATA / "transformer_replication" / "analysis.json").read_text())["outcomes"],
    }


def _all_sentences(records: dict) -> dict[str, str]:
    found = {f"answer_{k}": v for k, v in A.sentences(records["analysis"], records["predictor"]).items()}
    found["plain_lag"] = A.lag_sentence(records["study"])
    found["plain_help"] = A.help_sentence(records["analysis"])
    found["plain_transformer"] = RA.replication_sentence(records["replication"], REPLICATION_DESIGN)
    found["plain_unknown"] = A.unknown_sentence(records["study"], records["analysis"], records["predictor"])
    return found


def test_a_record_with_lag_and_joint_exchanged_changes_every_answer_sentence():
    records = _records()
    exchanged = {
        "study": exchanged_study(records["study"]),
        "analysis": exchanged_analysis(records["analysis"]),
        "predictor": exchanged_predictor(records["predictor"]),
        "replication": exchanged_replication(records["replication"]),
    }
    before, after = _all_sentences(records), _all_sentences(exchanged)
    assert set(before) >= {f"plain_{k}" for k in A.PLAIN_KEYS} | {f"answer_{k}" for k in A.KEYS}
    unchanged = [key for key in before if before[key] == after[key]]
    assert unchanged == [], {key: before[key] for key in unchanged}


def test_a_grid_with_lag_and_joint_exchanged_changes_every_step_size_sentence():
    from lagtheory.experiments.confirmatory import records as R
    from lagtheory.experiments.confirmatory import step_size as Z
    from lagtheory.experiments.confirmatory.registration import stored_hash

    stages = R.committed_stages(DATA / "confirmatory", stored_hash(DATA / "registration.sha256"))
    grid, best = stages["grid"], stages["best"]
    panels = sorted({tuple(name.split("/")[:2]) for name in grid["cells"]})

    def sentences(g: dict) -> dict[str, str]:
        curves = {p: Z.step_size_curves(g, best, *p) for p in panels}
        joint_phase = {p: Z.step_size_curves(g, best, *p, accounting="joint") for p in panels}
        return Z.pattern_sentences(curves, joint_phase, g)

    before, after = sentences(grid), sentences(exchanged_grid(grid))
    assert set(before) == {"failure", "steps", "recognition", "reversal"}
    unchanged = [key for key in before if before[key] == after[key]]
    assert unchanged == [], {key: before[key] for key in unchanged}
