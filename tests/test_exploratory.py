"""Tests of the exploratory re-analysis (lagtheory.experiments.exploratory.reanalysis, outcomes).

A hand-made record checks the definitions (a failure at or above the cap, the cap read off the flagged runs,
McNemar's counts, the differences on the seeds where both succeed). On the stored records, the numbers of the
independent re-analysis behind the registration, computed independently by its author from the same records, must come out again.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from lagtheory.experiments.exploratory import outcomes as O
from lagtheory.experiments.exploratory import reanalysis as X
from lagtheory.experiments.exploratory import records as R
from lagtheory.experiments.exploratory.records import load_exploratory
from lagtheory.experiments.statistics import paired

ROOT = Path(__file__).resolve().parents[1]
CAP = math.log10(math.log(2.0))


def _record():
    zero = math.log(2.0)
    joint = [0.1, zero, 2.0, float("nan"), 0.3, zero * (1 - 1e-9)]  # fails: at the cap, above it, diverged
    lag = [0.2, 0.05, zero, 0.4, 0.3, 0.6]
    values = {}
    for schedule, losses in (("joint", joint), ("lag", lag)):
        capped = [math.log10(min(x, zero)) if math.isfinite(x) else CAP for x in losses]
        values.setdefault("test_loss", {})[schedule] = [x if math.isfinite(x) else None for x in losses]
        values.setdefault("log10_test_loss", {})[schedule] = capped
    cell = {"configuration": {"task": "T", "optimiser": "sgd", "sweep": "main", "schedules": ["joint", "lag"]}}
    return {
        "primary": "log10_test_loss",
        "seeds": list(range(6)),
        "cells": {"T/sgd/main/x": {**cell, "values": values}},
    }


def test_failure_definitions_on_a_hand_made_record():
    record = _record()
    assert O.failure_cap(record, "T") == CAP
    name = "T/sgd/main/x"
    assert O.failures(record, name, "joint").tolist() == [False, True, True, True, False, False]
    assert O.failures(record, name, "lag").tolist() == [False, False, True, False, False, False]
    joint_only, lag_only, p = O.failure_test(record, name)
    assert (joint_only, lag_only) == (2, 0) and p == pytest.approx(0.5)  # binomtest(2, 2, 1/2)
    d = O.conditional_differences(record, name)
    expected = [math.log10(0.2) - math.log10(0.1), 0.0, math.log10(0.6) - math.log10(math.log(2.0) * (1 - 1e-9))]
    assert np.allclose(d, expected, rtol=0, atol=1e-15)


def test_a_record_without_one_cap_is_refused():
    record = _record()
    record["cells"]["T/sgd/main/x"]["values"]["log10_test_loss"]["lag"][2] = CAP - 0.1
    record["cells"]["T/sgd/main/x"]["values"]["test_loss"]["lag"][2] = 10.0
    with pytest.raises(ValueError, match="one cap"):
        O.failure_cap(record, "T")


@pytest.fixture(scope="module")
def records():
    return load_exploratory(ROOT / "book" / "data")


@pytest.fixture
def without_intervals(monkeypatch):
    """Comparisons without their bootstrap intervals (NaN), for the tests that count verdicts: a verdict is read
    off the adjusted p-values and the mean, never the interval, and the ~2,000 BCa intervals of these counts
    were half their time. Were a verdict ever to read the interval, NaN would change the counts. The regime
    maps' cache of comparisons is emptied before and after, so that no comparison without its interval
    outlives the test."""
    monkeypatch.setattr(paired, "_bootstrap_rows", lambda d, *_: (np.full(len(d), math.nan), np.full(len(d), math.nan)))
    R._compare_cells.cache_clear()
    yield
    R._compare_cells.cache_clear()


def test_the_issue_failure_counts_come_out_again(records):
    found = O.failure_summary(records)
    assert (found["joint"], found["lag"], found["runs"]) == (1760, 541, 13_500)
    assert (found["fewer"], found["more"]) == (51, 0)
    assert round(100 * found["adam_language_joint_rate"], 1) == 14.6
    assert round(100 * found["adam_language_lag_rate"], 1) == 1.0


def test_the_issue_verdict_counts_come_out_again(records, without_intervals):
    assert X.language_metric_counts(records["languages"], "log10_test_loss") == (75, 76)
    assert X.language_metric_counts(records["languages"], "recognised") == (49, 20)
    assert X.language_metric_counts(records["languages"], "accuracy_above_training") == (57, 0)
    assert X.log_loss_counts(records, "t") == (86, 82)
    assert X.log_loss_counts(records, "wilcoxon") == (86, 109)
    assert X.log_loss_counts(records, "sign") == (75, 110)


def test_the_issue_tuning_and_mover_numbers_come_out_again(records, without_intervals):
    sweep = X.rate_sweep_summary(records)
    assert sweep["one"] == 9 and sweep["own_rate"]["helps"] == 4
    accounting = X.accounting_summary(records)
    assert accounting["FIRST/sgd/accounting/joint"] == "equivalent"
    assert accounting["FIRST_LEARNED/sgd/accounting/joint"] == "equivalent"
    movers = X.mover_summary(records)
    assert list(movers["attention_first"].values()) == [1, 3, 48, 81, 89]
    assert round(movers["spearman"], 2) == -0.14 and round(movers["spearman_p"], 2) == 0.18
    assert movers["by_scale"][3.0] == [36, 4] and movers["by_scale"][0.01] == [4, 27]
