"""Tests of the views of the confirmatory records the verdict chapter shows: the step-size curves
(lagtheory.experiments.confirmatory.step_size), H5's breakdown (confirmatory.predictor_breakdown) and (c)'s
Monte Carlo error (confirmatory.sensitivity).

Independent paths: the per-seed flags counted here with run keys written out by hand; the Mann-Whitney null
distribution by brute-force enumeration and scipy's exact test; numpy's own inverted-CDF quantile for the
window verdict; the registered analysis's window verdicts and bootstrap draws (plain indexing, not the
multiplicity product); scipy's Mann-Whitney U for the AUROCs.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from lagtheory.experiments.confirmatory import predictor_breakdown as B
from lagtheory.experiments.confirmatory import sensitivity as S
from lagtheory.experiments.confirmatory import step_size as Z
from lagtheory.experiments.confirmatory.records import load_stage, stage_path
from lagtheory.experiments.paths import WINDOW_SENSITIVITY
from lagtheory.experiments.predictor import evaluation as V

ANALYSIS = json.loads(Path("book/data/confirmatory/analysis.json").read_text())
REGISTERED = json.loads(Path("book/data/confirmatory/predictor.json").read_text())


@pytest.fixture(scope="module")
def grid():
    return load_stage(stage_path("grid"))


@pytest.fixture(scope="module")
def best():
    return load_stage(stage_path("best"))


# -- the step size -------------------------------------------------------------------------------------------


def test_paired_interval_by_hand():
    joint = np.array([[1, 0, 0, 1], [0, 0, 1, 1]], dtype=bool)
    lag = np.array([[0, 0, 0, 1], [0, 1, 1, 0]], dtype=bool)
    difference, low, high = Z.paired_interval(joint, lag, resamples=2000)
    assert difference == pytest.approx((2 - 3) / 8)
    assert low <= difference <= high
    same, low, high = Z.paired_interval(joint, joint)
    assert same == low == high == 0.0


def test_paired_interval_has_the_normal_width_on_many_seeds():
    rng = np.random.default_rng(5)
    joint = rng.random((3, 400)) < 0.4
    lag = rng.random((3, 400)) < 0.3
    per_seed = (lag.astype(float) - joint).mean(axis=0)
    half = 1.96 * per_seed.std(ddof=1) / math.sqrt(per_seed.size)
    difference, low, high = Z.paired_interval(joint, lag)
    assert (high - low) / 2 == pytest.approx(half, rel=0.1)
    assert (low + high) / 2 == pytest.approx(difference, abs=0.1 * half)


def test_step_size_curves_count_the_flags(grid, best):
    found = Z.step_size_curves(grid, best, "CONTAINS_AB", "sgd")
    names = [n for n in grid["cells"] if n.startswith("CONTAINS_AB/sgd/")]
    assert sorted(found["regimes"]) == sorted(names) and len(names) == 6
    for index, rate in enumerate(found["rates"]):
        for outcome, flag in (("failure", "failed"), ("recognition", "recognised")):
            joint = sum(sum(grid["cells"][n]["runs"][f"joint rate={rate:g}"]["values"][flag]) for n in names)
            lag = sum(
                sum(grid["cells"][n]["runs"][f"lag rate={rate:g} warm=0.25 accounting=total"]["values"][flag])
                for n in names
            )
            assert found[outcome]["joint"][index] == pytest.approx(joint / 600, abs=1e-12)
            assert found[outcome]["lag"][index] == pytest.approx(lag / 600, abs=1e-12)
            low, high = found[outcome]["interval"][index]
            assert low <= (lag - joint) / 600 + 1e-12 and (lag - joint) / 600 <= high + 1e-12
    assert sum(found["calibrated"].values()) == 6
    assert found["calibrated"] == {
        rate: sum(grid["cells"][n]["shared_rate"] == rate for n in names) for rate in found["calibrated"]
    }
    for schedule in ("joint", "lag"):
        chosen = [best["choices"][n][f"{schedule} total"]["base_rate"] for n in names]
        assert found[f"best_{schedule}"] == {rate: chosen.count(rate) for rate in set(chosen)}


def test_step_size_curves_of_a_regression_task_have_no_recognition(grid, best):
    found = Z.step_size_curves(grid, best, "regression", "adam")
    assert "recognition" not in found and "failure" in found
    with pytest.raises(ValueError, match="no grid cell"):
        Z.step_size_curves(grid, best, "regression", "rmsprop")


# -- H5's breakdown ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("positives", "negatives"), [(3, 4), (5, 5), (2, 7), (1, 6)])
def test_null_counts_by_enumeration(positives, negatives):
    counts = [0] * (positives * negatives + 1)
    for chosen in itertools.combinations(range(positives + negatives), positives):
        u = sum(1 for p in chosen for q in range(positives + negatives) if q not in chosen and p > q)
        counts[u] += 1
    assert B.null_counts(positives, negatives) == counts


def _samples_with_u(positives, negatives, u):
    """Untied samples whose Mann-Whitney U (positives above negatives) is u: the positives' ranks chosen so."""
    ranks, left = [], u
    for k in range(positives):  # the k-th positive (from the top) passes at most `negatives` negatives
        above = min(negatives, left)
        left -= above
        ranks.append(above + (positives - 1 - k))
    x = np.array(ranks, dtype=float)
    y = np.array([r for r in range(positives + negatives) if r not in ranks], dtype=float)
    return x, y


@pytest.mark.parametrize(("positives", "negatives"), [(8, 16), (5, 7), (12, 10)])
def test_chance_auroc_is_where_scipys_exact_test_starts_to_reject(positives, negatives):
    critical = B.chance_auroc(positives, negatives)
    u = round(critical * positives * negatives)
    for value, rejects in ((u, True), (u - 1, False)):
        x, y = _samples_with_u(positives, negatives, value)
        assert scipy.stats.mannwhitneyu(x, y).statistic == value
        p = scipy.stats.mannwhitneyu(x, y, method="exact").pvalue
        assert (p < 0.05) == rejects, (value, p)


def test_chance_auroc_with_too_few_cells():
    assert B.chance_auroc(1, 2) is None
    assert B.chance_auroc(0, 5) is None


def test_breakdown_aurocs_are_mann_whitney_and_the_pooled_one_is_registered():
    found = {entry["split"]: entry for entry in B.breakdown(REGISTERED["cells"], resamples=200)}
    assert found["all"]["auroc"]["predictor"] == pytest.approx(REGISTERED["outcome"]["auroc"]["predictor"], abs=1e-12)
    for split, optimiser in (("SGD", "sgd"), ("Adam", "adam")):
        rows = [r for r in REGISTERED["cells"] if r["optimiser"] == optimiser]
        labels = np.array([r["lag_helps"] for r in rows])
        for name, field in (("predictor", "balance"), ("baseline", "baseline_log_odds")):
            scores = np.array([r[field] for r in rows], dtype=float)
            u = scipy.stats.mannwhitneyu(scores[labels], scores[~labels]).statistic
            assert found[split]["auroc"][name] == pytest.approx(u / (labels.sum() * (~labels).sum()), abs=1e-12)
        assert found[split]["cells"] == len(rows) and found[split]["positives"] == int(labels.sum())
    families = {B.family_of(r["task"]) for r in REGISTERED["cells"]}
    assert families == {"languages", "regression", "in-context regression"}
    assert found["languages"]["cells"] + found["regression"]["cells"] + found["in-context regression"]["cells"] == 214


def test_within_cluster_bootstrap_is_reproducible_and_brackets_the_estimate():
    rows = REGISTERED["cells"]
    labels = np.array([r["lag_helps"] for r in rows])
    scores = {"predictor": np.array([r["balance"] for r in rows], dtype=float)}
    scores["baseline"] = np.array([r["baseline_log_odds"] for r in rows], dtype=float)
    clusters = [r["cluster"] for r in rows]
    first = V.cluster_bootstrap(scores, labels, clusters, resamples=300, within=True)
    assert first == V.cluster_bootstrap(scores, labels, clusters, resamples=300, within=True)
    low, high = first["predictor"]
    assert low < REGISTERED["outcome"]["auroc"]["predictor"] < high


# -- (c)'s Monte Carlo error ---------------------------------------------------------------------------------


def test_verdict_from_counts_is_numpys_inverted_cdf_quantile():
    rng = np.random.default_rng(11)
    q = 0.05 / 216
    for resamples in (5_000, 20_000):
        for centre in (1.0, 1.3, 0.8, 1.15):
            ratios = np.round(rng.normal(centre, 0.05, size=resamples) * 8) / 8  # ties at 1 and around it
            low, high = (np.quantile(ratios, level, method="inverted_cdf") for level in (q, 1 - q))
            expected = "helps" if low > 1 else "hurts" if high < 1 else "undetermined"
            counts = {
                "at_most_one": int(np.sum(ratios <= 1)),
                "at_least_one": int(np.sum(ratios >= 1)),
                "resamples": resamples,
            }
            assert S.verdict_from_counts(counts, True) == expected, (resamples, centre)
    assert S.verdict_from_counts({"at_most_one": 0, "at_least_one": 0, "resamples": 10}, False) == "neither"


@pytest.mark.parametrize("resamples", [20_000, 100_000, 250_000])
def test_verdict_from_counts_at_the_boundary_rank(resamples):
    q = 0.05 / 216
    for k in range(max(0, math.ceil(q * resamples) - 2), math.ceil(q * resamples) + 3):
        for low_value, high_value in ((0.9, 1.2), (1.0, 1.2), (0.8, 1.0)):
            ratios = np.array([low_value] * k + [high_value] * (resamples - k))
            for sample in (ratios, 2 - ratios):  # the lower tail, and mirrored the upper one
                low, high = (np.quantile(sample, level, method="inverted_cdf") for level in (q, 1 - q))
                expected = "helps" if low > 1 else "hurts" if high < 1 else "undetermined"
                counts = {
                    "at_most_one": int(np.sum(sample <= 1)),
                    "at_least_one": int(np.sum(sample >= 1)),
                    "resamples": resamples,
                }
                assert S.verdict_from_counts(counts, True) == expected, (resamples, k, low_value)


def _counts_by_indexing(joint_failed, lag_failed, resamples, seed):
    """The registered analysis's draws, evaluated by plain indexing of the flags."""
    joint_ok, lag_ok = ~joint_failed, ~lag_failed
    n = joint_ok.shape[1]
    rng = np.random.default_rng(seed)
    at_most = at_least = 0
    for start in range(0, resamples, 10_000):
        index = rng.integers(0, n, size=(min(10_000, resamples - start), n))
        joint = (joint_ok[:, index].mean(axis=-1) >= 0.9).sum(axis=0)
        lag = (lag_ok[:, index].mean(axis=-1) >= 0.9).sum(axis=0)
        at_most += int(np.sum(lag <= joint))
        at_least += int(np.sum((lag >= joint) | (joint == 0)))
    return {"at_most_one": at_most, "at_least_one": at_least, "resamples": resamples}


TAIL_SAMPLE = (
    ("total", "linear/sgd/main/scale=1 ratio=1"),
    ("joint", "regression/sgd/attention_init/preset"),
    ("total", "FIRST/adam/main/scale=3 ratio=3"),
)


@pytest.mark.parametrize(("accounting", "cell"), TAIL_SAMPLE)
def test_tail_counts_follow_the_registered_draws(grid, accounting, cell):
    _, joint, lag = S.window_failures(grid, cell, accounting)
    for seed in (0, 7):
        assert S.tail_counts(joint, lag, 30_000, seed) == _counts_by_indexing(joint, lag, 30_000, seed)


@pytest.mark.parametrize(("accounting", "cell"), TAIL_SAMPLE)
def test_seed_zero_gives_the_registered_verdict(grid, accounting, cell):
    _, joint, lag = S.window_failures(grid, cell, accounting)
    counts = S.tail_counts(joint, lag, 100_000, 0)
    assert S.verdict_from_counts(counts, True) == ANALYSIS["window"][accounting][cell]["verdict"]


def test_clopper_pearson_against_its_definition():
    low, high = S.clopper_pearson(7, 1000, level=0.05)
    assert scipy.stats.binom.sf(6, 1000, low) == pytest.approx(0.025, rel=1e-6)
    assert scipy.stats.binom.cdf(7, 1000, high) == pytest.approx(0.025, rel=1e-6)
    assert S.clopper_pearson(0, 10)[0] == 0.0 and S.clopper_pearson(10, 10)[1] == 1.0


def _grid_of(flags):
    """A grid record with one cell per (name, (joint, lag)) in ``flags``: two rates, 10 seeds, both accountings alike."""
    cells = {}
    for name, (joint, lag) in flags.items():
        runs = {}
        for index, rate in enumerate((0.1, 1.0)):
            runs[f"joint rate={rate:g}"] = {"base_rate": rate, "values": {"failed": joint[index]}}
            for accounting in ("total", "joint"):
                key = f"lag rate={rate:g} warm=0.25 accounting={accounting}"
                runs[key] = {"base_rate": rate, "values": {"failed": lag[index]}}
        cells[name] = {"runs": runs}
    return {"cells": cells}


def test_deepen_raises_the_resamples_while_the_seeds_disagree(monkeypatch):
    flags = {"a": ([[False] * 10, [True] * 10], [[False] * 10, [False] * 10])}
    calls = []

    def fake_counts(joint, lag, resamples, seed):  # seed 1 disagrees until a million resamples
        calls.append(resamples)
        tail = 0 if seed == 0 or resamples >= 1_000_000 else resamples
        return {"at_most_one": tail, "at_least_one": resamples, "resamples": resamples}

    monkeypatch.setattr(S, "tail_counts", fake_counts)
    screened = {"q": 0.05 / 216, "seeds": [0, 1], "screen_resamples": 10}
    for accounting in ("total", "joint"):
        screened[accounting] = {"screen": {}, "settled": {}, "tail_cells": {"a": {"screen": {}}}}
    found = S.deepen(_grid_of(flags), screened, resamples=10_000, maximum=10_000_000)
    entry = found["total"]["tail_cells"]["a"]
    assert entry["resamples"] == 1_000_000 and set(entry["verdicts"].values()) == {"helps"}
    assert calls == [10_000] * 2 + [100_000] * 2 + [1_000_000] * 2  # the joint accounting's identical flags reuse it
    assert found["joint"]["tail_cells"]["a"] == entry
    assert found["total"]["deep"] == {"0": {"helps": 1, "hurts": 0, "undetermined": 0, "neither": 0}} | {
        "1": {"helps": 1, "hurts": 0, "undetermined": 0, "neither": 0}
    }
    capped = S.deepen(_grid_of(flags), screened, resamples=10_000, maximum=50_000)
    assert capped["total"]["tail_cells"]["a"]["resamples"] == 10_000
    assert set(capped["total"]["tail_cells"]["a"]["verdicts"].values()) == {"helps", "undetermined"}


def test_the_stored_sensitivity_keeps_the_registered_counts_at_seed_zero():
    stored = json.loads(WINDOW_SENSITIVITY.read_text())
    for accounting in ("total", "joint"):
        registered = [entry["verdict"] for entry in ANALYSIS["window"][accounting].values()]
        assert stored[accounting]["screen"]["0"]["helps"] == registered.count("helps")
        assert stored[accounting]["screen"]["0"]["hurts"] == registered.count("hurts")
        tails = set(stored[accounting]["tail_cells"])
        assert tails.isdisjoint(stored[accounting]["settled"])
        assert len(tails) + len(stored[accounting]["settled"]) == len(registered)
