"""Tests of the analysis of a study record (lagtheory.experiments.exploratory.regimes) on a record built by hand, whose
per-seed values are chosen so that every cell's verdict is known in advance: lag's loss lower than joint's by
1 (log10) where the ratio is above 1, higher by 1 where it is below 1, and equal up to noise far inside the
margin at ratio 1."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lagtheory.experiments.exploratory import regimes as G
from lagtheory.experiments.exploratory.design import RATIOS, READOUT_SCALES, centre_name, main_level
from lagtheory.experiments.exploratory.records import reproduction_sample
from lagtheory.training import OPTIMISERS

SEEDS = list(range(30))
BUDGETS = [0.25, 0.5, 2.0, 4.0]


def shift(ratio: float) -> float:
    """lag - joint in the hand-built record, before noise."""
    return -1.0 if ratio > 1 else (1.0 if ratio < 1 else 0.0)


def hand_record(higher_is_better: bool = False) -> dict:
    rng = np.random.default_rng(0)
    cells = {}
    for optimiser in OPTIMISERS:
        for scale in READOUT_SCALES:
            for ratio in RATIOS:
                joint = rng.normal(-2.0, 0.5, len(SEEDS))
                lag = joint + shift(ratio) + rng.normal(0.0, 1e-3, len(SEEDS))
                three = joint + 2.0 + rng.normal(0.0, 0.1, len(SEEDS))
                if higher_is_better:
                    lag, three = 2 * joint - lag, 2 * joint - three
                cells[f"T/{optimiser}/main/{main_level(scale, ratio)}"] = {
                    "configuration": {
                        "task": "T",
                        "optimiser": optimiser,
                        "sweep": "main",
                        "level": main_level(scale, ratio),
                        "schedules": ["joint", "lag", "three-phase"],
                    },
                    "values": {"m": {"joint": joint.tolist(), "lag": lag.tolist(), "three-phase": three.tolist()}},
                }
        for factor in BUDGETS:
            joint = rng.normal(-2.0, 0.5, len(SEEDS))
            lag = joint - factor + rng.normal(0.0, 1e-3, len(SEEDS))
            if higher_is_better:
                lag = 2 * joint - lag
            cells[f"T/{optimiser}/budget/T*{factor:g}"] = {
                "configuration": {
                    "task": "T",
                    "optimiser": optimiser,
                    "sweep": "budget",
                    "level": f"T*{factor:g}",
                    "schedules": ["joint", "lag"],
                },
                "values": {"m": {"joint": joint.tolist(), "lag": lag.tolist()}},
            }
    return {
        "primary": "m",
        "higher_is_better": higher_is_better,
        "binary": False,
        "margin": float(np.log10(1.1)),
        "seeds": SEEDS,
        "design": {"readout_scales": list(READOUT_SCALES), "ratios": list(RATIOS), "budgets": BUDGETS},
        "cells": cells,
    }


@pytest.mark.parametrize("higher_is_better", [False, True])
def test_grid_effects_and_verdicts_follow_the_built_differences(higher_is_better):
    record = hand_record(higher_is_better)
    for optimiser in OPTIMISERS:
        family = G.regime_map(record, "T", optimiser, "lag")
        assert len(family) == len(READOUT_SCALES) * len(RATIOS) + len(BUDGETS)
        arrays = G.grid(record, family, "T", optimiser)
        for j, ratio in enumerate(RATIOS):
            # the effect is schedule - joint in the metric's own units, whichever way the metric points
            expected = shift(ratio) if not higher_is_better else -shift(ratio)
            assert np.allclose(arrays["effect"][:, j], expected, atol=2e-3)
            assert np.all(arrays["low"][:, j] <= arrays["effect"][:, j])
            assert np.all(arrays["effect"][:, j] <= arrays["high"][:, j])
            verdict = {-1.0: "helps", 1.0: "hurts", 0.0: "equivalent"}[shift(ratio)]
            assert list(arrays["verdict"][:, j]) == [verdict] * len(READOUT_SCALES)
        counts = G.verdict_counts([c for name, c in family.items() if "/main/" in name])
        assert counts == {"helps": 10, "hurts": 10, "equivalent": 5, "undetermined": 0}
        budget = G.regime_summary(record, family, "budget")
        assert sorted(budget["helps"]) == sorted(G.level_label(f"T*{f:g}") for f in BUDGETS)  # as printed: T/4 .. 4T


def test_primary_family_is_the_centre_of_each_optimiser():
    record = hand_record()
    family = G.primary(record, "three-phase")
    assert [G.cell_of(c) for c in family] == [centre_name("T", o) for o in OPTIMISERS]
    assert all(c.verdict == "hurts" for c in family)
    value, low, high = G.effect(record, family[0])
    assert 1.9 < low <= value <= high < 2.1
    assert "hurts" in G.describe(record, family[0])


def test_reproduction_sample_is_seeded_and_within_the_record():
    record = hand_record()
    first = reproduction_sample(record, 5, cells=3, schedules=2, seeds=3)
    assert first == reproduction_sample(record, 5, cells=3, schedules=2, seeds=3)
    assert len({name for name, _, _ in first}) == 3
    for name, schedules, seeds in first:
        assert set(schedules) <= set(record["cells"][name]["configuration"]["schedules"])
        assert len(schedules) == 2 and len(set(seeds)) == 3 and set(seeds) <= set(SEEDS)


def test_record_summary_lines_by_hand():
    """The empirical chapters' record summary: calibration table (centre rate, range over the main grid,
    grid rates that diverged in some cell), then seeds, margin and rule wrapped at 90, cells and command."""
    record = {
        "calibration": {
            "FIRST": {
                "sgd": {
                    "base_rates": {main_level(0.3, 1.0): 0.316, main_level(1.0, 3.0): 3.16},
                    "diverged_runs": [[0, 0], [1, 0], [0, 2]],
                    "grid": [0.1, 0.316, 1.0],
                }
            }
        },
        "seeds": [0, 1, 2],
        "margin": 0.1,
        "margin_rule": "a rule " * 20,
        "cells": {"a": {}, "b": {}},
        "command": "python -m x",
    }
    lines = G.record_summary(record)
    assert lines[1] == "FIRST             sgd    0.316  0.316 to 3.16   2 of 3"
    assert lines[0].startswith("task") and "grid rates that diverged" in lines[0]
    assert lines[2] == "3 paired seeds; margin 0.1000: " + "a rule " * 8 + "a"
    assert lines[3] == ("rule " + "a rule " * 11).strip()
    assert lines[4:] == ["2 cells; written by: python -m x"]


def test_every_budget_and_base_rate_level_prints_without_a_star():
    """The design's level names (T*2, ratio=1 base*0.316) print as 2T and ratio 1, base/3.16: a T* next to
    the three-phase chapter's step count T^star read as the same symbol."""
    assert G.level_label("T*0.25") == "T/4" and G.level_label("T*2") == "2T"
    assert G.level_label("ratio=10 base*0.316") == "ratio 10, base/3.16"
    assert G.level_label("ratio=3 base*3.16") == "ratio 3, 3.16 base"
    assert G.level_label("preset") == "preset" and G.level_label("joint") == "joint"
    record = json.loads((Path(__file__).resolve().parents[1] / "book" / "data" / "summary_languages.json").read_text())
    levels = {cell["configuration"]["level"] for cell in record["cells"].values()}
    assert {"T*0.25", "T*4", "ratio=0.1 base*0.316"} <= levels  # the study's own names
    assert all("*" not in G.level_label(level) for level in levels)
