"""Tests of lagtheory.experiments.tasks.sequences.icl (in-context linear regression).

Expected values are derived independently of the code under test: the
forward pass by hand in dimension 1 (derivation in the comments), labels by a
Python loop, least squares against numpy's lstsq, the optimal step by
numerical minimisation, and the population facts below by hand, compared with
Monte Carlo averages.

Population facts (x, x_q ~ N(0, I_D), beta ~ N(0, I/D), y = <beta, x>,
g = (1/m) sum_i y_i x_i), from Isserlis' theorem
E[(x.a)(x.b) x x^T] = (a.b) I + a b^T + b a^T:
* E[g | beta] = beta and Cov[g | beta] = (|beta|^2 I + beta beta^T)/m, so
  E|g|^2 = 1 + (D+1)/m and E[<g, beta>] = 1; hence the error of eta g^T x_q is
  eta^2 (1 + (D+1)/m) - 2 eta + 1.
* Gradient at K = 0 (there y_hat = 0): dL/dK = -2 E[(1/m) sum_i <w, z_i> z_i x_q^T y_q]
  = -2 E[<w, z> z beta^T] = -(2/D) [w_y I ; w_x^T] (rows x, then the label row).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from numpy.typing import ArrayLike
from scipy.optimize import minimize_scalar

from lagtheory.experiments.engine import cells as E
from lagtheory.experiments.tasks.sequences import icl as I
from lagtheory.experiments.tasks.sequences.driver import STREAM_CHUNK
from lagtheory.schedules import AVAILABLE_SCHEDULES


def prompt(inputs: list[list[float]], labels: list[float], query: list[float]) -> I.PromptBatch:
    """One hand-made prompt (a batch of one); beta and query_label are placeholders."""
    x = torch.tensor([inputs], dtype=torch.float64)
    m = x.shape[1]
    return I.prompt_batch(
        x,
        torch.tensor([labels], dtype=torch.float64),
        torch.ones(1, m, dtype=torch.bool),
        torch.tensor([float(m)], dtype=torch.float64),
        torch.tensor([query], dtype=torch.float64),
        torch.zeros(1, dtype=torch.float64),
        torch.zeros(1, x.shape[2], dtype=torch.float64),
    )


def model_with(key_query: ArrayLike, value: ArrayLike) -> I.LinearSelfAttention:
    return I.LinearSelfAttention.with_parameters(key_query, value)


@pytest.mark.parametrize(
    ("key_query", "value", "named"),
    [
        ([[1.0], [0.0]], [1.0], "value"),
        ([[1.0]], [1.0, 0.0], "key_query"),
        ([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0], "key_query"),
    ],
)
def test_with_parameters_refuses_shapes_that_do_not_fit(key_query, value, named) -> None:
    with pytest.raises(ValueError, match=named):
        I.LinearSelfAttention.with_parameters(key_query, value)


def test_with_parameters_copies_the_parameters() -> None:
    key_query = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    model = I.LinearSelfAttention.with_parameters(key_query, [7.0, 8.0, 9.0])
    key_query[0, 0] = -1.0  # the layer holds a copy
    assert model.key_query.tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] and model.value.tolist() == [7.0, 8.0, 9.0]
    assert model.key_query.dtype == torch.float64 and model.dim == 2


# -- data ------------------------------------------------------------------


def test_prompt_shapes_padding_and_labels() -> None:
    batch = I.sample_prompts(np.random.default_rng([1, 2]), 30, 3, 9, 4)
    assert batch.inputs.shape == (30, 9, 4) and batch.labels.shape == (30, 9)
    assert batch.query.shape == (30, 4) and batch.query_label.shape == (30,) and batch.beta.shape == (30, 4)
    counts = batch.counts.long()
    assert counts.min() >= 3 and counts.max() <= 9
    assert torch.equal(batch.mask.sum(dim=1), counts)
    assert torch.all(batch.inputs[~batch.mask] == 0) and torch.all(batch.labels[~batch.mask] == 0)
    beta, inputs = batch.beta.numpy(), batch.inputs.numpy()
    for b in range(30):
        for i in range(int(counts[b])):
            by_hand = sum(beta[b, j] * inputs[b, i, j] for j in range(4))
            assert math.isclose(float(batch.labels[b, i]), by_hand, rel_tol=1e-12, abs_tol=1e-14)
        by_hand = sum(beta[b, j] * float(batch.query[b, j]) for j in range(4))
        assert math.isclose(float(batch.query_label[b]), by_hand, rel_tol=1e-12, abs_tol=1e-14)


def test_prompts_are_determined_by_seed_and_step() -> None:
    first = I.sample_prompts(np.random.default_rng([4, 9]), 8, 2, 40, 5)
    again = I.sample_prompts(np.random.default_rng([4, 9]), 8, 2, 40, 5)
    other = I.sample_prompts(np.random.default_rng([4, 8]), 8, 2, 40, 5)
    for name in ("inputs", "labels", "mask", "counts", "query", "query_label", "beta"):
        assert torch.equal(getattr(first, name), getattr(again, name))
    assert not torch.equal(first.inputs, other.inputs)


def test_task_vector_has_covariance_identity_over_dim() -> None:
    beta = I.sample_prompts(np.random.default_rng([0, 0]), 20000, 1, 1, 4).beta.numpy()
    assert np.allclose(np.cov(beta.T), np.eye(4) / 4, atol=0.01)


# -- model -----------------------------------------------------------------


def test_forward_matches_hand_computation_in_dimension_one() -> None:
    # D = 1, K = (a, b) = (2, -1), w = (c, d) = (0.5, 3), pairs (1, 2), (-2, 0.5), x_q = 3:
    #   pair 1: <w, z> = 0.5 + 6 = 6.5, <z, K x_q> = (2 - 2) * 3 = 0
    #   pair 2: <w, z> = -1 + 1.5 = 0.5, <z, K x_q> = (-4 - 0.5) * 3 = -13.5
    #   y_hat = (6.5 * 0 + 0.5 * -13.5) / 2 = -3.375
    model = model_with([[2.0], [-1.0]], [0.5, 3.0])
    assert float(model(prompt([[1.0], [-2.0]], [2.0, 0.5], [3.0])).detach()) == -3.375


def test_padding_does_not_change_the_prediction() -> None:
    model = model_with(np.random.default_rng(0).standard_normal((4, 3)), np.random.default_rng(1).standard_normal(4))
    batch = I.sample_prompts(np.random.default_rng([0, 5]), 6, 2, 8, 3)
    with torch.no_grad():
        padded = model(batch)
        for b in range(6):
            m = int(batch.counts[b])
            single = prompt(batch.inputs[b, :m].tolist(), batch.labels[b, :m].tolist(), batch.query[b].tolist())
            assert math.isclose(float(model(single)), float(padded[b]), rel_tol=1e-12, abs_tol=1e-14)


def test_gd_parameters_reproduce_one_step_gd() -> None:
    # K = [eta I ; 0], w = e_label: y_hat = (1/m) sum_i y_i <x_i, eta x_q>
    dim, eta = 3, 0.7
    model = model_with((np.vstack([eta * np.eye(dim), np.zeros((1, dim))])).tolist(), [0.0, 0.0, 0.0, 1.0])
    batch = I.sample_prompts(np.random.default_rng([2, 3]), 10, 2, 12, dim)
    by_loop = []
    for b in range(10):
        m = int(batch.counts[b])
        x, y, q = batch.inputs[b, :m].numpy(), batch.labels[b, :m].numpy(), batch.query[b].numpy()
        by_loop.append(eta / m * sum(y[i] * float(x[i] @ q) for i in range(m)))
    with torch.no_grad():
        assert np.allclose(model(batch).numpy(), by_loop, rtol=1e-12, atol=1e-14)
    assert np.allclose(I.one_step_gd_prediction(batch, eta).numpy(), by_loop, rtol=1e-12, atol=1e-14)
    assert np.allclose(model.effective_matrix(), eta * np.eye(dim), rtol=0, atol=1e-15)


def test_effective_matrix_is_the_label_odd_part() -> None:
    # (y_hat(y) - y_hat(-y)) / 2, the label-odd part, equals g^T Gamma x_q
    model = model_with(np.random.default_rng(5).standard_normal((4, 3)), np.random.default_rng(6).standard_normal(4))
    batch = I.sample_prompts(np.random.default_rng([1, 1]), 20, 2, 10, 3)
    flipped = I.prompt_batch(
        batch.inputs, -batch.labels, batch.mask, batch.counts, batch.query, batch.query_label, batch.beta
    )
    with torch.no_grad():
        odd = ((model(batch) - model(flipped)) / 2).numpy()
    g = (batch.labels.unsqueeze(2) * batch.inputs).sum(dim=1).numpy() / batch.counts.numpy()[:, None]
    label_odd = np.einsum("bi,ij,bj->b", g, model.effective_matrix(), batch.query.numpy())
    assert np.allclose(odd, label_odd, rtol=1e-10, atol=1e-12)


def loss_gradients(model: I.LinearSelfAttention, batch: I.PromptBatch) -> tuple[torch.Tensor, torch.Tensor]:
    loss = ((model(batch) - batch.query_label) ** 2).mean()
    key_query, value = torch.autograd.grad(loss, [model.key_query, model.value])
    return key_query, value


def test_each_factor_has_exactly_zero_gradient_when_the_other_is_zero() -> None:
    batch = I.sample_prompts(np.random.default_rng([3, 3]), 64, 2, 40, 4)
    model = I.LinearSelfAttention(4)
    with torch.no_grad():
        model.key_query.copy_(torch.randn(5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1)))
    key_query_grad, value_grad = loss_gradients(model, batch)
    assert torch.equal(key_query_grad, torch.zeros(5, 4, dtype=torch.float64))  # w = 0
    assert value_grad.abs().max() > 0.01
    model = I.LinearSelfAttention(4)
    with torch.no_grad():
        model.value.copy_(torch.randn(5, dtype=torch.float64, generator=torch.Generator().manual_seed(1)))
    key_query_grad, value_grad = loss_gradients(model, batch)
    assert torch.equal(value_grad, torch.zeros(5, dtype=torch.float64))  # K = 0
    assert key_query_grad.abs().max() > 0.01


def test_population_attention_gradient_at_zero_key_query() -> None:
    dim = 3
    value = [0.8, -0.5, 0.3, 0.9]  # (w_x, w_y)
    model = model_with(np.zeros((dim + 1, dim)).tolist(), value)
    batches = [I.sample_prompts(np.random.default_rng([55, chunk]), 4000, 2, 40, dim) for chunk in range(20)]
    grads = np.array([loss_gradients(model, batch)[0].numpy() for batch in batches])
    mean, error = grads.mean(axis=0), grads.std(axis=0, ddof=1) / math.sqrt(20)
    expected = -(2 / dim) * np.vstack([value[-1] * np.eye(dim), np.array(value[:-1])[None, :]])
    assert np.all(np.abs(mean - expected) <= 5 * error)
    # tight enough to tell the factor 2/D from 1/D on the diagonal and the sign of each label-row entry
    assert 5 * error[:-1].max() < 0.2 * abs(expected).max()
    assert np.all(5 * error[-1] < abs(expected[-1]))


def test_one_step_gd_error_closed_form_against_monte_carlo() -> None:
    dim, eta = 4, 0.6
    for m in (3, 20):
        errors = []
        for chunk in range(10):
            batch = I.sample_prompts(np.random.default_rng([66, 100 * m + chunk]), 4000, m, m, dim)
            errors.append(float(((I.one_step_gd_prediction(batch, eta) - batch.query_label) ** 2).mean()))
        mean, error = np.mean(errors), np.std(errors, ddof=1) / math.sqrt(10)
        expected = eta**2 * (1 + (dim + 1) / m) - 2 * eta + 1
        assert abs(mean - expected) <= 5 * error
        assert math.isclose(float(I.one_step_gd_error(eta, m, dim)), expected, rel_tol=1e-14)


def test_optimal_step() -> None:
    # a single context size m: eta = m / (m + D + 1)
    assert math.isclose(I.optimal_step(5, 12, 12), 12 / 18, rel_tol=1e-14)
    # a range: the minimiser of the average error over m, found numerically
    contexts = np.arange(2, 41)
    best = minimize_scalar(
        lambda eta: float(np.mean(I.one_step_gd_error(eta, contexts, 5))),
        bounds=(0, 1),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert math.isclose(I.optimal_step(5, 2, 40), best.x, rel_tol=1e-7)


def test_least_squares_prediction() -> None:
    batch = I.sample_prompts(np.random.default_rng([8, 8]), 40, 1, 8, 4)
    prediction = I.least_squares_prediction(batch).numpy()
    for b in range(40):
        m = int(batch.counts[b])
        x, y = batch.inputs[b, :m].numpy(), batch.labels[b, :m].numpy()
        beta_hat = np.linalg.lstsq(x, y, rcond=None)[0]  # minimum-norm solution
        assert math.isclose(prediction[b], float(beta_hat @ batch.query[b].numpy()), rel_tol=1e-9, abs_tol=1e-12)
        if m >= 4:  # exact recovery without noise
            assert math.isclose(prediction[b], float(batch.query_label[b]), rel_tol=1e-9, abs_tol=1e-12)


# -- runs ------------------------------------------------------------------


SMALL = I.ICLSetting(train_min=2, train_max=8, test_sizes=(5, 50), test_size=8, test_seed=3, dim=3)


def _config(**changes) -> E.TrainingConfig:
    values = {"steps": 6, "attention_lr": 0.2, "output_lr": 0.2, "warm_steps": 2, "big_step": 2.0, "batch_size": 5}
    values.update(changes)
    return E.TrainingConfig(**values, attention_init="random")


def test_every_schedule_sees_the_same_first_batch_and_runs_are_deterministic() -> None:
    task = I.ICLTask(SMALL)
    runs = E.run_cell(task, _config(), AVAILABLE_SCHEDULES, (2,))
    assert len(set(runs.losses[:, 0, 0].tolist())) == 1
    lead, lag = AVAILABLE_SCHEDULES.index("lead"), AVAILABLE_SCHEDULES.index("lag")
    again = E.run_cell(task, _config(), ["lead"], (2,))
    np.testing.assert_allclose(again.losses[0], runs.losses[lead], rtol=1e-12, atol=0)
    assert runs.metrics["test_errors"].shape == (len(AVAILABLE_SCHEDULES), 1, 2)
    # lead freezes the output group for warm_steps steps, lag the attention group
    assert np.all(runs.traces["label_value"][lead, 0, :3] == runs.traces["label_value"][lead, 0, 0])
    assert np.all(runs.traces["key_query_trace"][lag, 0, :3] == runs.traces["key_query_trace"][lag, 0, 0])
    for batch, m in zip(task.test_batches(), SMALL.test_sizes, strict=True):
        assert batch.inputs.shape == (8, m, 3) and torch.all(batch.counts == m)


def test_run_takes_plain_sgd_steps_on_the_prompts_of_each_step() -> None:
    """Re-implementation of three joint SGD steps, by hand: p <- p - lr * grad on the seed's prompts of each step
    (drawn from SeedSequence([seed, 1]), STREAM_CHUNK steps at a time), from the seed's initial draws (SeedSequence([seed, 0]))."""
    task = I.ICLTask(I.ICLSetting(train_min=2, train_max=8, test_sizes=(4, 20), test_size=2, test_seed=3, dim=2))
    result = E.run_cell(task, _config(steps=3, warm_steps=1), ["joint"], (6,))
    draws = np.random.default_rng(np.random.SeedSequence([6, 0]))
    model = I.LinearSelfAttention(2)
    with torch.no_grad():
        model.value.copy_(torch.from_numpy(0.1 * draws.standard_normal(3)))
        model.key_query.copy_(torch.from_numpy(0.1 * draws.standard_normal((3, 2))))
    chunk = I.sample_prompts(np.random.default_rng(np.random.SeedSequence([6, 1])), (STREAM_CHUNK, 5), 2, 8, 2)
    for step in range(3):
        prompts = I.PromptBatch(*(getattr(chunk, f.name)[step] for f in dataclasses.fields(I.PromptBatch)))
        loss = ((model(prompts) - prompts.query_label) ** 2).mean()
        assert math.isclose(result.losses[0, 0, step], float(loss.detach()), rel_tol=1e-12)
        key_query_grad, value_grad = torch.autograd.grad(loss, [model.key_query, model.value])
        with torch.no_grad():
            model.key_query -= 0.2 * key_query_grad
            model.value -= 0.2 * value_grad
    assert np.allclose(result.final["key_query"][0, 0], model.key_query.detach().numpy(), rtol=1e-12, atol=0)


# -- bad input -------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"min_context": 0}, ValueError, "min_context"),
        ({"min_context": 5, "max_context": 4}, ValueError, "max_context"),
        ({"dim": 0}, ValueError, "dim"),
        ({"dim": 2.0}, TypeError, "dim"),
    ],
)
def test_sample_prompts_rejects_bad_arguments(kwargs: dict, error: type, match: str) -> None:
    arguments = {"batch_size": 2, "min_context": 2, "max_context": 4, "dim": 3} | kwargs
    with pytest.raises(error, match=match):
        I.sample_prompts(np.random.default_rng(0), **arguments)


def test_other_bad_input() -> None:
    batch = I.sample_prompts(np.random.default_rng(0), 2, 2, 4, 3)
    with pytest.raises(ValueError, match="step_size"):
        I.one_step_gd_prediction(batch, float("inf"))
    with pytest.raises(ValueError, match="context"):
        I.one_step_gd_error(0.5, 0, 3)
    with pytest.raises(ValueError, match="dimension"):
        I.LinearSelfAttention(4)(batch)
    with pytest.raises(TypeError, match="batch"):
        I.LinearSelfAttention(3)(batch.inputs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_context"):
        I.optimal_step(3, 5, 2)
