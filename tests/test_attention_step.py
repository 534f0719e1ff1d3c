"""Closed forms of the first steps from uniform attention (lagtheory.attention_step; book eq. eq-phase1,
eq-phase2, Theorem thm-one-step, Proposition prop-first), each against an independent path: a closed-form
series, the generic population gradient, mpmath, or finite differences of a loss written out here."""

import math

import mpmath
import numpy as np
import pytest
from scipy.special import expit, gammaln, zeta

from lagtheory import BinomialCount, Data, Geometric, PowerLaw, population
from lagtheory.attention_step import attention_factor, first_marker_factor, mean_b_fraction, phase_one_output

# (law, tol for one b, tol for k uniform on 1..n): the table with several b's has N^2 / 2 rows, and heavy
# tails need a long N, so the looser tolerances keep the tables small
LAWS = [
    (Geometric(10.0), 1e-13, 1e-13),
    (Geometric(3.0), 1e-13, 1e-13),
    (PowerLaw(4.0), 1e-12, 1e-9),
    (PowerLaw(2.5), 1e-9, 1e-5),
]


def m_one_b(law):
    """E[1/n]: q log(1/q) / (1 - q) for geometric lengths, zeta(s + 1) / zeta(s) for the power law."""
    if isinstance(law, Geometric):
        q = 1 / law.mean
        return q * math.log(1 / q) / (1 - q)
    return zeta(law.exponent + 1) / zeta(law.exponent)


@pytest.mark.parametrize("law,tol_one,tol_uniform", LAWS)
def test_mean_b_fraction_closed_forms(law, tol_one, tol_uniform):
    m = m_one_b(law)
    assert mean_b_fraction(Data(law, "one-b", tol=tol_one)) == pytest.approx(m, abs=2 * tol_one)
    # k uniform on 1..n: E[k/n | n] = (n + 1) / (2n), so m = 1/2 + E[1/n] / 2
    assert mean_b_fraction(Data(law, "uniform", tol=tol_uniform)) == pytest.approx(0.5 + m / 2, abs=2 * tol_uniform)


@pytest.mark.parametrize("positives", ["one-b", "uniform", BinomialCount(0.3)])
@pytest.mark.parametrize("prior", [0.5, 0.3, 0.8])
def test_phase_one_output_is_one_gradient_step(positives, prior):
    law = Geometric(4.0)
    eta1 = 1.7
    step = -eta1 * population((0.0, 0.0), (0.0, 0.0), Data(law, positives, prior=prior, tol=1e-13)).grad_u
    np.testing.assert_allclose(
        phase_one_output(eta1, Data(law, positives, prior=prior, tol=1e-13)), step, rtol=0, atol=1e-12
    )


def test_phase_one_output_balanced_form():
    law = Geometric(10.0)
    m = m_one_b(law)
    np.testing.assert_allclose(
        phase_one_output(2.0, Data(law)), 2.0 * m / 4 * np.array([-1.0, 1.0]), rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("law", [Geometric(10.0), PowerLaw(4.0)])
@pytest.mark.parametrize("positives", ["one-b", "uniform", BinomialCount(0.3)])
def test_attention_factor_is_the_attention_gradient_over_w(law, positives):
    rng = np.random.default_rng(3)
    layers = rng.normal(0, 2, size=(5, 2))
    # several b's: a table of N^2 / 2 rows, so a looser tol for the power law keeps it small
    tol = 1e-12 if isinstance(law, Geometric) or positives == "one-b" else 1e-8
    values = attention_factor(layers, Data(law, positives, tol=tol))
    assert values.shape == (5,)
    for u, value in zip(layers, values, strict=True):
        state = population((0.0, 0.0), u, Data(law, positives, prior=0.5, tol=tol / 10))
        w = u[1] - u[0]
        # dL/dt = -prior w G(u) (lem-gradients at t = 0): G errs by at most tol, grad_t by tol / 10
        assert value == pytest.approx(-state.grad_t / (0.5 * w), abs=tol / 5 / abs(w) + 2 * tol)
        assert attention_factor(u, Data(law, positives, tol=tol)) == pytest.approx(
            value, rel=1e-14
        )  # one layer or many


def test_attention_factor_against_mpmath():
    q = 0.1
    u_a, u_b = -0.3, 0.9
    w = u_b - u_a
    mpmath.mp.dps = 30
    reference = mpmath.nsum(
        lambda n: q * (1 - q) ** (n - 1) * mpmath.log(n) * (n - 1) / n**2 / (1 + mpmath.exp(u_a + w / n)),
        [2, mpmath.inf],
    )
    assert attention_factor((u_a, u_b), Data(Geometric(10.0), tol=1e-14)) == pytest.approx(float(reference), abs=1e-13)


def test_attention_factor_bounds_at_zero():
    # G(0) = Gamma / 2 with Gamma = E[log(n) (n - 1) / n^2]: sigma(0) = 1/2
    n = np.arange(1, 2000, dtype=float)
    pi = 0.1 * 0.9 ** (n - 1)
    gamma = float(pi @ (np.log(n) * (n - 1) / n**2))
    assert attention_factor((0.0, 0.0), Data(Geometric(10.0))) == pytest.approx(gamma / 2, abs=1e-12)


def first_loss(s, u, q, N):
    """Population loss of FIRST at theta = 0 with position-1 score s, written from prop-first: position 1 has
    weight n^s / (n^s + n - 1), the others 1 / (n^s + n - 1); j ~ Bin(n - 1, 1/2) b's after position 1."""
    total = 0.0
    for n in range(1, N + 1):
        pi = q * (1 - q) ** (n - 1)
        if n == 1:
            total += 0.5 * pi * (math.log1p(math.exp(-u[1])) + math.log1p(math.exp(u[0])))
            continue
        j = np.arange(n, dtype=float)
        log_binomial = gammaln(n) - gammaln(j + 1) - gammaln(n - j) - (n - 1) * math.log(2)
        first = n**s / (n**s + n - 1)
        h_pos = first + (1 - first) * j / (n - 1)  # x_1 = b
        h_neg = (1 - first) * j / (n - 1)  # x_1 = a
        f_pos = u[0] * (1 - h_pos) + u[1] * h_pos
        f_neg = u[0] * (1 - h_neg) + u[1] * h_neg
        total += 0.5 * pi * float(np.exp(log_binomial) @ (np.logaddexp(0, -f_pos) + np.logaddexp(0, f_neg)))
    return total


@pytest.mark.parametrize("u", [(-0.3, 0.3), (-1.0, 2.0), (0.5, -0.2)])
def test_first_marker_factor_against_finite_differences(u):
    law = Geometric(4.0)
    step = 1e-5
    derivative = (first_loss(step, u, 0.25, 200) - first_loss(-step, u, 0.25, 200)) / (2 * step)
    w = u[1] - u[0]
    assert -derivative / (w / 2) == pytest.approx(first_marker_factor(u, law, tol=1e-13), abs=1e-8)


def test_first_marker_factor_sign():
    # sigma > 0, log n > 0 for n >= 2 and the bracket is a convex combination of two positive numbers
    assert first_marker_factor((-0.1, 0.1), Geometric(10.0)) > 0
    assert expit(0.0) == 0.5
