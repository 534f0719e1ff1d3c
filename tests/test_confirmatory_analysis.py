"""The confirmatory analysis (lagtheory.experiments.confirmatory.analysis) against p-values by hand and scipy
called directly, and on synthetic grid and best records whose verdicts are derived by hand."""

import math

import numpy as np
import pytest
import scipy.stats

from lagtheory.experiments.confirmatory import analysis as CA
from lagtheory.experiments.confirmatory.registration import stored_hash
from lagtheory.experiments.exploratory.records import load_exploratory


def test_binary_outcome_by_hand():
    # 12 seeds: only joint fails on 8, only lag on 1, both on 1, neither on 2
    joint = [1] * 8 + [0] + [1] + [0] * 2
    lag = [0] * 8 + [1] + [1] + [0] * 2
    out = CA.binary_outcome(joint, lag, lag_better_when=False)
    assert (out["lag_better"], out["joint_better"]) == (8, 1)
    assert out["p"] == pytest.approx(2 * (9 + 1) / 2**9, rel=1e-12)  # two-sided exact binomial, 9 discordant
    # equivalence: P(X <= 9) for X ~ Binomial(12, 0.1)
    by_hand = sum(math.comb(12, k) * 0.1**k * 0.9 ** (12 - k) for k in range(10))
    assert out["p_equivalence"] == pytest.approx(by_hand, rel=1e-12)
    assert out["difference"] == pytest.approx(2 / 12 - 9 / 12)
    # recognition: lag is better where only lag recognises
    assert CA.binary_outcome(joint, lag, lag_better_when=True)["lag_better"] == 1


def test_conditional_outcome_against_scipy():
    rng = np.random.default_rng(5)
    joint = rng.normal(-2, 0.3, 30)
    lag = joint + rng.normal(0.05, 0.1, 30)
    joint_failed = np.zeros(30, bool)
    lag_failed = np.zeros(30, bool)
    lag_failed[:4] = True  # these seeds do not enter
    out = CA.conditional_outcome(list(joint), list(lag), joint_failed, lag_failed)
    d = (lag - joint)[4:]
    assert out["n"] == 26 and out["mean"] == pytest.approx(d.mean(), rel=1e-12)
    assert out["p"] == pytest.approx(scipy.stats.ttest_1samp(d, 0).pvalue, rel=1e-12)
    margin = math.log10(1.1)
    tost = max(
        scipy.stats.ttest_1samp(d, -margin, alternative="greater").pvalue,
        scipy.stats.ttest_1samp(d, margin, alternative="less").pvalue,
    )
    assert out["p_equivalence"] == pytest.approx(tost, rel=1e-12)
    assert out["interval"][0] < d.mean() < out["interval"][1]
    few = np.ones(30, bool)
    few[:9] = False
    assert CA.conditional_outcome(list(joint), list(lag), few, np.zeros(30, bool)) == {"estimable": False, "n": 9}


def test_ten_seeds_where_both_succeed_are_estimable():
    # the registration: (b) needs at least 10 seeds where neither run fails; here exactly 10 of 12 (lag fails on
    # seeds 0 and 1), with differences lag - joint of 0.1 on five seeds and 0.3 on five: mean 0.2
    joint = [-1.0] * 12
    lag = [None, None] + [-0.9] * 5 + [-0.7] * 5
    lag_failed = [True, True] + [False] * 10
    out = CA.conditional_outcome(joint, lag, [False] * 12, lag_failed)
    assert out["estimable"] and out["n"] == 10
    assert out["mean"] == pytest.approx(0.2, rel=1e-12)
    joint_failed = [False, False, True] + [False] * 9  # one more seed out: 9
    assert CA.conditional_outcome(joint, lag, joint_failed, lag_failed) == {"estimable": False, "n": 9}


def test_equivalence_is_decided_after_holm():
    # two cells, neither difference rejected; equivalence p 0.03 and 0.04 before adjustment, Holm: 2 x 0.03 = 0.06,
    # then max(0.06, 1 x 0.04) = 0.06: neither is below 0.05, so both stay undetermined
    outcomes = {
        "a": {"p": 0.8, "p_equivalence": 0.03, "lag_better": 1, "joint_better": 2},
        "b": {"p": 0.9, "p_equivalence": 0.04, "lag_better": 2, "joint_better": 1},
    }
    v = CA.family_verdicts(outcomes)
    assert [v[c]["p_equivalence_adjusted"] for c in "ab"] == pytest.approx([0.06, 0.06], rel=1e-12)
    assert [v[c]["verdict"] for c in "ab"] == ["undetermined", "undetermined"]


def test_window_by_hand():
    rates = [0.01, 0.1, 1.0]
    # 10 seeds; joint succeeds at 0.01 on all and at 0.1 on 9 of 10 (exactly 90%: inside); lag at 0.1 and 1
    joint = np.ones((3, 10), bool)
    joint[0] = False
    joint[1, 1:] = False
    lag = np.ones((3, 10), bool)
    lag[1:] = False
    out = CA.window_outcome(joint, lag, rates, cells=108, resamples=2000)
    assert out["joint_window"] == [0.01, 0.1] and out["lag_window"] == [0.1, 1.0]
    assert (out["joint_width"], out["lag_width"], out["ratio"]) == (1.0, 1.0, 1.0)
    # lag's window never changes; joint's loses 0.1 in a resample with the failing seed twice or more, and
    # gains nothing: every resampled ratio is 1 or 2
    assert set(out["interval_bonferroni"]) <= {1.0, 2.0} and CA.window_verdict(out) == "undetermined"
    only_lag = CA.window_outcome(np.ones((3, 10), bool), lag, rates, cells=108, resamples=1000)
    assert only_lag["ratio"] == math.inf and only_lag["interval_bonferroni"] == [math.inf, math.inf]
    assert CA.window_verdict(only_lag) == "helps"
    neither = CA.window_outcome(np.ones((3, 10), bool), np.ones((3, 10), bool), rates, cells=108, resamples=1000)
    assert neither["ratio"] is None and CA.window_verdict(neither) == "neither"


def test_holm_families_and_verdicts_by_hand():
    outcomes = {
        "a": {"p": 0.01, "p_equivalence": 0.9, "lag_better": 5, "joint_better": 0},
        "b": {"p": 0.02, "p_equivalence": 0.9, "lag_better": 0, "joint_better": 5},
        "c": {"p": 0.5, "p_equivalence": 0.01, "lag_better": 1, "joint_better": 1},
        "d": {"estimable": False, "n": 3},
    }
    v = CA.family_verdicts(outcomes)
    # Holm over the three tested cells: 3 * 0.01, max(0.03, 2 * 0.02), max(0.04, 0.5)
    assert [v[c]["p_adjusted"] for c in "abc"] == pytest.approx([0.03, 0.04, 0.5])
    assert [v[c]["verdict"] for c in "abcd"] == ["helps", "hurts", "equivalent", "not estimable"]
    # (b): lag is favoured by a lower loss, a negative mean difference lag - joint
    conditional = {
        "lower": {"estimable": True, "mean": -0.1, "p": 0.001, "p_equivalence": 0.5},
        "higher": {"estimable": True, "mean": 0.1, "p": 0.001, "p_equivalence": 0.5},
    }
    assert {c: v["verdict"] for c, v in CA.family_verdicts(conditional).items()} == {
        "lower": "helps",
        "higher": "hurts",
    }
    assert CA.robust_verdict(["helps"] * 4) == "helps robustly"
    assert CA.robust_verdict(["helps"] * 3 + ["undetermined"]) == "depends on tuning or accounting"


def runs_of(values_of_rate, rates):
    """Grid runs: values_of_rate(schedule, rate, accounting) -> per-seed values."""
    runs = {}
    for rate in rates:
        runs[f"joint rate={rate:g}"] = {
            "schedule": "joint",
            "base_rate": rate,
            "warm_fraction": None,
            "accounting": "both",
            "values": values_of_rate("joint", rate, "both"),
        }
        for accounting in ("total", "joint"):
            runs[f"lag rate={rate:g} warm=0.25 accounting={accounting}"] = {
                "schedule": "lag",
                "base_rate": rate,
                "warm_fraction": 0.25,
                "accounting": accounting,
                "values": values_of_rate("lag", rate, accounting),
            }
    return runs


N = 12


def language(failed):
    return {
        "failed": [failed] * N,
        "recognised": [not failed] * N,
        "log10_test_loss": [0.5 if failed else -1.0] * N,
    }


def synthetic_records():
    rates = [0.1, 1.0]
    same = {"failed": [False] * N, "log10_test_loss": [-2.0] * N}
    grid = {
        "registration": stored_hash(),
        "stage": "grid",
        "trial": None,
        "cells": {
            "A": {
                "configuration": {"optimiser": "adam"},
                "shared_rate": 0.1,
                "runs": runs_of(lambda s, r, a: language(s == "joint"), rates),
            },
            "B": {
                "configuration": {"optimiser": "sgd"},
                "shared_rate": 1.0,
                "runs": runs_of(lambda s, r, a: same, rates),
            },
        },
    }
    choice = {"schedule": "joint", "base_rate": 1.0, "warm_fraction": None, "accounting": "both"}
    best = {
        "registration": stored_hash(),
        "stage": "best",
        "trial": None,
        "choices": {
            "A": {
                "joint total": choice,
                "joint joint": choice,
                "lag total": {"schedule": "lag", "base_rate": 1.0, "warm_fraction": 0.125, "accounting": "total"},
                "lag joint": {"schedule": "lag", "base_rate": 0.1, "warm_fraction": 0.25, "accounting": "joint"},
            },
            "B": {
                "joint total": choice,
                "joint joint": choice,
                "lag total": {"schedule": "lag", "base_rate": 1.0, "warm_fraction": 0.25, "accounting": "total"},
                "lag joint": {"schedule": "lag", "base_rate": 1.0, "warm_fraction": 0.25, "accounting": "joint"},
            },
        },
        "cells": {
            "A": {"runs": {"lag rate=1 warm=0.125 accounting=total": {"values": language(True)}}},
            "B": {"runs": {}},
        },
    }
    return grid, best


def test_analyse_synthetic_records_verdicts_by_hand():
    grid, best = synthetic_records()
    power = {
        "adam": {"failure": 0.9, "recognition": 0.99, "conditional": 0.8, "equivalence_seeds": 2000},
        "sgd": {"failure": 0.7, "recognition": 0.8, "conditional": 0.3, "equivalence_seeds": 700},
    }
    result = CA.analyse(grid, best, resamples=1000, power=power)
    failure = result["outcomes"]["failure"]
    # A: joint fails on all 12 seeds, lag on none, except best-vs-best under equal total steps, where lag's
    # choice (warm-up 1/8, from the best record) fails too. B: identical runs. Holm over A and B: 2 * 2 / 2**12.
    assert failure["shared total"]["A"]["p_adjusted"] == pytest.approx(2 * 2 / 2**12, rel=1e-12)
    assert [failure[v]["A"]["verdict"] for v in ("shared total", "shared joint", "best total", "best joint")] == [
        "helps",
        "helps",
        "undetermined",
        "helps",
    ]
    # B: no discordant pair; equivalence p = 0.9**12 = 0.28 before adjustment: undetermined
    assert failure["shared total"]["B"]["p_equivalence"] == pytest.approx(0.9**12, rel=1e-12)
    assert failure["shared total"]["B"]["verdict"] == "undetermined"
    assert result["robust"]["failure"] == {
        "A": "depends on tuning or accounting",
        "B": "depends on tuning or accounting",
    }
    # recognition: only A is a language; lag recognises on every seed at the shared rate
    recognition = result["outcomes"]["recognition"]
    assert set(recognition["shared total"]) == {"A"} and recognition["shared total"]["A"]["verdict"] == "helps"
    assert recognition["best total"]["A"]["verdict"] == "undetermined"
    # conditional: A never has both succeeding; B's differences are all 0 (equivalent, p of difference 1)
    conditional = result["outcomes"]["conditional"]["shared joint"]
    assert conditional["A"] == {
        "estimable": False,
        "n": 0,
        "verdict": "not estimable",
        "design_power": 0.8,
        "equivalence_seeds": 2000,
    }
    assert failure["best joint"]["B"]["design_power"] == 0.7  # B is an SGD cell
    assert conditional["B"]["verdict"] == "equivalent" and conditional["B"]["p_adjusted"] == 1.0
    # windows: A only lag has one (ratio +inf, helps); B the same window (ratio 1)
    assert result["window"]["total"]["A"]["ratio"] == math.inf and result["window"]["total"]["A"]["verdict"] == "helps"
    assert (
        result["window"]["joint"]["B"]["ratio"] == 1.0 and result["window"]["joint"]["B"]["verdict"] == "undetermined"
    )


def test_without_the_best_record_the_shared_variants_are_unchanged_and_no_robust_verdict():
    grid, best = synthetic_records()
    full = CA.analyse(grid, best, resamples=1000)
    shared = CA.analyse(grid, None, resamples=1000)
    for outcome, variants in shared["outcomes"].items():
        assert set(variants) == {"shared total", "shared joint"}
        assert variants == {v: full["outcomes"][outcome][v] for v in variants}
    assert shared["window"] == full["window"] and shared["robust"] is None


def test_trials_and_other_registrations_are_refused():
    grid, best = synthetic_records()
    with pytest.raises(ValueError, match="registration hash"):
        CA.analyse({**grid, "registration": "0" * 64}, best)
    with pytest.raises(ValueError, match="trial"):
        CA.analyse(grid, {**best, "trial": {"seeds": 2}})


def test_design_power_is_the_registered_table():
    # the registration's table: power at 100 seeds 0.939 (Adam, failure), 0.279 (SGD, (b) difference); the
    # seeds (b)'s equivalence would need: 2032 (Adam), 756 (SGD)
    power = CA.design_power(load_exploratory())
    assert power["adam"]["failure"] == pytest.approx(0.939, abs=5e-4)
    assert power["sgd"]["conditional"] == pytest.approx(0.279, abs=5e-4)
    assert (power["adam"]["equivalence_seeds"], power["sgd"]["equivalence_seeds"]) == (2032, 756)
