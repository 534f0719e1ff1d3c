"""Tests of the power calculations (lagtheory.experiments.statistics.power) against independent paths: simulation with
scipy's own tests (scipy.stats.binomtest for McNemar, ttest_1samp for the t-test and the two one-sided tests),
scipy's noncentral t where it is reliable, and binomial sums written out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from lagtheory.experiments.statistics import power as W


def test_mcnemar_power_matches_simulation_with_binomtest():
    rng = np.random.default_rng(1)
    n, p10, p01, alpha = 40, 0.2, 0.05, 0.01
    draws = 4000
    cells = rng.multinomial(n, [p10, p01, 1 - p10 - p01], size=draws)
    rejected = [b + c > 0 and scipy.stats.binomtest(int(b), int(b + c), 0.5).pvalue < alpha for b, c, _ in cells]
    simulated = np.mean(rejected)
    exact = W.mcnemar_power(n, p10, p01, alpha)
    assert abs(simulated - exact) < 4 * math.sqrt(exact * (1 - exact) / draws)


def test_mcnemar_power_by_hand_for_three_pairs():
    # n = 3, alpha = 0.3: only D = 3 with k in {0, 3} rejects (p = 2/8 = 0.25); D = 2, k = 0 gives p = 0.5.
    p10, p01 = 0.3, 0.1
    expected = (p10 + p01) ** 3 * ((p10 / 0.4) ** 3 + (p01 / 0.4) ** 3)
    assert W.mcnemar_power(3, p10, p01, 0.3) == pytest.approx(expected, rel=1e-12)
    assert W.mcnemar_power(3, 0.0, 0.0, 0.3) == 0.0


@pytest.mark.parametrize("alpha", [0.3, 0.05, 0.05 / 3])
def test_mcnemar_power_is_the_sum_over_every_table_that_binomtest_rejects(alpha):
    # every table (b, c) of n pairs, its trinomial probability, and scipy's exact two-sided binomial test
    for n, p10, p01 in [(1, 0.3, 0.2), (7, 0.3, 0.1), (18, 0.02, 0.3), (25, 0.45, 0.45), (30, 0.0, 0.4)]:
        expected = sum(
            scipy.stats.multinomial.pmf([b, c, n - b - c], n, [p10, p01, 1 - p10 - p01])
            for b in range(n + 1)
            for c in range(n + 1 - b)
            if b + c > 0 and scipy.stats.binomtest(b, b + c, 0.5).pvalue < alpha
        )
        assert W.mcnemar_power(n, p10, p01, alpha) == pytest.approx(expected, rel=1e-12, abs=1e-300), (n, alpha)


@pytest.mark.parametrize(("n", "effect", "sd", "alpha"), [(12, 0.4, 1.0, 0.05), (40, 0.1, 0.3, 0.01)])
def test_t_power_matches_noncentral_t_and_simulation(n, effect, sd, alpha):
    critical = scipy.stats.t.ppf(1 - alpha / 2, n - 1)
    shift = effect / sd * math.sqrt(n)
    noncentral = scipy.stats.nct.sf(critical, n - 1, shift) + scipy.stats.nct.cdf(-critical, n - 1, shift)
    assert W.t_power(n, effect, sd, alpha) == pytest.approx(noncentral, abs=1e-8)
    rng = np.random.default_rng(2)
    d = rng.normal(effect, sd, size=(4000, n))
    simulated = np.mean(scipy.stats.ttest_1samp(d, 0.0, axis=1).pvalue < alpha)
    exact = W.t_power(n, effect, sd, alpha)
    assert abs(simulated - exact) < 4 * math.sqrt(exact * (1 - exact) / 4000) + 1e-3


@pytest.mark.parametrize(("n", "sd", "margin", "effect"), [(30, 0.1, 0.05, 0.0), (60, 0.2, 0.08, 0.02)])
def test_tost_power_matches_simulation(n, sd, margin, effect):
    rng = np.random.default_rng(3)
    alpha = 0.05
    d = rng.normal(effect, sd, size=(4000, n))
    lower = scipy.stats.ttest_1samp(d, -margin, axis=1, alternative="greater").pvalue
    upper = scipy.stats.ttest_1samp(d, margin, axis=1, alternative="less").pvalue
    simulated = np.mean(np.maximum(lower, upper) < alpha)
    exact = W.tost_power(n, sd, margin, alpha, effect)
    assert 0.05 < exact < 0.99
    assert abs(simulated - exact) < 4 * math.sqrt(exact * (1 - exact) / 4000)


def test_window_accuracy_by_hand():
    # n = 10, share 0.9: a rate counts as a success with >= 9 successes.
    p = 0.95
    inside = 10 * p**9 * (1 - p) + p**10
    assert W.window_accuracy(10, p) == pytest.approx(inside, rel=1e-12)
    assert W.window_accuracy(10, 0.5) == pytest.approx(1 - (10 * 0.5**10 + 0.5**10), rel=1e-12)


def test_smallest_n_finds_the_first_n_reaching_the_target():
    assert W.smallest_n(lambda n: n / 100, 0.37) == 37
    assert W.smallest_n(lambda n: 0.1, 0.8, stop=64) is None


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="p10"):
        W.mcnemar_power(10, -0.1, 0.1, 0.05)
    with pytest.raises(ValueError, match="p10 \\+ p01"):
        W.mcnemar_power(10, 0.7, 0.6, 0.05)
    with pytest.raises(ValueError, match="sd"):
        W.t_power(10, 0.1, 0.0, 0.05)
    with pytest.raises(TypeError, match="n"):
        W.tost_power(10.5, 0.1, 0.1, 0.05)
