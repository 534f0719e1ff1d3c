"""The registration of the confirmatory study (book/registration.md, lagtheory.experiments.confirmatory.registration).

The page's registered section must still hash to the committed value (book/data/registration.sha256); a
one-character change inside it must change the hash, a change outside it or of line endings must not. The hash
is also recomputed here by a second path (byte offsets of the markers, no line splitting). The registered numbers
on the page must agree with the package's constants, the exploratory evaluation's stored results and a fresh run
of the power calculation, and every record holding a confirmatory seed carries the hash.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import math
from pathlib import Path

import pytest

from lagtheory.experiments.confirmatory import planning as PL
from lagtheory.experiments.confirmatory import registration as G
from lagtheory.experiments.exploratory.records import load_exploratory
from lagtheory.experiments.paths import (
    LAG_DESIGN,
    LAG_RECORDS,
    PREDICTOR_EXPLORATORY,
    REGISTRATION_HASH,
    REGISTRATION_LAG_HASH,
    REGISTRATION_PAGE,
    REGISTRATION_REPLICATION_HASH,
    REGISTRATION_TRANSFORMER_HASH,
)
from lagtheory.experiments.predictor import balance as P
from lagtheory.experiments.statistics import power as W
from lagtheory.reporting import statistic

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / REGISTRATION_PAGE
TEXT = PAGE.read_text(encoding="utf-8")
SECTION = G.registered_section(TEXT)


def test_the_registered_section_hashes_to_the_stored_value():
    assert G.page_hash(PAGE) == G.stored_hash(ROOT / REGISTRATION_HASH)


def test_the_hash_by_a_second_path():
    raw = PAGE.read_bytes().replace(b"\r\n", b"\n")
    begin = raw.index(G.BEGIN.encode() + b"\n") + len(G.BEGIN) + 1
    end = raw.index(b"\n" + G.END.encode()) + 1
    assert hashlib.sha256(raw[begin:end]).hexdigest() == G.stored_hash(ROOT / REGISTRATION_HASH)


def test_the_page_quotes_the_stored_hash_outside_the_section():
    stored = G.stored_hash(ROOT / REGISTRATION_HASH)
    outside = TEXT.split(G.END)[1]
    assert stored in outside and stored not in SECTION


def test_a_one_character_change_inside_is_caught():
    stored = G.stored_hash(ROOT / REGISTRATION_HASH)
    at = TEXT.index("100000..100099")
    planted = TEXT[:at] + "200000..100099" + TEXT[at + len("100000..100099") :]
    assert planted != TEXT and G.registration_hash(planted) != stored
    spaced = TEXT.replace("Each is about lag", "Each is about lag ", 1)
    assert G.registration_hash(spaced) != stored


def test_changes_outside_and_line_endings_are_not():
    stored = G.stored_hash(ROOT / REGISTRATION_HASH)
    outside = TEXT.replace("## Deviations\n", "## Deviations\n\n- 2027-01-01 (UTC), commit abc: an entry.\n")
    assert outside != TEXT and G.registration_hash(outside) == stored
    assert G.registration_hash(TEXT.replace("\n", "\r\n")) == stored
    assert G.registration_hash(TEXT.replace("\n", "\r")) == stored


def test_markers_must_be_whole_lines_once_and_in_order():
    with pytest.raises(ValueError, match="exactly once"):
        G.registered_section(TEXT.replace(G.END, ""))
    with pytest.raises(ValueError, match="exactly once"):
        G.registered_section(TEXT + "\n" + G.BEGIN + "\n")
    with pytest.raises(ValueError, match="exactly once"):
        G.registered_section(TEXT.replace(G.BEGIN, " " + G.BEGIN))
    swapped = TEXT.replace(G.BEGIN, "@@").replace(G.END, G.BEGIN).replace("@@", G.END)
    with pytest.raises(ValueError, match="before"):
        G.registered_section(swapped)
    with pytest.raises(TypeError, match="text"):
        G.registered_section(b"bytes")


def test_records_must_carry_the_hash():
    stored = G.stored_hash(ROOT / REGISTRATION_HASH)
    G.check_record({"registration": stored}, stored)
    with pytest.raises(ValueError, match="registration hash"):
        G.check_record({"registration": "0" * 64}, stored)
    with pytest.raises(ValueError, match="registration hash"):
        G.check_record({}, stored)


def test_every_record_with_a_confirmatory_seed_carries_the_hash():
    # the exploratory records (book/data/*.json) hold no confirmatory seed; every record under book/data that
    # does (the confirmatory stage records, gzipped) carries the registration hash
    stored = G.stored_hash(ROOT / REGISTRATION_HASH)
    for path in sorted((ROOT / "book" / "data").rglob("*.json*")):
        raw = path.read_bytes()
        content = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
        if not isinstance(content, dict):
            continue
        if set(content.get("seeds", [])) & set(G.CONFIRMATORY_SEEDS):
            G.check_record(content, stored)
            assert path.parent.name == "confirmatory", path
        elif path.parent.name == "transformer_study":  # the registered transformer study: its own section's hash
            G.check_record(content, G.stored_hash(ROOT / REGISTRATION_TRANSFORMER_HASH))
        elif path.parent.name == "lag_study" and path.name != "pilot.json":  # the registered lag study: its own
            G.check_record(content, G.stored_hash(ROOT / REGISTRATION_LAG_HASH))
        elif path.parent.name == "transformer_replication":  # its registered replication: its own section's hash
            G.check_record(content, G.stored_hash(ROOT / REGISTRATION_REPLICATION_HASH))
        elif path.parent.name != "confirmatory":
            assert "registration" not in content, path


TRANSFORMER_SECTION = G.registered_section(TEXT, "transformer") if G.TRANSFORMER_BEGIN in TEXT else None
needs_transformer = pytest.mark.skipif(TRANSFORMER_SECTION is None, reason="the transformer section is not written yet")


@needs_transformer
def test_the_transformer_section_hashes_to_its_stored_value_by_two_paths():
    stored = G.stored_hash(ROOT / REGISTRATION_TRANSFORMER_HASH)
    assert G.page_hash(PAGE, "transformer") == stored
    raw = PAGE.read_bytes().replace(b"\r\n", b"\n")
    begin = raw.index(G.TRANSFORMER_BEGIN.encode() + b"\n") + len(G.TRANSFORMER_BEGIN) + 1
    end = raw.index(b"\n" + G.TRANSFORMER_END.encode()) + 1
    assert hashlib.sha256(raw[begin:end]).hexdigest() == stored
    after = TEXT.split(G.TRANSFORMER_END)[1]
    assert stored in after and stored not in TRANSFORMER_SECTION


@needs_transformer
def test_each_section_has_its_own_hash():
    """A character changed inside one section moves that section's hash only; the two sections do not overlap."""
    confirmatory, transformer = (
        G.stored_hash(ROOT / REGISTRATION_HASH),
        G.stored_hash(ROOT / REGISTRATION_TRANSFORMER_HASH),
    )
    assert confirmatory != transformer
    inside = next(line for line in TRANSFORMER_SECTION.splitlines() if "design file SHA-256" in line)
    changed = TEXT.replace(inside, inside + " ", 1)
    assert G.registration_hash(changed, "transformer") != transformer and G.registration_hash(changed) == confirmatory
    changed = TEXT.replace("Each is about lag", "Each is about lag ", 1)
    assert G.registration_hash(changed) != confirmatory and G.registration_hash(changed, "transformer") == transformer
    assert TEXT.index(G.END) < TEXT.index(G.TRANSFORMER_BEGIN)
    with pytest.raises(ValueError, match="section"):
        G.registered_section(TEXT, "predictor")


def test_registered_constants_agree_with_the_page():
    assert G.CONFIRMATORY_SEEDS == tuple(range(100_000, 100_100)) and G.SEEDS_PER_CELL == 100
    assert "**100000..100099**" in SECTION and "100 paired seeds per cell" in SECTION
    assert "2000000..2000031" in SECTION and P.PREDICTOR_SEEDS == tuple(range(2_000_000, 2_000_032))
    assert P.THRESHOLD == 0.0 and "**0**" in SECTION
    assert G.WARM_FRACTIONS == (0.125, 0.25, 0.5) and "1/8, 1/4, 1/2" in SECTION
    assert G.WINDOW_SHARE == 0.9 and "at least 90% of the 100 seeds" in SECTION
    assert G.FAILURE_MARGIN == 0.1 and G.ALPHA == 0.05
    assert len(G.CONFIRMATORY_LEVELS) == 6 and "108 in all (72 on languages)" in SECTION
    assert set(PL.TARGET_LEVELS.values()) == set(G.CONFIRMATORY_LEVELS.values()) - {"main/scale=0.3 ratio=1"}
    assert P.VALIDATION_SCALES == (0.05, 0.5, 2.0, 10.0) and "0.05, 0.5, 2 and 10" in SECTION
    assert P.VALIDATION_RATIOS == (0.5, 2.0, 30.0) and "ratio 0.5, 2 and 30 (216 cells" in SECTION
    assert not set(P.PREDICTOR_SEEDS) & set(G.CONFIRMATORY_SEEDS)


def test_the_registered_tasks_and_grid_are_the_page_s():
    words = " ".join(SECTION.split())
    languages = G.CONFIRMATORY_TASKS["languages"]
    assert f"the six star-free languages ({', '.join(languages)})" in words and len(languages) == 6
    assert G.CONFIRMATORY_TASKS["regression"] == ("regression",) and "single-location regression" in words
    assert G.CONFIRMATORY_TASKS["icl"] == ("linear", "softmax")
    assert "in-context regression with linear and with softmax attention" in words
    assert sum(map(len, G.CONFIRMATORY_TASKS.values())) == 9 and "**Tasks**: the nine" in words
    assert "SGD $10^{-3}, \\dots, 10^{2}$ (11 rates), Adam $10^{-4}, \\dots, 1$ (9 rates)" in words
    assert "half a decade apart" in words
    for optimiser, (first, last, count) in {"sgd": (1e-3, 1e2, 11), "adam": (1e-4, 1.0, 9)}.items():
        grid = G.RATE_GRIDS[optimiser]
        assert len(grid) == count and math.isclose(grid[0], first) and math.isclose(grid[-1], last)
        assert all(math.isclose(b / a, math.sqrt(10)) for a, b in itertools.pairwise(grid))


def test_the_frozen_baseline_and_the_exploratory_figures_are_the_stored_ones():
    stored = json.loads((ROOT / PREDICTOR_EXPLORATORY).read_text())["summary"]
    b0, b1, b2 = stored["baseline_coefficients"]
    assert f"intercept ${statistic(b0)}$, ratio\n  ${statistic(b1)}$, scale ${statistic(b2)}$" in SECTION
    outside = TEXT.split(G.END)[1]
    for name in ("predictor", "baseline", "baseline, leave one task out"):
        low, high = stored["interval"][name]
        assert f"{statistic(stored['auroc'][name])}" in outside
        assert f"[{statistic(low)}, {statistic(high)}]" in outside
    for name in ("predictor - baseline", "predictor - baseline, leave one task out"):
        low, high = stored["interval"][name]
        assert f"[{statistic(low)}, {statistic(high)}]" in outside
    assert f"{statistic(100 * stored['true_positive_rate'])}%" in outside
    assert f"{statistic(100 * stored['false_positive_rate'])}%" in outside
    assert stored["threshold"] == P.THRESHOLD and stored["cells"] == 486 and stored["positives"] == 91


def test_the_power_table_is_recomputed():
    records = load_exploratory(ROOT / "book" / "data")
    for optimiser, label in (("adam", "Adam"), ("sgd", "SGD")):
        effects = PL.planning_effects(records, optimiser)
        found = PL.plan(effects, cells=108, language_cells=72, margin=math.log10(1.1), candidates=(100,))
        rows = {
            "(a) failure": f"only joint fails {statistic(effects['p10'])}, only lag {statistic(effects['p01'])}",
            "(a') recognition": f"only lag recognises {statistic(effects['r10'])}, only joint {statistic(effects['r01'])}",
            "(b) difference": f"both succeed {statistic(effects['both_succeed'])}; mean "
            f"{statistic(effects['median_abs_mean'])}, sd {statistic(effects['median_sd'])}",
            "(b) equivalence": f"true difference 0, sd {statistic(effects['median_sd'])}",
        }
        for (outcome, effect), plan in zip(rows.items(), found.values(), strict=True):
            shown = plan["power"][100]
            power = "< 1e-6" if shown < 1e-6 else statistic(shown)
            assert f"| {label} | {outcome} | {effect} | {plan['seeds']} | {power} |" in SECTION, (label, outcome)
    inside = f"0.97 is counted inside the window with probability\n{statistic(W.window_accuracy(100, 0.97))}"
    assert inside in SECTION
    assert f"one at 0.95 with {statistic(W.window_accuracy(100, 0.95))}" in SECTION
    assert f"left out with probability\n{statistic(W.window_accuracy(100, 0.8))}" in SECTION


LAG_SECTION = G.registered_section(TEXT, "lag")
LAG_STUDY_RECORDS = [ROOT / LAG_RECORDS / name for name in ("study.json", "analysis.json")]


def test_the_lag_section_hashes_to_its_stored_value_by_two_paths():
    stored = G.stored_hash(ROOT / REGISTRATION_LAG_HASH)
    assert G.page_hash(PAGE, "lag") == stored
    raw = PAGE.read_bytes().replace(b"\r\n", b"\n")
    begin = raw.index(G.LAG_BEGIN.encode() + b"\n") + len(G.LAG_BEGIN) + 1
    end = raw.index(b"\n" + G.LAG_END.encode()) + 1
    assert hashlib.sha256(raw[begin:end]).hexdigest() == stored
    assert stored in TEXT.split(G.LAG_END)[1] and stored not in LAG_SECTION
    hashes = {G.stored_hash(ROOT / path) for path in (REGISTRATION_HASH, REGISTRATION_TRANSFORMER_HASH)}
    assert stored not in hashes
    inside = next(line for line in LAG_SECTION.splitlines() if "710000..710080" in line)
    changed = TEXT.replace(inside, inside.replace("710000", "710001"), 1)
    assert G.registration_hash(changed, "lag") != stored
    assert G.registration_hash(changed, "transformer") == G.stored_hash(ROOT / REGISTRATION_TRANSFORMER_HASH)
    assert G.registration_hash(changed) == G.stored_hash(ROOT / REGISTRATION_HASH)


def test_the_lag_section_quotes_the_design_file_and_its_seeds():
    digest = hashlib.sha256((ROOT / LAG_DESIGN).read_bytes()).hexdigest()
    assert f"design file SHA-256: `{digest}`" in LAG_SECTION
    design = json.loads((ROOT / LAG_DESIGN).read_text())
    seeds = design["seeds"]
    assert seeds == list(range(seeds[0], seeds[-1] + 1)) and f"{seeds[0]}..{seeds[-1]}" in LAG_SECTION
    assert f"**{len(seeds)} seeds per language**" in LAG_SECTION
    assert ", ".join(design["languages"]) in " ".join(LAG_SECTION.split())


def test_the_lag_study_s_records_came_after_its_registration():
    from test_transformer_study import registered_before

    present = [str(path.relative_to(ROOT)) for path in LAG_STUDY_RECORDS if path.exists()]
    if not present or not (ROOT / ".git").exists():
        pytest.skip("no lag study record, or not a git checkout")
    assert registered_before(ROOT, str(REGISTRATION_LAG_HASH), present) == []
    assert registered_before(ROOT, str(LAG_DESIGN), present) == []
