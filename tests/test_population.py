"""Exact population loss and gradients (book eq. eq-population-loss, eq-grad-u, eq-grad-t),
checked against an independent torch-autograd implementation and closed forms."""

import math

import numpy as np
import pytest
import torch

from lagtheory import BinomialCount, Data, Geometric, PowerLaw, UniformCount, population


def torch_population(theta, u, lengths, N, prior=0.5, counts="one-b", scaling="log"):
    """Independent implementation: explicit sum written from the definitions, differentiated by autograd."""
    theta = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
    u = torch.tensor(u, dtype=torch.float64, requires_grad=True)
    loss = (1 - prior) * torch.nn.functional.softplus(u[0])
    for n in range(1, N + 1):
        pi = float(lengths.pmf(n))
        if counts == "one-b":
            ks, kappas = [1], [1.0]
        elif counts == "uniform":
            ks, kappas = range(1, n + 1), [1.0 / n] * n
        else:
            q = counts.q
            norm = 1 - (1 - q) ** n
            ks = range(1, n + 1)
            kappas = [math.comb(n, k) * q**k * (1 - q) ** (n - k) / norm for k in ks]
        for k, kappa in zip(ks, kappas, strict=False):
            # attention weights of the two token types, from the scores directly
            scale = math.log(n) if scaling == "log" else 1.0
            scores = torch.stack([theta[0] * scale, theta[1] * scale])
            logits = scores + torch.log(torch.tensor([float(n - k), float(k)], dtype=torch.float64))
            h = torch.softmax(logits, dim=0) if k < n else torch.tensor([0.0, 1.0], dtype=torch.float64)
            f = u @ h
            loss = loss + prior * pi * kappa * torch.nn.functional.softplus(-f)
    loss.backward()
    return float(loss.detach()), theta.grad.numpy(), u.grad.numpy()


@pytest.mark.parametrize("theta,u", [([0.0, 0.0], [0.0, 0.0]), ([0.3, 1.4], [-0.7, 2.1]), ([1.0, -0.5], [0.4, -1.2])])
def test_against_torch_autograd(theta, u):
    g = Geometric(5.0)
    exact = population(theta, u, Data(g, tol=1e-13))
    loss, g_theta, g_u = torch_population(theta, u, g, exact.truncation_length)
    assert exact.loss == pytest.approx(loss, abs=1e-12)
    np.testing.assert_allclose(exact.grad_theta, g_theta, atol=1e-12)
    np.testing.assert_allclose(exact.grad_u, g_u, atol=1e-12)
    np.testing.assert_allclose(exact.grad_u, g_u, atol=1e-12)


@pytest.mark.parametrize("counts", ["uniform", BinomialCount(0.3)])
def test_general_counts_against_torch(counts):
    g = Geometric(3.0)
    theta, u = [0.1, 0.9], [-0.5, 1.5]
    exact = population(theta, u, Data(g, counts, prior=0.4, tol=1e-10))
    loss, g_theta, g_u = torch_population(theta, u, g, exact.truncation_length, prior=0.4, counts=counts)
    assert exact.loss == pytest.approx(loss, abs=1e-12)
    np.testing.assert_allclose(exact.grad_theta, g_theta, atol=1e-12)
    np.testing.assert_allclose(exact.grad_u, g_u, atol=1e-12)


def test_unscaled_against_torch():
    g = Geometric(4.0)
    exact = population([0.2, 1.1], [-0.3, 0.8], Data(g, tol=1e-12), scaling="none")
    loss, g_theta, g_u = torch_population([0.2, 1.1], [-0.3, 0.8], g, exact.truncation_length, scaling="none")
    assert exact.loss == pytest.approx(loss, abs=1e-12)
    np.testing.assert_allclose(exact.grad_theta, g_theta, atol=1e-12)
    np.testing.assert_allclose(exact.grad_u, g_u, atol=1e-12)


def test_origin_closed_form():
    # at theta = u = 0: L = log 2; grad_u = (m/4, -m/4) with m = E[1/n] = -q log q / (1 - q) for Geometric
    g = Geometric(10.0)
    q = 0.1
    m = -q * math.log(q) / (1 - q)
    r = population([0, 0], [0, 0], Data(g))
    assert r.loss == pytest.approx(math.log(2), abs=1e-12)
    np.testing.assert_allclose(r.grad_u, [m / 4, -m / 4], atol=1e-12)
    assert r.grad_theta[0] == 0.0 and r.grad_theta[1] == 0.0


def test_attention_gradient_vanishes_exactly_when_u_a_equals_u_b():
    r = population([0.4, -0.2], [0.7, 0.7], Data(PowerLaw(3.0), tol=1e-8))
    assert r.grad_theta[0] == 0.0 and r.grad_theta[1] == 0.0


def test_shift_invariance_in_theta():
    a = population([0.0, 1.2], [-1, 2], Data(Geometric(8)))
    b = population([5.0, 6.2], [-1, 2], Data(Geometric(8)))
    assert a.loss == pytest.approx(b.loss, abs=1e-14)


def test_finite_differences():
    g = Geometric(7.0)
    theta, u = np.array([0.2, 0.9]), np.array([-0.4, 1.1])
    r = population(theta, u, Data(g))
    h = 1e-6
    for i in range(2):
        e = np.zeros(2)
        e[i] = h
        d_theta = (population(theta + e, u, Data(g)).loss - population(theta - e, u, Data(g)).loss) / (2 * h)
        d_u = (population(theta, u + e, Data(g)).loss - population(theta, u - e, Data(g)).loss) / (2 * h)
        assert r.grad_theta[i] == pytest.approx(d_theta, abs=1e-8)
        assert r.grad_u[i] == pytest.approx(d_u, abs=1e-8)


def test_truncation_error_is_within_tol():
    g = Geometric(30.0)
    theta, u = [0.0, 0.8], [-2.0, 3.0]
    coarse = population(theta, u, Data(g, tol=1e-6))
    fine = population(theta, u, Data(g, tol=1e-14))
    assert abs(coarse.loss - fine.loss) <= 1e-6
    assert np.all(np.abs(coarse.grad_theta - fine.grad_theta) <= 1e-6)
    assert np.all(np.abs(coarse.grad_u - fine.grad_u) <= 1e-6)
    assert coarse.truncation_length < fine.truncation_length


def test_extreme_parameters_stay_finite():
    r = population([0.0, 1000.0], [-1000.0, 1000.0], Data(Geometric(10.0)))
    assert np.isfinite(r.loss) and np.all(np.isfinite(r.grad_theta)) and np.all(np.isfinite(r.grad_u))


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"theta": [0.0], "u": [0, 0]}, ValueError, "theta must be a vector of length 2"),
        ({"theta": [0.0, np.nan], "u": [0, 0]}, ValueError, "theta must be finite"),
        ({"theta": [0, 0], "u": [0, np.inf]}, ValueError, "u must be finite"),
        ({"theta": [0, 0], "u": [0, 0], "scaling": "exp"}, ValueError, "scaling must be"),
        ({"theta": [0, 0], "u": [0, 0], "tail": "drop"}, ValueError, "tail must be"),
    ],
)
def test_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        population(data=Data(Geometric(5.0)), **kwargs)


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"tol": 0.0}, ValueError, "tol must be"),
        ({"tol": -1.0}, ValueError, "tol must be"),
        ({"prior": 1.0}, ValueError, "prior must lie"),
        ({"positives": "two-b"}, ValueError, "positives must be"),
        ({"lengths": 10}, TypeError, "lengths must be"),
    ],
)
def test_bad_data_is_refused_when_built(kwargs, error, match):
    arguments = {"lengths": Geometric(5.0), **kwargs}
    with pytest.raises(error, match=match):
        Data(**arguments)


def test_prior_and_tol_cannot_be_passed_positionally():
    # population took (..., tol, prior) and the training runs (..., prior, ..., tol), so a
    # positional call could swap them; Data takes both by keyword only, and population its options
    with pytest.raises(TypeError, match="positional"):
        Data(Geometric(5.0), "one-b", 0.3, 1e-10)
    with pytest.raises(TypeError, match="positional"):
        population([0, 0], [0, 0], Data(Geometric(5.0)), "log")
    assert Data(Geometric(5.0), prior=0.3, tol=1e-10) == Data(Geometric(5.0), "one-b", tol=1e-10, prior=0.3)


def test_data_must_be_a_data_value():
    with pytest.raises(TypeError, match=r"data must be a lagtheory\.Data"):
        population([0, 0], [0, 0], Geometric(5.0))


def test_lengths_must_be_a_distribution():
    with pytest.raises(TypeError, match="lengths must be"):
        population([0, 0], [0, 0], Data(10))


def test_uniform_counts_name():
    a = population([0, 1], [-1, 1], Data(Geometric(3), "uniform"))
    b = population([0, 1], [-1, 1], Data(Geometric(3), UniformCount()))
    assert a.loss == b.loss


def test_zero_attention_gradient_prints_without_sign():
    r = population([0, 0], [0.3, 0.3], Data(Geometric(4.0)))
    assert str(r.grad_theta) == "[0. 0.]"
