"""Tests of lagtheory.experiments.statistics.paired against textbook examples derived independently.

* Paired t-test: Student's sleep data (Cushny and Peebles 1905, as printed in
  R's ``sleep`` data set): extra hours of sleep under two drugs for ten
  patients. R's documented example ``t.test(extra ~ group, data = sleep,
  paired = TRUE)`` prints t = -4.0621, df = 9, p-value = 0.002833, mean
  difference -1.58, 95% interval (-2.4598858, -0.7001142).
* TOST: the two one-sided tests at level 5% reject exactly when the 90% t
  interval lies inside (-margin, margin); with the sleep data the interval is
  -1.58 +- t_(0.95, 9) se, t_(0.95, 9) = 1.833113 (t table) and se = 1.58 /
  4.0621 (from R's t), so the boundary margin is 1.58 + 1.833113 * 0.388961
  = 2.2930 (by hand).
* McNemar exact: with a_only = 1 and b_only = 9 discordant pairs, the
  two-sided exact p is 2 P(X <= 1), X ~ Binomial(10, 1/2), = 2 (1 + 10) / 1024
  = 0.021484375 (by hand); with 1 and 7 it is 2 * 9 / 256 = 0.0703125, the
  exact conditional p-value 0.070 of Fagerland, Lydersen and Laake (BMC Med.
  Res. Methodol. 2013, their worked example).
* Holm: p = (0.01, 0.04, 0.03, 0.005): sorted 0.005, 0.01, 0.03, 0.04 get
  4 * 0.005 = 0.02, 3 * 0.01 = 0.03, 2 * 0.03 = 0.06, max(1 * 0.04, 0.06) = 0.06
  (by hand).
* Binary equivalence: 30 pairs, none discordant, margin 0.1: the exact
  one-sided p is P(X <= 0), X ~ Binomial(30, 0.1), = 0.9^30 = 0.0423911 (by hand).
"""

from __future__ import annotations

import numpy as np
import pytest

from lagtheory.experiments.statistics import paired as P

DRUG_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
DRUG_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


def test_paired_t_on_the_sleep_data_matches_r():
    d = np.array(DRUG_1) - np.array(DRUG_2)
    assert d.mean() == pytest.approx(-1.58, abs=1e-12)
    assert P.paired_t(d) == pytest.approx(0.002833, abs=5e-7)
    comparison = P.compare("sleep", DRUG_1, DRUG_2, higher_is_better=True, margin=1.0)
    assert comparison.p_difference == pytest.approx(0.002833, abs=5e-7)
    assert comparison.mean == pytest.approx(-1.58)


def test_tost_boundary_on_the_sleep_data():
    d = np.array(DRUG_1) - np.array(DRUG_2)
    boundary = 1.58 + 1.833113 * (1.58 / 4.0621)
    assert boundary == pytest.approx(2.2930, abs=1e-4)
    assert P.tost(d, boundary) == pytest.approx(0.05, abs=2e-4)
    assert P.tost(d, 2.30) < 0.05 < P.tost(d, 2.28)
    assert P.tost(d, 1.0) > 0.5  # the mean lies outside (-1, 1)


def test_bootstrap_interval_is_near_the_t_interval_and_exact_without_spread():
    d = np.array(DRUG_1) - np.array(DRUG_2)
    low, high = P.bootstrap_interval(d)
    # the t interval is (-2.46, -0.70); a bootstrap interval of ten values is narrower but close
    assert low < -1.58 < high
    assert abs(low - -2.4598858) < 0.5 and abs(high - -0.7001142) < 0.5
    assert P.bootstrap_interval(np.zeros(30)) == (0.0, 0.0)
    assert P.bootstrap_interval(np.full(5, 0.25)) == (0.25, 0.25)
    assert P.bootstrap_interval(d, seed=1) == P.bootstrap_interval(d, seed=1)


def test_mcnemar_exact_by_hand():
    a = np.array([1] * 1 + [0] * 9 + [1] * 20)
    b = np.array([0] * 1 + [1] * 9 + [1] * 20)
    result = P.mcnemar_exact(a, b)
    assert (result.a_only, result.b_only) == (1, 9)
    assert result.p_value == pytest.approx(22 / 1024, abs=1e-15)
    a = np.array([1] + [0] * 7 + [0] * 5)
    b = np.array([0] + [1] * 7 + [0] * 5)
    assert P.mcnemar_exact(a, b).p_value == pytest.approx(18 / 256, abs=1e-15)
    assert P.mcnemar_exact(np.ones(30), np.ones(30)).p_value == 1.0


def test_holm_by_hand():
    np.testing.assert_allclose(P.holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02], atol=1e-15)
    np.testing.assert_allclose(P.holm([0.5, 0.9]), [1.0, 1.0])
    np.testing.assert_allclose(P.holm([0.2]), [0.2])


def test_binary_equivalence_by_hand():
    ones = np.ones(30, dtype=int)
    assert P.tost_binary(ones, ones, 0.1) == pytest.approx(0.9**30, rel=1e-12)
    a = ones.copy()
    a[:3] = 0
    # 3 discordant of 30: P(X <= 3), X ~ Bin(30, 0.1) = sum_k C(30, k) 0.1^k 0.9^(30-k), k = 0..3
    from math import comb

    expected = sum(comb(30, k) * 0.1**k * 0.9 ** (30 - k) for k in range(4))
    assert P.tost_binary(a, ones, 0.1) == pytest.approx(expected, rel=1e-12)


def test_degenerate_samples_are_decided_exactly():
    assert P.paired_t(np.zeros(10)) == 1.0
    assert P.paired_t(np.full(10, 0.3)) == 0.0
    assert P.tost(np.zeros(10), 0.1) == 0.0
    assert P.tost(np.full(10, 0.3), 0.1) == 1.0


def test_family_verdicts_follow_the_rule():
    rng = np.random.default_rng(0)
    base = rng.normal(size=30)
    better = base + 1.0 + 0.1 * rng.normal(size=30)
    same = base + 0.001 * rng.normal(size=30)
    noisy = base + 0.5 * rng.normal(size=30)
    family = P.compare_family(
        [
            P.compare("better", better, base, True, margin=0.1),
            P.compare("worse", base, better, True, margin=0.1),
            P.compare("same", same, base, True, margin=0.1),
            P.compare("noisy", noisy, base, True, margin=0.01),
            P.compare("lower is better", base, better, False, margin=0.1),
        ]
    )
    assert [c.verdict for c in family] == ["helps", "hurts", "equivalent", "undetermined", "helps"]
    assert all(c.p_difference_adjusted >= c.p_difference for c in family)


def test_many_comparisons_at_once_are_scipys_one_at_a_time():
    # compare_many runs the t-tests of comparisons with the same number of seeds in one scipy call along the
    # last axis: each must get exactly (every bit) what scipy gives its differences alone, degenerate ones
    # decided exactly as one at a time, and the comparisons come back in the order given
    import scipy.stats

    rng = np.random.default_rng(7)
    a = [rng.normal(size=n) for n in (10, 30, 10, 30, 10, 10)]
    b = [x + 0.3 * rng.normal(size=x.size) + shift for x, shift in zip(a, (0.0, 0.2, -0.5, 0.0, 0.1, 0.0), strict=True)]
    b[3] = a[3].copy()  # no difference at all
    a[5], b[5] = np.arange(10.0), np.arange(10.0) - 1.0  # a difference of exactly 1 on every seed
    names = [f"c{i}" for i in range(len(a))]
    many = P.compare_many(names, a, b, False, 0.25)
    assert [c.name for c in many] == names
    for comparison, x, y in zip(many[:5], a, b, strict=False):
        if comparison.name == "c3":
            continue
        d = y - x  # lower is better: positive favours a
        assert comparison.p_difference == float(scipy.stats.ttest_1samp(d, 0.0).pvalue)
        lower = scipy.stats.ttest_1samp(d, -0.25, alternative="greater").pvalue
        upper = scipy.stats.ttest_1samp(d, 0.25, alternative="less").pvalue
        assert comparison.p_equivalence == float(max(lower, upper))
        interval = scipy.stats.bootstrap(
            (d,), np.mean, n_resamples=9999, method="BCa", rng=np.random.default_rng(0)
        ).confidence_interval
        assert (comparison.low, comparison.high) == (float(interval.low), float(interval.high))
        assert comparison.mean == float(d.mean()) and comparison.seeds == d.size
    assert (many[3].mean, many[3].low, many[3].high, many[3].p_difference, many[3].p_equivalence) == (0, 0, 0, 1, 0)
    assert (many[5].low, many[5].high, many[5].p_difference, many[5].p_equivalence) == (-1, -1, 0, 1)
    with pytest.raises(ValueError, match="same length"):
        P.compare_many(["x"], [[1.0, 2.0]], [], True, 0.1)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="same length"):
        P.compare("x", [1.0, 2.0], [1.0], True, 0.1)
    with pytest.raises(ValueError, match="margin"):
        P.tost([0.1, 0.2], 0.0)
    with pytest.raises(ValueError, match="p_values"):
        P.holm([1.5])
    with pytest.raises(TypeError, match="higher_is_better"):
        P.compare("x", [1.0, 2.0], [1.0, 2.0], 1, 0.1)
    with pytest.raises(ValueError, match="binary"):
        P.mcnemar_exact([0, 2], [1, 1])


def test_format_p():
    assert P.format_p(0.0123) == "p = 0.012"
    assert P.format_p(8.8e-23) == "p < 0.0001"
