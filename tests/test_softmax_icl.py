"""Tests of lagtheory.experiments.tasks.sequences.softmax_icl (in-context regression with softmax attention).

Independent references: the forward pass by hand in dimension 1 (derivation in the comment) and by an
explicit Python loop over the pairs; the large-context limit from the Gaussian identity
E[x e^(<x, a>)] = a e^(|a|^2 / 2) for x ~ N(0, I), so that with K = (I; 0) and w = e_label the prediction
sum_i alpha_i y_i tends to E[y e^(<x, x_q>)] / E[e^(<x, x_q>)] = <beta, x_q>; and the structure of the
gradients (y_hat is identically 0 at w = 0, and depends on w at K = 0).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lagtheory.experiments.tasks.sequences import icl as I
from lagtheory.experiments.tasks.sequences import softmax_icl as S


def _model(key_query, value) -> S.SoftmaxSelfAttention:
    return S.SoftmaxSelfAttention.with_parameters(key_query, value)


def test_forward_matches_hand_computation_in_dimension_one() -> None:
    # D = 1, K = (a; b) = (1; 0.5), w = (c, d) = (2, -1), pairs (x, y) = (1, 2) and (-1, 0), x_q = ln 3:
    #   scores <z_i, K x_q> = (x_i + 0.5 y_i) ln 3: 2 ln 3 and -ln 3, so alpha = (9, 1/3) / (28/3) = (27/28, 1/28)
    #   values <w, z_i> = 2 x_i - y_i: 0 and -2, so y_hat = -2/28 = -1/14
    batch = I.prompt_batch(
        torch.tensor([[[1.0], [-1.0]]], dtype=torch.float64),
        torch.tensor([[2.0, 0.0]], dtype=torch.float64),
        torch.ones(1, 2, dtype=torch.bool),
        torch.tensor([2.0], dtype=torch.float64),
        torch.tensor([[math.log(3.0)]], dtype=torch.float64),
        torch.zeros(1, dtype=torch.float64),
        torch.zeros(1, 1, dtype=torch.float64),
        moments=False,
    )
    model = _model([[1.0], [0.5]], [2.0, -1.0])
    assert float(model(batch).detach()) == pytest.approx(-1 / 14, rel=1e-14)


def test_forward_equals_a_loop_over_the_pairs_with_padding_and_seed_batching() -> None:
    rng = np.random.default_rng(0)
    key_query, value = rng.normal(size=(2, 3, 4, 3)), rng.normal(size=(2, 3, 4))  # (schedules, seeds, ...)
    batch = I.sample_prompts([np.random.default_rng(s) for s in range(3)], 5, 2, 7, 3, moments=False)
    batched = S.predict(torch.from_numpy(key_query), torch.from_numpy(value), batch).numpy()
    for k in range(2):
        for seed in range(3):
            for b in range(5):
                m = int(batch.counts[seed, b])
                x, y, q = (
                    batch.inputs[seed, b, :m].numpy(),
                    batch.labels[seed, b, :m].numpy(),
                    batch.query[seed, b].numpy(),
                )
                scores = [np.dot(np.append(x[i], y[i]), key_query[k, seed] @ q) for i in range(m)]
                weights = np.exp(np.array(scores) - max(scores))
                weights /= weights.sum()
                expected = sum(weights[i] * np.dot(value[k, seed], np.append(x[i], y[i])) for i in range(m))
                assert batched[k, seed, b] == pytest.approx(expected, rel=1e-12, abs=1e-13)


def test_preset_attention_predicts_the_target_at_long_contexts() -> None:
    """With K = (I; 0) and w = e_label the prediction tends to y_q (Gaussian identity, module docstring):
    at m = 200000 in D = 2 the error is a few percent of the target's scale, far below the zero prediction's."""
    task = S.SoftmaxICLTask(
        S.SoftmaxICLSetting(train_min=2, train_max=4, test_sizes=(8,), test_size=4, test_seed=0, dim=2)
    )
    batch = I.sample_prompts(np.random.default_rng(3), 20, 200_000, 200_000, 2, moments=False)
    value = torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64)
    prediction = S.predict(task.preset_attention()["key_query"], value, batch)
    error = float(((prediction - batch.query_label) ** 2).mean())
    assert error < 0.01 * float((batch.query_label**2).mean())


def test_the_output_layer_can_move_the_prediction_alone_and_attention_cannot() -> None:
    """At K = 0 (uniform attention) y_hat = <w, mean pair>: the gradient in w is not zero, unlike the linear
    layer's; at w = 0, y_hat is 0 for every K and the gradient in K is exactly 0."""
    batch = I.sample_prompts(np.random.default_rng(1), 64, 2, 10, 3, moments=False)
    at_zero_attention = _model(np.zeros((4, 3)), np.random.default_rng(2).normal(size=4))
    loss = ((at_zero_attention(batch) - batch.query_label) ** 2).mean()
    grad_k, grad_w = torch.autograd.grad(loss, [at_zero_attention.key_query, at_zero_attention.value])
    mean_pair = torch.cat([batch.inputs.sum(1), batch.labels.sum(1, keepdim=True)], 1) / batch.counts[:, None]
    np.testing.assert_allclose(
        at_zero_attention(batch).detach().numpy(), (mean_pair @ at_zero_attention.value.detach()).numpy(), rtol=1e-12
    )
    assert float(grad_w.abs().max()) > 0.01
    at_zero_output = _model(np.random.default_rng(4).normal(size=(4, 3)), np.zeros(4))
    loss = ((at_zero_output(batch) - batch.query_label) ** 2).mean()
    grad_k, _ = torch.autograd.grad(loss, [at_zero_output.key_query, at_zero_output.value])
    assert torch.equal(grad_k, torch.zeros_like(grad_k))
    linear = I.LinearSelfAttention(3)
    with torch.no_grad():
        linear.value.copy_(at_zero_attention.value)
    linear_loss = ((linear(I.sample_prompts(np.random.default_rng(1), 64, 2, 10, 3)) - batch.query_label) ** 2).mean()
    (linear_grad_w,) = torch.autograd.grad(linear_loss, [linear.value])
    assert torch.equal(linear_grad_w, torch.zeros_like(linear_grad_w))  # the contrast: linear attention at K = 0


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="setting"):
        S.SoftmaxICLTask(I.ICLSetting(train_min=2, train_max=4, test_sizes=(8,), test_size=4, test_seed=0))
    with pytest.raises(TypeError, match="batch"):
        S.SoftmaxSelfAttention(2)("prompts")
    with pytest.raises(ValueError, match="dimension"):
        S.SoftmaxSelfAttention(2)(I.sample_prompts(np.random.default_rng(0), 2, 2, 3, 3, moments=False))
