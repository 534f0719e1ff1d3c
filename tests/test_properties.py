"""Property tests (hypothesis) of the invariants the book's proofs rely on."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lagtheory import Data, Geometric, pooled_weight, pooled_weight_dt, population

lengths = st.integers(min_value=1, max_value=10**18)
ts = st.floats(min_value=-1000, max_value=1000, allow_nan=False)
PROFILE = settings(max_examples=200, deadline=None, derandomize=True)


@PROFILE
@given(n=lengths, data=st.data(), t=ts, scaling=st.sampled_from(["log", "none"]))
def test_pooled_weight_in_unit_interval_and_finite(n, data, t, scaling):
    k = data.draw(st.integers(min_value=0, max_value=n))
    p = pooled_weight(n, k, t, scaling)
    d = pooled_weight_dt(n, k, t, scaling)
    assert 0.0 <= p <= 1.0
    assert np.isfinite(d) and d >= 0.0
    assert (p == 0.0) == (k == 0) or d == 0.0  # p = 0 exactly only without b's (or in underflow, where dp/dt = 0 too)


@PROFILE
@given(n=st.integers(2, 10**12), data=st.data(), t=st.floats(-50, 50))
def test_monotone_in_k(n, data, t):
    k = data.draw(st.integers(min_value=0, max_value=n - 1))
    assert pooled_weight(n, k + 1, t) >= pooled_weight(n, k, t)


@PROFILE
@given(n=st.integers(2, 10**12), data=st.data(), t=st.floats(-50, 50), dt=st.floats(1e-6, 10))
def test_monotone_in_t(n, data, t, dt):
    k = data.draw(st.integers(min_value=1, max_value=n - 1))
    assert pooled_weight(n, k, t + dt) >= pooled_weight(n, k, t)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    theta=st.lists(st.floats(-2, 2), min_size=2, max_size=2),
    u=st.lists(st.floats(-3, 3), min_size=2, max_size=2),
    mean=st.floats(1.5, 20),
)
def test_gradients_match_finite_differences(theta, u, mean):
    g = Geometric(mean)
    theta, u = np.array(theta), np.array(u)
    r = population(theta, u, Data(g, tol=1e-13))
    h = 1e-5
    for i in range(2):
        e = np.zeros(2)
        e[i] = h
        d_theta = (
            population(theta + e, u, Data(g, tol=1e-13)).loss - population(theta - e, u, Data(g, tol=1e-13)).loss
        ) / (2 * h)
        d_u = (
            population(theta, u + e, Data(g, tol=1e-13)).loss - population(theta, u - e, Data(g, tol=1e-13)).loss
        ) / (2 * h)
        assert abs(r.grad_theta[i] - d_theta) < 1e-7
        assert abs(r.grad_u[i] - d_u) < 1e-7
