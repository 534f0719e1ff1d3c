"""H5 of the confirmatory study (lagtheory.experiments.confirmatory.predictor) on synthetic validation records
whose labels, AUROCs and operating points are derived by hand."""

import json
import math

import pytest
import scipy.stats

from lagtheory.experiments.confirmatory import predictor as CP
from lagtheory.experiments.confirmatory.design import GRID_WARM_FRACTION, Run
from lagtheory.experiments.confirmatory.registration import stored_hash
from lagtheory.experiments.paths import PREDICTOR_PREDICTIONS

SEEDS = 20


def failures(joint_only: int, lag_only: int) -> tuple[list[bool], list[bool]]:
    """Per-seed failure flags of joint and lag with the given discordant counts (the other seeds: neither)."""
    joint = [True] * joint_only + [False] * lag_only
    lag = [False] * joint_only + [True] * lag_only
    rest = SEEDS - joint_only - lag_only
    return joint + [False] * rest, lag + [False] * rest


def record_and_predictions(cells):
    """cells: (task, optimiser, scale, ratio, joint_only, lag_only, balance, baseline log-odds)."""
    record = {"registration": stored_hash(), "trial": None, "cells": {}}
    predictions = []
    for task, optimiser, scale, ratio, joint_only, lag_only, balance, baseline in cells:
        rate = 0.1
        joint, lag = failures(joint_only, lag_only)
        name = f"{task}/{optimiser}/validation/scale={scale:g} ratio={ratio:g}"
        record["cells"][name] = {
            "configuration": {"task": task, "optimiser": optimiser, "readout_scale": scale, "ratio": ratio},
            "calibrated_rate": rate,
            "runs": {
                Run("joint", rate, None, "both").key: {"values": {"failed": joint}},
                Run("lag", rate, GRID_WARM_FRACTION, "total").key: {"values": {"failed": lag}},
            },
        }
        predictions.append(
            {
                "task": task,
                "optimiser": optimiser,
                "readout_scale": scale,
                "ratio": ratio,
                "balance": balance,
                "predicts_lag_helps": balance >= 0,
                "baseline_log_odds": baseline,
            }
        )
    return record, predictions


# Six cells in three task-optimiser clusters. Labels by hand: lag helps where only joint fails on 10 of 20 seeds
# and lag on none (two-sided exact binomial p = 2/2**10 < 0.05), not with 3 against 0 (p = 0.25) nor with
# 0 against 10 (lag fails more).
CELLS = [
    ("A", "sgd", 0.5, 2.0, 10, 0, 1.0, -1.0),  # helps
    ("A", "sgd", 2.0, 2.0, 3, 0, -0.5, 2.0),  # not: p = 0.25
    ("B", "adam", 0.5, 2.0, 10, 0, 0.5, 0.0),  # helps
    ("B", "adam", 2.0, 30.0, 0, 10, 2.0, 1.0),  # not: lag fails more
    ("C", "sgd", 0.5, 0.5, 0, 0, -2.0, -3.0),  # not: no discordant pair
    ("C", "sgd", 10.0, 0.5, 12, 1, -1.0, 0.5),  # helps: p = 2 * 14 / 2**13
]


def test_labels_auroc_and_rates_by_hand():
    record, predictions = record_and_predictions(CELLS)
    rows = CP.validation_rows(record, predictions)
    assert [row["lag_helps"] for row in rows] == [True, False, True, False, False, True]
    assert rows[1]["p_value"] == pytest.approx(0.25, rel=1e-12)
    assert rows[5]["p_value"] == pytest.approx(2 * (1 + 13) / 2**13, rel=1e-12)
    out = CP.predictor_outcome(rows, resamples=200)
    # balance: positives 1.0, 0.5, -1.0 against negatives -0.5, 2.0, -2.0: pairs won 2 + 2 + 1 = 5 of 9
    assert out["auroc"]["predictor"] == pytest.approx(5 / 9, rel=1e-15)
    # baseline: positives -1.0, 0.0, 0.5 against 2.0, 1.0, -3.0: pairs won 1 + 1 + 1 = 3 of 9
    assert out["auroc"]["baseline"] == pytest.approx(3 / 9, rel=1e-15)
    labels = [row["lag_helps"] for row in rows]
    scores = [row["balance"] for row in rows]
    u = scipy.stats.mannwhitneyu(
        [s for s, y in zip(scores, labels, strict=True) if y], [s for s, y in zip(scores, labels, strict=True) if not y]
    ).statistic
    assert out["auroc"]["predictor"] == pytest.approx(u / 9, rel=1e-15)
    # prediction balance >= 0: true positives 2 of 3 (1.0, 0.5), false positives 1 of 3 (2.0)
    assert out["true_positive_rate"] == pytest.approx(2 / 3) and out["false_positive_rate"] == pytest.approx(1 / 3)
    assert out["cells"] == 6 and out["positives"] == 3 and out["estimable"]
    low, high = out["interval"]["predictor - baseline"]
    assert (
        low <= high
        and out["beats_baseline"] == (low > 0)
        and out["validated"] == (out["interval"]["predictor"][0] > 0.5)
    )


def test_perfect_predictor_is_validated_and_beats_a_reversed_baseline():
    # every cluster holds one positive and one negative; balance orders them right, the baseline wrong
    cells = []
    for k, task in enumerate("ABCDEFGH"):
        cells.append((task, "sgd", 0.5, 2.0, 10, 0, 1.0 + k, -1.0 - k))
        cells.append((task, "sgd", 2.0, 2.0, 0, 0, -1.0 - k, 1.0 + k))
    record, predictions = record_and_predictions(cells)
    out = CP.predictor_outcome(CP.validation_rows(record, predictions), resamples=200)
    assert out["auroc"] == {"predictor": 1.0, "baseline": 0.0}
    assert out["interval"]["predictor"] == [1.0, 1.0] and out["interval"]["predictor - baseline"] == [1.0, 1.0]
    assert out["validated"] and out["beats_baseline"]
    assert (out["true_positive_rate"], out["false_positive_rate"]) == (1.0, 0.0)


def test_one_class_is_not_estimable_and_bad_records_are_refused():
    record, predictions = record_and_predictions([c for c in CELLS if c[4] < 10])
    out = CP.predictor_outcome(CP.validation_rows(record, predictions))
    assert out == {"cells": 3, "positives": 0, "threshold": 0.0, "estimable": False}
    with pytest.raises(ValueError, match="no committed prediction"):
        CP.validation_rows(record, predictions[1:])
    with pytest.raises(ValueError, match="trial"):
        CP.validation_rows({**record, "trial": {"seeds": 5}}, predictions)
    with pytest.raises(ValueError, match="registration hash"):
        CP.validation_rows({**record, "registration": "0" * 64}, predictions)


def test_the_committed_predictions_cover_the_registered_validation_cells():
    committed = json.loads(PREDICTOR_PREDICTIONS.read_text())["cells"]
    keys = {CP.prediction_key(p["task"], p["optimiser"], p["readout_scale"], p["ratio"]) for p in committed}
    assert len(keys) == len(committed) == 216
    assert all(math.isfinite(float(p["balance"])) for p in committed)
