"""Pooled weight p(n, k; t) (book eq. eq-pooled-weight, eq-dp-dt, eq-unscaled)."""

import mpmath
import numpy as np
import pytest

from lagtheory import pooled_weight, pooled_weight_dt
from lagtheory.pooling import pooled_log_odds


def direct(n, k, t):
    """The definition, in exact rational arithmetic via mpmath at 50 digits."""
    with mpmath.workdps(50):
        n, k, t = mpmath.mpf(n), mpmath.mpf(k), mpmath.mpf(t)
        return float(k * n**t / (k * n**t + n - k))


@pytest.mark.parametrize(
    "n,k,t",
    [
        (1, 1, 0.3),
        (2, 1, 0.0),
        (10, 3, 0.7),
        (1000, 1, 1.0),
        (10**6, 5, -2.0),
        (10**12, 1, 1.5),
        (10**18, 1, 0.5),
        (10**18, 10**9, 1.0),
        (7, 0, 3.0),
        (7, 7, -3.0),
    ],
)
def test_matches_definition_at_high_precision(n, k, t):
    assert pooled_weight(n, k, t) == pytest.approx(direct(n, k, t), rel=1e-13, abs=1e-300)


def test_known_values():
    # t = 0: uniform attention, p = k / n
    assert pooled_weight(10, 3, 0.0) == pytest.approx(0.3, rel=1e-15)
    # t = 1, k = 1: p = n / (2n - 1)
    assert pooled_weight(5, 1, 1.0) == pytest.approx(5 / 9, rel=1e-15)
    # no b: p = 0; only b's: p = 1, for any t
    assert pooled_weight(5, 0, 100.0) == 0.0
    assert pooled_weight(5, 5, -100.0) == 1.0


def test_unscaled_matches_definition():
    n, k, t = 50.0, 2.0, 1.3
    assert pooled_weight(n, k, t, scaling="none") == pytest.approx(k * np.exp(t) / (k * np.exp(t) + n - k), rel=1e-14)


def test_vectorised_and_broadcast():
    n = np.array([2.0, 10.0, 100.0])
    p = pooled_weight(n, 1, np.array([[0.0], [1.0]]))
    assert p.shape == (2, 3)
    np.testing.assert_allclose(p[0], 1 / n, rtol=1e-15)
    np.testing.assert_allclose(p[1], n / (2 * n - 1), rtol=1e-15)


def test_extremes_are_finite_and_warning_free():
    n = np.logspace(0, 18, 50).round()
    for t in (-1000.0, -1.0, 0.0, 1.0, 1000.0):
        p = pooled_weight(n, 1, t)
        d = pooled_weight_dt(n, 1, t)
        assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
        assert np.all(np.isfinite(d)) and np.all(d >= 0)


def test_monotone_in_k_and_t():
    n = 1000
    k = np.arange(0, n + 1)
    assert np.all(np.diff(pooled_weight(n, k, 0.8)) > 0)
    t = np.linspace(-3, 3, 101)
    assert np.all(np.diff(pooled_weight(n, 3, t)) > 0)


def test_derivative_against_central_difference():
    for n, k, t in [(10, 1, 0.2), (1e6, 3, 1.1), (50, 25, -0.5)]:
        h = 1e-6
        numeric = (pooled_weight(n, k, t + h) - pooled_weight(n, k, t - h)) / (2 * h)
        assert pooled_weight_dt(n, k, t) == pytest.approx(numeric, rel=1e-7)
        numeric_none = (pooled_weight(n, k, t + h, "none") - pooled_weight(n, k, t - h, "none")) / (2 * h)
        assert pooled_weight_dt(n, k, t, "none") == pytest.approx(numeric_none, rel=1e-7)


def test_log_odds():
    assert pooled_log_odds(10, 3, 0.5) == pytest.approx(np.log(3 / 7) + 0.5 * np.log(10), rel=1e-15)
    assert pooled_log_odds(10, 0, 0.5) == -np.inf


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"n": 0, "k": 0, "t": 0.0}, "n must be >= 1"),
        ({"n": 2.5, "k": 1, "t": 0.0}, "n must be a whole number"),
        ({"n": 5, "k": 6, "t": 0.0}, "0 <= k <= n"),
        ({"n": 5, "k": -1, "t": 0.0}, "0 <= k <= n"),
        ({"n": 5, "k": 1.5, "t": 0.0}, "k must be a whole number"),
        ({"n": 5, "k": 1, "t": np.nan}, "t must be finite"),
        ({"n": np.inf, "k": 1, "t": 0.0}, "n must be finite"),
        ({"n": 5, "k": 1, "t": 0.0, "scaling": "sqrt"}, "scaling must be"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pooled_weight(**kwargs)


def test_wrong_type():
    with pytest.raises(TypeError, match="n must be"):
        pooled_weight("ten", 1, 0.0)


@pytest.mark.parametrize(("n", "t"), [(10**18, 3.0), (10**12, 4.0), (10**9, -3.0), (2, 60.0)])
def test_derivative_where_p_is_within_rounding_of_0_or_1(n, t):
    # |z| > 37: p (1 - p) formed as expit(z) (1 - expit(z)) cancels to 0 (or loses every digit), the form of
    # the docstring, expit(z) expit(-z), keeps them; against 50-digit mpmath of log(n) p (1 - p)
    with mpmath.workdps(50):
        n_mp, t_mp = mpmath.mpf(n), mpmath.mpf(t)
        p = n_mp**t_mp / (n_mp**t_mp + n_mp - 1)
        exact = mpmath.log(n_mp) * p * (1 - p)
    assert pooled_weight_dt(n, 1, t) == pytest.approx(float(exact), rel=1e-12, abs=0)
