"""Tests of lagtheory.experiments.tasks.sequences.regression (single-location regression).

Expected values are derived independently of the code under test: the
forward pass by hand on small sequences (derivations in the comments), the
marked token's weight from the closed form n^t / (n^t + n - 1), the
population gradients at the origin by hand (derivation below) and compared
with Monte Carlo averages of torch autograd gradients.

Population gradients at q = 0 (uniform attention, alpha_i = 1/n), for the
squared loss L = E[(f - y)^2] with y = z_J[1], s = (1/n) sum_i z_i[1]:
* at v = 0: f = 0, dL/dv = -2 E[y xbar] with xbar = (1/n) sum_i x_i, and
  E[z_J[1] z_i] = e_1 [i = J], so dL/dv = -2 E[1/n] e_1;
* at v = c e_1: f = c s, df/dq_0 = log(n)/n sum_i c (z_i[1] - s) x_i[0]
  = c marker log(n)/n (y - s), and E[(c s - y)(y - s)] = c/n - c/n - 1 + 1/n,
  so dL/dq_0 = -2 c marker E[log(n)/n (1 - 1/n)].
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from lagtheory.experiments.engine import cells as E
from lagtheory.experiments.tasks.sequences import regression as R
from lagtheory.experiments.tasks.sequences.driver import STREAM_CHUNK
from lagtheory.pooling import pooled_weight
from lagtheory.schedules import AVAILABLE_SCHEDULES


def make_batch(tokens: list[list[list[float]]], lengths: list[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = torch.tensor(tokens, dtype=torch.float64)
    mask = torch.arange(x.shape[1]).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return x, mask, torch.tensor(lengths, dtype=torch.float64)


def model_with(query: list[float], readout: list[float]) -> R.SingleLocationModel:
    model = R.SingleLocationModel(len(query))
    with torch.no_grad():
        model.query.copy_(torch.tensor(query, dtype=torch.float64))
        model.readout.copy_(torch.tensor(readout, dtype=torch.float64))
    return model


# -- data ------------------------------------------------------------------


def test_batch_shapes_and_structure() -> None:
    batch = R.sample_batch(np.random.default_rng([3, 7]), 50, 2, 12, 5, marker=2.5)
    assert batch.tokens.shape == (50, 12, 5) and batch.tokens.dtype == torch.float64
    assert batch.mask.shape == (50, 12) and batch.mask.dtype == torch.bool
    lengths = batch.lengths.long()
    assert lengths.min() >= 2 and lengths.max() <= 12
    assert torch.equal(batch.mask.sum(dim=1), lengths)
    assert torch.all(batch.position < lengths) and torch.all(batch.position >= 0)
    # coordinate 0 is the marker on the hidden position and exactly 0 elsewhere
    expected_key = torch.zeros(50, 12, dtype=torch.float64)
    expected_key[torch.arange(50), batch.position] = 2.5
    assert torch.equal(batch.tokens[:, :, 0], expected_key)
    # padding is zero, real tokens are Gaussian (almost surely nonzero)
    assert torch.all(batch.tokens[~batch.mask] == 0)
    assert torch.all(batch.tokens[:, :, 1:][batch.mask] != 0)
    # the target is coordinate 1 of the marked token, read by a Python loop
    for b in range(50):
        assert batch.target[b] == batch.tokens[b, int(batch.position[b]), 1]


def test_batch_is_determined_by_seed_and_step() -> None:
    first = R.sample_batch(np.random.default_rng([4, 9]), 16, 2, 40, 8)
    again = R.sample_batch(np.random.default_rng([4, 9]), 16, 2, 40, 8)
    other_step = R.sample_batch(np.random.default_rng([4, 10]), 16, 2, 40, 8)
    other_seed = R.sample_batch(np.random.default_rng([5, 9]), 16, 2, 40, 8)
    for name in ("tokens", "mask", "lengths", "position", "target"):
        assert torch.equal(getattr(first, name), getattr(again, name))
    assert not torch.equal(first.tokens, other_step.tokens)
    assert not torch.equal(first.tokens, other_seed.tokens)


def test_lengths_and_positions_cover_their_ranges() -> None:
    batch = R.sample_batch(np.random.default_rng([0, 0]), 4000, 2, 5, 3)
    assert set(batch.lengths.long().tolist()) == {2, 3, 4, 5}
    # J uniform on {0, .., n-1}: for n = 5 every position occurs, each about 1/5 of the time
    positions = batch.position[batch.lengths == 5]
    frequencies = torch.bincount(positions, minlength=5).double() / positions.numel()
    assert torch.all((frequencies - 0.2).abs() < 0.05)


def test_target_reads_value_coordinate_of_marked_token() -> None:
    tokens = torch.tensor([[[1.0, 7.0, 0.5], [0.0, -3.0, 2.0]], [[0.0, 4.0, 1.0], [1.0, 9.0, -1.0]]])
    assert torch.equal(R.target(tokens, torch.tensor([0, 1])), torch.tensor([7.0, 9.0]))


# -- model -----------------------------------------------------------------


def test_forward_matches_hand_computation() -> None:
    # sequence 1, n = 2, q = (1, 0): scores log(2) * (1, 0), weights (2/3, 1/3),
    #   pooled = 2/3 (1, 0.5) + 1/3 (0, -1) = (2/3, 0), f = 0.3 * 2/3 = 0.2
    # sequence 2, n = 1 (one padding slot): weight 1, f = 0.3 * 0 + 2 * 5 = 10
    model = model_with([1.0, 0.0], [0.3, 2.0])
    tokens, mask, lengths = make_batch([[[1.0, 0.5], [0.0, -1.0]], [[0.0, 5.0], [0.0, 0.0]]], [2, 1])
    expected_weights = torch.tensor([[2 / 3, 1 / 3], [1.0, 0.0]], dtype=torch.float64)
    assert torch.allclose(model.attention_weights(tokens, mask, lengths), expected_weights)
    expected_f = torch.tensor([0.2, 10.0], dtype=torch.float64)
    assert torch.allclose(model(tokens, mask, lengths), expected_f, rtol=0, atol=1e-14)


def test_forward_three_tokens_uses_log_length_scaling() -> None:
    # n = 3, q = (0, 1), second coordinates (1, 0, 0): scores log(3) (1, 0, 0),
    # weights (3, 1, 1) / 5; pooled second coordinate = 3/5, first = (1/5) * 2 = 2/5
    # with first coordinates (0, 2, 0); f = 1 * 2/5 + 1 * 3/5 = 1
    model = model_with([0.0, 1.0], [1.0, 1.0])
    tokens, mask, lengths = make_batch([[[0.0, 1.0], [2.0, 0.0], [0.0, 0.0]]], [3])
    expected_weights = torch.tensor([[0.6, 0.2, 0.2]], dtype=torch.float64)
    assert torch.allclose(model.attention_weights(tokens, mask, lengths), expected_weights)
    assert abs(float(model(tokens, mask, lengths).detach()) - 1.0) < 1e-14


@pytest.mark.parametrize("n", [2, 7, 40, 1000])
@pytest.mark.parametrize("t", [-0.5, 0.0, 1.0, 1.7])
def test_marked_weight_is_pooled_weight_when_query_is_on_key(n: int, t: float) -> None:
    # q = (t / marker) e_0: the marked token scores t log n, the others 0
    marker = 2.0
    batch = R.sample_batch(np.random.default_rng([1, n]), 3, n, n, 4, marker=marker)
    model = model_with([t / marker, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0])
    alpha = model.attention_weights(batch.tokens, batch.mask, batch.lengths).detach()
    marked = alpha[torch.arange(3), batch.position]
    closed_form = n**t / (n**t + n - 1)
    assert np.allclose(marked.numpy(), closed_form, rtol=1e-12, atol=0)
    assert np.allclose(marked.numpy(), pooled_weight(n, 1, t), rtol=1e-12, atol=0)


def test_query_gradient_is_exactly_zero_at_zero_readout() -> None:
    batch = R.sample_batch(np.random.default_rng([2, 1]), 64, 2, 40, 6)
    model = R.SingleLocationModel(6)
    with torch.no_grad():
        model.query.copy_(torch.randn(6, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
    loss = ((model(batch.tokens, batch.mask, batch.lengths) - batch.target) ** 2).mean()
    query_grad, readout_grad = torch.autograd.grad(loss, [model.query, model.readout])
    assert torch.equal(query_grad, torch.zeros(6, dtype=torch.float64))
    assert readout_grad.abs().max() > 0.01  # the readout does learn
    # and with a readout along v* the query gradient is not zero
    with torch.no_grad():
        model.readout.copy_(torch.tensor([0.0, 1.0, 0.0, 0.0, 0.0, 0.0]))
    loss = ((model(batch.tokens, batch.mask, batch.lengths) - batch.target) ** 2).mean()
    assert torch.autograd.grad(loss, model.query)[0].abs().max() > 0.01


def monte_carlo_gradients(
    model: R.SingleLocationModel, marker: float, chunks: int = 20
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over chunks of the batch gradient (query, readout)."""
    grads = []
    for chunk in range(chunks):
        batch = R.sample_batch(np.random.default_rng([77, chunk]), 2000, 2, 40, 4, marker=marker)
        loss = ((model(batch.tokens, batch.mask, batch.lengths) - batch.target) ** 2).mean()
        grads.append(torch.cat(torch.autograd.grad(loss, [model.query, model.readout])).numpy())
    grads = np.array(grads)
    return grads.mean(axis=0), grads.std(axis=0, ddof=1) / math.sqrt(chunks)


def test_population_gradients_at_the_origin() -> None:
    n = np.arange(2, 41)
    mean_inverse = np.mean(1.0 / n)
    attention_factor = np.mean(np.log(n) / n * (1 - 1 / n))
    marker, c = 1.5, 0.8
    # v = 0: readout gradient -2 E[1/n] e_1, query gradient 0
    mean, error = monte_carlo_gradients(R.SingleLocationModel(4), marker)
    expected = np.array([0, 0, 0, 0, 0, -2 * mean_inverse, 0, 0])
    assert np.all(np.abs(mean - expected) <= 5 * error + 1e-15)
    assert np.all(mean[:4] == 0)
    # v = c e_1: query gradient along e_0 is -2 c marker E[log(n)/n (1 - 1/n)]
    mean, error = monte_carlo_gradients(model_with([0.0] * 4, [0.0, c, 0.0, 0.0]), marker)
    assert abs(mean[0] - (-2 * c * marker * attention_factor)) <= 5 * error[0]
    assert 5 * error[0] < 0.1 * abs(mean[0])  # the tolerance is tight enough to see a wrong factor


# -- runs ------------------------------------------------------------------

SMALL = R.RegressionSetting(train_min=2, train_max=8, test_sizes=(4, 50), test_size=8, test_seed=3, dim=4)


def _config(**changes) -> E.TrainingConfig:
    values = {"steps": 6, "attention_lr": 0.3, "output_lr": 0.3, "warm_steps": 2, "big_step": 2.0, "batch_size": 5}
    values.update(changes)
    return E.TrainingConfig(**values, attention_init="random")


def test_every_schedule_sees_the_same_first_batch_and_runs_are_deterministic() -> None:
    task = R.RegressionTask(SMALL)
    runs = E.run_cell(task, _config(), AVAILABLE_SCHEDULES, (3,))
    assert len(set(runs.losses[:, 0, 0].tolist())) == 1  # same initial parameters, same batch at step 0
    again = E.run_cell(task, _config(), ["lag"], (3,))
    lag = AVAILABLE_SCHEDULES.index("lag")
    np.testing.assert_allclose(again.losses[0], runs.losses[lag], rtol=1e-12, atol=0)
    np.testing.assert_allclose(again.metrics["test_errors"][0], runs.metrics["test_errors"][lag], rtol=1e-12, atol=0)
    # lag freezes the query for warm_steps steps, lead freezes the readout
    lag, lead = AVAILABLE_SCHEDULES.index("lag"), AVAILABLE_SCHEDULES.index("lead")
    assert np.all(runs.traces["query_key"][lag, 0, :3] == runs.traces["query_key"][lag, 0, 0])
    assert np.all(runs.traces["readout_value"][lead, 0, :3] == runs.traces["readout_value"][lead, 0, 0])
    assert runs.metrics["test_errors"].shape == (len(AVAILABLE_SCHEDULES), 1, 2)


def test_run_takes_plain_sgd_steps_on_the_batch_of_each_step() -> None:
    """Re-implementation of three joint SGD steps, by hand: p <- p - lr * grad on the seed's batch of each step
    (drawn from SeedSequence([seed, 1]), STREAM_CHUNK steps at a time), from the seed's initial draws (SeedSequence([seed, 0]))."""
    task = R.RegressionTask(SMALL)
    config = _config(steps=3, warm_steps=1)
    result = E.run_cell(task, config, ["joint"], (6,))
    draws = np.random.default_rng(np.random.SeedSequence([6, 0]))
    model = R.SingleLocationModel(4)
    with torch.no_grad():
        model.readout.copy_(torch.from_numpy(0.1 * draws.standard_normal(4)))
        model.query.copy_(torch.from_numpy(0.1 * draws.standard_normal(4)))
    chunk = R.sample_batch(np.random.default_rng(np.random.SeedSequence([6, 1])), (STREAM_CHUNK, 5), 2, 8, 4)
    for step in range(3):
        batch = R.RegressionBatch(*(getattr(chunk, f.name)[step] for f in dataclasses.fields(R.RegressionBatch)))
        loss = ((model(batch.tokens, batch.mask, batch.lengths) - batch.target) ** 2).mean()
        assert math.isclose(result.losses[0, 0, step], float(loss.detach()), rel_tol=1e-12)
        query_grad, readout_grad = torch.autograd.grad(loss, [model.query, model.readout])
        with torch.no_grad():
            model.query -= 0.3 * query_grad
            model.readout -= 0.3 * readout_grad
    assert np.allclose(result.final["query"][0, 0], model.query.detach().numpy(), rtol=1e-12, atol=0)
    # the test loss is the test error averaged over the test lengths above the training range (here only 50)
    assert result.metrics["test_loss"][0, 0] == result.metrics["test_errors"][0, 0, 1]


def test_held_out_batches_have_exact_lengths() -> None:
    for n, batch in zip(SMALL.test_sizes, R.RegressionTask(SMALL).test_batches(), strict=True):
        assert batch.tokens.shape == (8, n, 4) and torch.all(batch.lengths == n)


# -- bad input -------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"min_length": 0}, ValueError, "min_length"),
        ({"min_length": 5, "max_length": 4}, ValueError, "max_length"),
        ({"dim": 1}, ValueError, "dim"),
        ({"marker": 0.0}, ValueError, "marker"),
        ({"marker": float("nan")}, ValueError, "marker"),
        ({"batch_size": 2.0}, TypeError, "batch_size"),
        ({"marker": "1"}, TypeError, "marker"),
    ],
)
def test_sample_batch_rejects_bad_arguments(kwargs: dict, error: type, match: str) -> None:
    arguments = {"batch_size": 2, "min_length": 2, "max_length": 4, "dim": 3, "marker": 1.0} | kwargs
    with pytest.raises(error, match=match):
        R.sample_batch(np.random.default_rng(0), **arguments)


def test_other_bad_input() -> None:
    with pytest.raises(TypeError, match="rng"):
        R.sample_batch(0, 2, 2, 4, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="test_sizes"):
        R.RegressionSetting(train_min=2, train_max=40, test_sizes=(5, 10), test_size=4, test_seed=0)
    model = R.SingleLocationModel(2)
    tokens, mask, lengths = make_batch([[[0.0, 1.0], [1.0, 0.0]]], [2])
    with pytest.raises(ValueError, match="lengths"):
        model(tokens, mask, torch.tensor([3.0], dtype=torch.float64))
    with pytest.raises(ValueError, match="tokens"):
        R.SingleLocationModel(3)(tokens, mask, lengths)
