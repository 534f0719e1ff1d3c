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


def test_where_names_a_set_of_comparisons():
    f, r = DESIGN["outcomes"]
    assert RA.where({(f, "shared"), (f, "best"), (r, "shared"), (r, "best")}, DESIGN) == "everywhere"
    assert RA.where({(f, "shared"), (r, "shared")}, DESIGN) == "at the shared rate"
    assert RA.where({(r, "best"), (f, "best")}, DESIGN) == "at each schedule's best rate"
    assert RA.where({(r, "shared"), (r, "best")}, DESIGN) == "on recognition"
    assert RA.where({(r, "shared")}, DESIGN) == "on recognition at the shared rate"
    assert RA.where({(r, "best"), (f, "shared")}, DESIGN) == (
        "on failure at the shared rate and on recognition at each schedule's best rate"
    )


def test_clauses_and_the_sentence():
    found = analysis(
        {
            "A": [entry("helps", 0.023), entry("helps", 0.039), entry("helps", 0.021), entry("helps", 0.046)],
            "B": [entry("equivalent"), entry("helps", 0.005), entry("equivalent"), entry("helps", 0.005)],
            "C": [entry("equivalent"), entry("equivalent"), entry("hurts", -0.06, -0.008), entry("equivalent")],
        }
    )
    assert RA.language_clause(found, DESIGN, "A") == "helps on A everywhere (by at least 2.1 points)"
    assert RA.language_clause(found, DESIGN, "B") == (
        "helps on B at each schedule's best rate (equivalent within 5 points at the shared rate)"
    )
    assert RA.language_clause(found, DESIGN, "C", margin_said=True) == (
        "is equivalent on C except on recognition at the shared rate, where it hurts"
    )
    assert RA.language_clause(found, DESIGN, "C") == (
        "is equivalent within 5 points on C except on recognition at the shared rate, where it hurts"
    )
    assert RA.replication_sentence(found, DESIGN) == (
        "On a standard transformer (registered replication, this configuration), lag helps on A everywhere "
        "(by at least 2.1 points), helps on B at each schedule's best rate (equivalent within 5 points at the "
        "shared rate), and is equivalent on C except on recognition at the shared rate, where it hurts."
    )
    mixed = analysis(
        {
            "A": [entry("undetermined")] * 4,
            "B": [entry("hurts", -0.2, -0.1)] * 4,
            "C": [entry("undetermined"), entry("equivalent"), entry("helps", 0.01), entry("hurts", -0.1, -0.05)],
        }
    )
    assert RA.language_clause(mixed, DESIGN, "A") == "is undetermined on A everywhere"
    assert RA.language_clause(mixed, DESIGN, "B") == "hurts on B everywhere (by at least 10.0 points)"
    assert RA.language_clause(mixed, DESIGN, "C") == (
        "helps on C on recognition at the shared rate (hurts on recognition at each schedule's best rate; "
        "equivalent within 5 points on failure at each schedule's best rate; undetermined on failure at the "
        "shared rate)"
    )
    assert RA.language_clause(analysis({n: [entry("helps", -0.01)] * 4 for n in "ABC"}), DESIGN, "A") == (
        "helps on A everywhere"
    )


def test_the_tables_have_a_cell_per_comparison():
    found = analysis({name: [entry("equivalent")] * 4 for name in "ABC"})
    table = RA.answer_table(found, DESIGN)
    assert len(table) == 2 + 4 and all(line.count("|") == 5 for line in table)
    assert table[2] == "| failure, shared rate | " + " | ".join(["**equivalent within 5 points**"] * 3) + " |"
    for outcome in DESIGN["outcomes"]:
        detail = RA.detail_table(found, DESIGN, outcome)
        assert len(detail) == 2 + 6 and all(line.count("|") == 7 for line in detail)
        assert detail[2].startswith("| A, shared rate | 3 / 2 | 0.05 [-1.00, 1.00] | p = 0.5; p = 0.5 | 0.5 |")
