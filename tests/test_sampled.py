"""Tests of lagtheory.sampled: mini-batch SGD on the torch model.

Independent references: the exact population gradient of
lagtheory.population (numpy closed forms of Lemma lem-gradients, summed over
lengths) against the mean of many autograd mini-batch gradients, with a
tolerance from the central limit theorem estimated from the sample variance;
the first SGD step from (0, 0) against the hand-derived per-string gradients
on the same batch; the length sampler against the closed-form pmf.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lagtheory.counts import BinomialCount, UniformCount
from lagtheory.data import Data
from lagtheory.lengths import Geometric, PowerLaw
from lagtheory.model import ShallowTransformer
from lagtheory.population import population
from lagtheory.sampled import DataSampler, batch_loss, run_sampled
from lagtheory.schedules import Phase, three_phase


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny tensors: one thread is ~40x faster than two contending ones on a loaded machine."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


Z = 5.0  # CLT tolerance in standard errors: a false failure has probability < 1e-6 per component


def _batch_gradients(theta, u, sampler, batch_size, batches, seed):
    """Loss and (d/dtheta, d/du) of `batches` independent mini-batches, as rows of a (batches, 5) array."""
    model = ShallowTransformer()
    with torch.no_grad():
        model.theta.copy_(torch.tensor(theta, dtype=torch.float64))
        model.u.copy_(torch.tensor(u, dtype=torch.float64))
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(batches):
        batch = sampler.sample(batch_size, rng)
        model.zero_grad(set_to_none=True)
        loss = batch_loss(model, batch.counts, batch.labels)
        loss.backward()
        rows.append([loss.item(), *model.theta.grad.tolist(), *model.u.grad.tolist()])
    return np.array(rows)


@pytest.mark.parametrize(
    ("lengths", "positives", "prior", "tol"),
    [
        (Geometric(6.0), "one-b", 0.5, 1e-12),
        (PowerLaw(3.5), UniformCount(), 0.3, 1e-6),
        (Geometric(8.0), BinomialCount(0.2), 0.6, 1e-12),
    ],
)
def test_mean_batch_gradient_matches_population(lengths, positives, prior, tol):
    theta, u = (0.2, 1.4), (-0.7, 1.1)
    sampler = DataSampler(Data(lengths, positives, prior=prior, tol=tol))
    rows = _batch_gradients(theta, u, sampler, batch_size=64, batches=400, seed=11)
    exact = population(theta, u, Data(lengths, positives, prior=prior, tol=tol))
    expected = np.array([exact.loss, *exact.grad_theta, *exact.grad_u])
    mean = rows.mean(axis=0)
    standard_error = rows.std(axis=0, ddof=1) / math.sqrt(rows.shape[0])
    # Bias of the sampler: pi restricted to n <= N (N = sampler.truncation_length; none for a
    # geometric law). For a per-string quantity bounded by b(n): |E_pi - E_trunc| <= E[b; n > N]
    # + P(n > N) max_(n <= N) b(n). Bounds b: loss <= softplus(max|u|) <= 2, |d/du| <= 1,
    # |d/dtheta| <= |w| log(n) / 4. Plus the population's own truncation error.
    if sampler.truncation_length is None:
        bias = np.zeros(5)
    else:
        N = sampler.truncation_length
        mass, log_mass = lengths.tail_mass_bound(N), lengths.tail_log_moment_bound(N)
        w = u[1] - u[0]
        bias = np.array([4 * mass, *[w / 4 * (log_mass + math.log(N) * mass)] * 2, 2 * mass, 2 * mass])
    bias_bound = bias + exact.error_bound
    assert np.all(standard_error > 0)
    assert np.all(np.abs(mean - expected) <= Z * standard_error + bias_bound), (mean, expected, standard_error)


def test_geometric_lengths_follow_pmf():
    lengths = Geometric(4.0)
    draws = DataSampler(Data(lengths)).sample_lengths(200_000, np.random.default_rng(3))
    for n in range(1, 8):
        expected = 0.25 * 0.75 ** (n - 1)  # pi(n) = q (1 - q)^(n - 1), q = 1/4
        observed = np.mean(draws == n)
        assert abs(observed - expected) <= Z * math.sqrt(expected * (1 - expected) / draws.size)
    assert draws.min() >= 1


def test_power_law_lengths_follow_pmf_and_stay_in_truncated_support():
    lengths = PowerLaw(3.0)
    sampler = DataSampler(Data(lengths, tol=1e-8))
    draws = sampler.sample_lengths(200_000, np.random.default_rng(4))
    zeta3 = 1.2020569031595942  # Apery's constant
    for n in range(1, 6):
        expected = n**-3 / zeta3
        observed = np.mean(draws == n)
        assert abs(observed - expected) <= Z * math.sqrt(expected * (1 - expected) / draws.size)
    assert draws.max() <= sampler.truncation_length
    # the truncation length is the smallest N with the proven tail bound N^-2 / (2 zeta(3)) <= tol
    N = sampler.truncation_length
    assert N**-2 / (2 * zeta3) <= 1e-8 < (N - 1) ** -2 / (2 * zeta3)


def test_uniform_counts_are_uniform():
    sampler = DataSampler(Data(Geometric(3.0), UniformCount(), prior=0.999))
    n = np.full(60_000, 5, dtype=np.int64)
    k = sampler.sample_counts(n, np.random.default_rng(5))
    for value in range(1, 6):
        assert abs(np.mean(k == value) - 0.2) <= Z * math.sqrt(0.2 * 0.8 / k.size)
    assert set(np.unique(k)) == {1, 2, 3, 4, 5}


def test_first_output_step_from_zero_matches_hand_gradient():
    """At theta = 0, u = 0: f = 0, sigma(0) = 1/2, p = k/n. Per string, d l/d u_a is
    1/2 for a negative and -(1 - k/n)/2 for a positive, d l/d u_b is -(k/n)/2 for a
    positive and 0 for a negative; the step is -eta times the batch mean."""
    lengths, eta, size, seed = Geometric(5.0), 0.7, 32, 21
    batch = DataSampler(Data(lengths)).sample(size, np.random.default_rng(seed))
    a, b = batch.counts[:, 0].numpy(), batch.counts[:, 1].numpy()
    positive = batch.labels.numpy() > 0
    ratio = b / (a + b)
    grad_ua = np.where(positive, -(1 - ratio) / 2, 0.5).mean()
    grad_ub = np.where(positive, -ratio / 2, 0.0).mean()
    run = run_sampled([Phase(1, attention_lr=0.0, output_lr=eta)], Data(lengths), size, seed)
    np.testing.assert_allclose(run.u[1], [-eta * grad_ua, -eta * grad_ub], rtol=0, atol=1e-15)
    assert np.all(run.theta == 0.0)
    assert run.loss[0] == pytest.approx(math.log(2), abs=1e-15)


@pytest.mark.parametrize("group", ["attention", "joint"])
def test_attention_and_joint_steps_match_hand_gradient(group):
    """At theta = 0 (p = k/n) and u = (u_a, u_b), w = u_b - u_a, f = u_a + w p: per positive
    string d l/d t = -w sigma(-f) log(n) p (1 - p) (Lemma lem-gradients), and since
    t = theta_b - theta_a, d l/d theta = (-d l/dt, d l/dt); negatives do not depend on theta.
    d l/d u_a is sigma(u_a) for a negative and -sigma(-f)(1 - p) for a positive; d l/d u_b is
    -sigma(-f) p for a positive. One step moves each trained group by -eta times the batch mean."""
    lengths, u0, eta, size, seed = Geometric(7.0), (-0.3, 0.8), 2.5, 40, 5
    batch = DataSampler(Data(lengths)).sample(size, np.random.default_rng(seed))
    a, b = batch.counts[:, 0].numpy(), batch.counts[:, 1].numpy()
    positive = batch.labels.numpy() > 0
    n, p = a + b, b / (a + b)
    w = u0[1] - u0[0]
    miss = 1 / (1 + np.exp(u0[0] + w * p))  # sigma(-f)
    grad_t = np.where(positive, -w * miss * np.log(n) * p * (1 - p), 0.0).mean()
    grad_ua = np.where(positive, -miss * (1 - p), 1 / (1 + np.exp(-u0[0]))).mean()
    grad_ub = np.where(positive, -miss * p, 0.0).mean()
    phase = Phase(1, attention_lr=eta, output_lr=eta if group == "joint" else 0.0)
    run = run_sampled([phase], Data(lengths), size, seed, u0=u0)
    np.testing.assert_allclose(run.theta[1], [eta * grad_t, -eta * grad_t], rtol=0, atol=1e-14)
    expected_u = np.array(u0) - (eta * np.array([grad_ua, grad_ub]) if group == "joint" else 0.0)
    np.testing.assert_allclose(run.u[1], expected_u, rtol=0, atol=1e-14)


def test_same_seed_same_trajectory_and_other_seed_differs():
    phases = three_phase(eta1=1.0, eta2=50.0, steps3=5, lr3=2.0)
    first = run_sampled(phases, Data(Geometric(10.0)), 64, seed=7)
    second = run_sampled(phases, Data(Geometric(10.0)), 64, seed=7)
    other = run_sampled(phases, Data(Geometric(10.0)), 64, seed=8)
    for name in ("theta", "u", "loss", "horizon", "recognises"):
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name))
    assert not np.array_equal(first.u, other.u)
    assert first.theta.shape == (8, 2) and first.loss.shape == (8,)
    assert first.phase_of_step == ["output", "attention"] + ["output"] * 5


def test_frozen_groups_do_not_move():
    run = run_sampled(three_phase(1.0, 50.0, 3, 1.0), Data(Geometric(10.0)), 16, seed=1)
    assert np.array_equal(run.u[1], run.u[2])  # the attention step leaves u alone
    assert np.array_equal(run.theta[0], run.theta[1])  # the output step leaves theta alone
    assert np.all(run.theta[2:] == run.theta[2])  # phase 3 freezes theta


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"batch_size": 2.5}, TypeError, "batch_size"),
        ({"batch_size": True}, TypeError, "batch_size"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": "0"}, TypeError, "seed"),
        ({"data": Geometric(5.0)}, TypeError, "data"),
        ({"phases": []}, ValueError, "phases"),
        ({"theta0": (0.0, 0.0, 0.0)}, ValueError, "theta0"),
        ({"u0": (0.0, math.nan)}, ValueError, "u0"),
        ({"scaling": "sqrt"}, ValueError, "scaling"),
        ({"max_length": 0}, ValueError, "max_length"),
    ],
)
def test_bad_arguments_raise_naming_the_argument(kwargs, error, name):
    arguments = {"phases": three_phase(1.0, 10.0, 1, 1.0), "data": Data(Geometric(5.0)), "batch_size": 8, "seed": 0}
    arguments.update(kwargs)
    with pytest.raises(error, match=name):
        run_sampled(**arguments)


def test_sampler_rejects_bad_rng_and_batch_size():
    sampler = DataSampler(Data(Geometric(5.0)))
    with pytest.raises(TypeError, match="rng"):
        sampler.sample(4, 0)
    with pytest.raises(ValueError, match="batch_size"):
        sampler.sample(0, np.random.default_rng(0))
