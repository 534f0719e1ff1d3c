"""The replication's answer in words (lagtheory.experiments.confirmatory.replication_answer), on constructed
analyses whose phrases are written out here by hand."""

from __future__ import annotations

import pytest

from lagtheory.experiments.confirmatory import replication_answer as RA

DESIGN = {
    "compared": ["A", "B", "C"],
    "outcomes": ["failure", "recognition at 16 N0"],
    "variants": ["shared", "best"],
    "effect": 0.05,
}


def entry(verdict, low=-0.01, high=0.01, power=0.5, b=3, c=2):
    return {
        "verdict": verdict,
        "interval": [low, high],
        "power_observed": power,
        "lag_better": b,
        "joint_better": c,
        "advantage": (b - c) / 1999,
        "p_adjusted": 0.5,
        "p_equivalence_adjusted": 0.5,
    }


def analysis(cells):
    """cells: language -> four entries in the order failure/shared, failure/best, recognition/shared, .../best."""
    found = {o: {v: {} for v in DESIGN["variants"]} for o in DESIGN["outcomes"]}
    for language, entries in cells.items():
        for (o, v), e in zip([(o, v) for o in DESIGN["outcomes"] for v in DESIGN["variants"]], entries, strict=True):
            found[o][v][language] = e
    return found


@pytest.mark.parametrize(
    ("e", "phrase"),
    [
        (entry("helps", 0.0234, 0.06), "helps by at least 2.3 points"),
        (entry("helps", -0.001, 0.06), "helps (95% interval from -0.1 points)"),
        (entry("hurts", -0.08, -0.0251), "hurts by at least 2.5 points"),
        (entry("equivalent"), "equivalent within 5 points"),
        (entry("undetermined", power=0.4321), "undetermined (power 0.43)"),
    ],
)
def test_each_verdict_states_the_bound_it_supports(e, phrase):
    assert RA.comparison_phrase(e, 0.05) == phrase


def test_language_summaries_and_the_sentence():
    found = analysis(
        {
            "A": [entry("helps", 0.021), entry("helps", 0.034), entry("equivalent"), entry("equivalent")],
            "B": [entry("equivalent")] * 4,
            "C": [entry("undetermined"), entry("equivalent"), entry("hurts", -0.1, -0.012), entry("equivalent")],
        }
    )
    assert RA.language_summary(found, DESIGN, "A") == (
        "lag helps on failure by at least 3.4 points, equivalent within 5 points in the others"
    )
    assert RA.language_summary(found, DESIGN, "B") == "lag is equivalent within 5 points"
    assert RA.language_summary(found, DESIGN, "C") == (
        "lag hurts on recognition by at least 1.2 points, undetermined in 1 of 4 comparisons"
    )
    both = analysis(
        {
            "A": [entry("helps", 0.021), entry("equivalent"), entry("helps", 0.05), entry("equivalent")],
            "B": [entry("undetermined")] * 4,
            "C": [entry("undetermined"), entry("equivalent"), entry("equivalent"), entry("equivalent")],
        }
    )
    assert RA.language_summary(both, DESIGN, "A") == (
        "lag helps on failure and recognition by at least 5.0 points of recognition, equivalent within 5 points "
        "in the others"
    )
    assert RA.language_summary(both, DESIGN, "B") == "lag is undetermined"
    assert RA.language_summary(both, DESIGN, "C") == (
        "lag is equivalent within 5 points, undetermined in 1 of 4 comparisons"
    )
    same = analysis({name: [entry("equivalent")] * 4 for name in "ABC"})
    assert RA.replication_sentence(same, DESIGN) == (
        "On a standard transformer (a registered replication, this configuration), against joint training: "
        "on A and B and C lag is equivalent within 5 points."
    )
    assert RA.replication_sentence(found, DESIGN).count("; ") == 2


def test_the_tables_have_a_cell_per_comparison():
    found = analysis({name: [entry("equivalent")] * 4 for name in "ABC"})
    table = RA.answer_table(found, DESIGN)
    assert len(table) == 2 + 3 and all(line.count("|") == 6 for line in table)
    assert table[2] == "| A | " + " | ".join(["**equivalent within 5 points**"] * 4) + " |"
    detail = RA.detail_table(found, DESIGN)
    assert len(detail) == 2 + 12 and all(line.count("|") == 10 for line in detail)
