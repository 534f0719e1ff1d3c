"""Exact recognition verdicts (book Definition def-recognition) against brute force over all (n, k)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagtheory import recognition
from lagtheory.exact_recognition import horizon_at_t0, worst_one_b_length


def brute_force(theta, u, N, scaling="log"):
    """Evaluate every count pair (n, k), n <= N, straight from the definition of f."""
    t, ua, ub = theta[1] - theta[0], u[0], u[1]
    first, margin = None, math.inf
    for n in range(1, N + 1):
        k = np.arange(0, n + 1, dtype=float)
        weight = float(n) ** t if scaling == "log" else math.exp(t)
        p = k * weight / (k * weight + n - k)
        f = ua * (1 - p) + ub * p
        y = np.where(k > 0, 1.0, -1.0)
        yf = y * f
        margin = min(margin, float(yf.min()))
        if first is None and np.any(yf <= 0):
            first = (n, int(k[np.argmax(yf <= 0)]))
    return first, margin


CASES = [
    ([0, 0], [-1, 3], "log"),
    ([0, 0.5], [-1, 3], "log"),
    ([0, 1.0], [-1, 3], "log"),
    ([0, 1.3], [-1, 1.2], "log"),
    ([0, 1.1], [-1, 1.05], "log"),
    ([0, 2.0], [0.5, 3], "log"),
    ([0, 1.0], [-1, -0.5], "log"),
    ([0, 1.5], [-0.5, 0.5], "log"),
    ([0.2, -1.0], [-0.3, 2.0], "log"),
    ([0, 3.0], [-1, 3], "none"),
]


@pytest.mark.parametrize("theta,u,scaling", CASES)
def test_agrees_with_brute_force(theta, u, scaling):
    N = 400
    first, margin = brute_force(theta, u, N, scaling)
    verdict = recognition(theta, u, N, scaling)
    assert verdict.first_error == first
    assert verdict.recognises == (first is None)
    assert verdict.horizon == (N if first is None else first[0] - 1)
    assert verdict.margin == pytest.approx(margin, abs=1e-12)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    t=st.floats(-2, 3),
    ua=st.floats(-2, 2),
    ub=st.floats(-2, 4),
)
def test_random_parameters_agree_with_brute_force(t, ua, ub):
    N = 150
    first, _ = brute_force([0.0, t], [ua, ub], N)
    assert recognition([0.0, t], [ua, ub], N).first_error == first


@pytest.mark.parametrize("ua,w", [(-1.0, 3.0), (-0.5, 10.3), (-2.0, 7.0), (-0.75, 100.0)])
def test_horizon_formula_at_t0(ua, w):
    # at t = 0, p = 1/n for a^(n-1) b, which is right iff n < w / (-u_a) (book eq. eq-horizon);
    # the ratios here are not whole numbers (at an exact tie f = 0 and rounding decides)
    verdict = recognition([0, 0], [ua, ua + w], 10**12)
    expected_first_bad = math.ceil(w / -ua)
    assert verdict.first_error == (expected_first_bad, 1)


def test_threshold_examples_up_to_1e18():
    assert recognition([0, 1.0], [-1, 3], 1e18)
    assert recognition([0, 1.0], [-1, 3], 1e18).margin == pytest.approx(1.0, abs=1e-12)
    # below the threshold the horizon is finite but can be astronomically far:
    # at t = 0.999, p(n, 1) ~ 1 / (1 + n^0.001) stays above 1/4 (f > 0) until n^0.001 > 3, n > 3^1000
    assert recognition([0, 0.999], [-1, 3], 1e18)
    assert not recognition([0, 0.9], [-1, 3], 1e18)  # n^0.1 > 3 from n = 3^10 = 59049 on
    assert recognition([0, 0.9], [-1, 3], 1e18).first_error[0] == pytest.approx(3**10, rel=1e-3)


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"max_length": 0}, ValueError, "max_length must be"),
        ({"max_length": 2.5}, ValueError, "max_length must be"),
        ({"max_length": 1e19}, ValueError, "max_length must be"),
        ({"max_length": "big"}, TypeError, "max_length must be"),
        ({"scaling": "x"}, ValueError, "scaling must be"),
    ],
)
def test_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        recognition([0, 1], [-1, 1], **kwargs)


def test_bad_parameters():
    with pytest.raises(ValueError, match="u must be finite"):
        recognition([0, 1], [np.nan, 1])


def test_describe_names_the_shortest_misclassified_string():
    assert recognition([0, 0], [0.5, 1.0], 10).describe() == "first error at length 1: a; horizon 0"
    assert recognition([0, 0], [-0.5, -1.0], 10).describe() == "first error at length 1: b; horizon 0"
    assert recognition([0, 0], [-1.0, 0.8], 10).describe() == "first error at length 2: a b; horizon 1"
    assert recognition([0, 0], [-1.0, 2.5], 10).describe() == "first error at length 4: a^3 b; horizon 3"


def test_no_signed_zero_margin():
    assert str(recognition([0, 1], [0.0, 1.0], 10).margin) == "0.0"


def brute_worst_length(t, N):
    """argmin over n <= N of p(n, 1; t), through the odds (n - 1) n^(-t) of a against b (largest odds)."""
    n = np.arange(1, N + 1, dtype=float)
    return int(n[np.argmax((n - 1) * n ** (-t))])


@pytest.mark.parametrize("t", [1.001, 1.05, 1.22, 1.3, 1.5, 1.9, 2.0, 2.5, 3.0, 11.0, 200.0])
def test_worst_one_b_length_against_brute_force(t):
    # 1.22: the peak t / (t - 1) is 5.55 and the worst length is 6, not floor(5.55) = 5
    assert worst_one_b_length(t) == brute_worst_length(t, 5000)
    assert worst_one_b_length(t, 3) == brute_worst_length(t, 3)
    if t == 1.22:
        assert worst_one_b_length(t) == 6


@pytest.mark.parametrize("t,scaling", [(1.0, "log"), (0.5, "log"), (-2.0, "log"), (3.0, "none")])
def test_worst_one_b_length_without_minimum(t, scaling):
    assert worst_one_b_length(t, 10**12, scaling) == 10**12
    with pytest.raises(ValueError, match="t must be > 1"):
        worst_one_b_length(t, None, scaling)


def brute_horizon_at_t0(u_a, u_b, N):
    """Count the lengths n <= N whose strings a^n, a^(n-1) b and b^n are all right, in exact rationals."""
    u_a, u_b = Fraction(u_a), Fraction(u_b)
    for n in range(1, N + 1):
        outputs = [(-1, u_a), (1, u_a + (u_b - u_a) / n), (1, u_b)]
        if any(y * f <= 0 for y, f in outputs):
            return n - 1
    return N


@settings(max_examples=200, deadline=None, derandomize=True)
@given(u_a=st.floats(-5, 5), ratio=st.floats(-3, 60))
def test_horizon_at_t0_against_brute_force(u_a, ratio):
    u_b = ratio * abs(u_a)
    assert horizon_at_t0((u_a, u_b)) == brute_horizon_at_t0(u_a, u_b, 200)


@pytest.mark.parametrize("m", [1, 2, 7, 40])
def test_horizon_at_t0_at_exact_ties(m):
    # u_b / (-u_a) = m exactly: a^m b has f = 0, an error, so the horizon is m
    assert horizon_at_t0((-0.25, 0.25 * m)) == m == brute_horizon_at_t0(-0.25, 0.25 * m, 100)


def test_a_zero_output_is_an_error():
    # t = 0, u = (-1, 3): f(a^3 b) = -1 + 4/4 = 0 exactly (p = 1/4 is exact in float64); Definition
    # def-recognition counts f = 0 as an error, so with max_length 4 the first error is a^3 b
    verdict = recognition([0.0, 0.0], [-1.0, 3.0], 4)
    assert verdict.first_error == (4, 1) and verdict.horizon == 3 and verdict.margin == 0.0
    # and u_a = 0 makes every negative an error, whatever u_b and t
    assert recognition([0.0, 1.5], [0.0, 3.0], 10).first_error == (1, 0)
