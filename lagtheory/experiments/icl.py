"""In-context linear regression (Garg et al., NeurIPS 2022; Zhang, Frei and
Bartlett, JMLR 2024), the task of the chapter ``empirical_icl``.

Data. A prompt holds ``m`` pairs ``(x_i, y_i)`` and a query ``x_q``: a task
vector ``beta ~ N(0, I/D)`` is drawn once per prompt, the inputs ``x_i, x_q ~
N(0, I_D)`` independently, and ``y_i = <beta, x_i>`` (no noise); the model must
predict ``y_q = <beta, x_q>``. ``E[y_q^2] = E|beta|^2 = 1``, so a mean squared
error of 1 is that of predicting 0.

Model. One linear self-attention layer in the form of Zhang, Frei and Bartlett
(2024): with ``z_i = (x_i, y_i)`` and the query token ``(x_q, 0)``, the
prediction is the label entry of the query token's output,

    y_hat = (1/m) sum_i <w, z_i> <z_i, K x_q>,

where ``K`` (D+1, D) holds the columns of the key-query matrix ``W_KQ`` that
meet the query token (the attention parameters) and ``w`` (D+1,) the label row
of the value-projection matrix ``W_PV`` (the output parameters); the other
entries of ``W_KQ`` and ``W_PV`` do not reach ``y_hat``. The prediction is
bilinear in ``(w, K)``: at ``w = 0`` it is identically 0 and the gradient of
the loss in ``K`` is exactly 0 (and symmetrically in ``w`` at ``K = 0``).

The part of ``y_hat`` that is odd in the labels is ``g^T Gamma x_q`` with
``g = (1/m) sum_i y_i x_i`` and ``Gamma = w_y K_x + w_x k_y^T``
(:func:`effective_matrix`). One step of gradient descent on the in-context
least-squares loss from 0 with step ``eta`` predicts ``(eta/m) sum_i y_i <x_i,
x_q> = eta g^T x_q`` (:func:`one_step_gd_prediction`), the solution that
Zhang, Frei and Bartlett prove gradient flow finds (Gamma = eta I).

Runs: :func:`training_prompts` draws the prompts of every step from
``step_generator(seed, step + 1)``, :func:`held_out_prompts` the test prompts
of each context size, and :func:`run` trains with one schedule of
:mod:`lagtheory.experiments.protocol`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray

from lagtheory._validation import check_integer

from .protocol import make_schedule, step_generator, train

TRAIN_MIN_CONTEXT = 2
TRAIN_MAX_CONTEXT = 40


@dataclass(frozen=True)
class PromptBatch:
    """Padded prompts: ``inputs`` (B, M, D) and ``labels`` (B, M), zero on
    padding; ``mask`` (B, M) True on the ``counts`` (B,) real pairs; ``query``
    (B, D), ``query_label`` (B,), the task vectors ``beta`` (B, D)."""

    inputs: torch.Tensor
    labels: torch.Tensor
    mask: torch.Tensor
    counts: torch.Tensor
    query: torch.Tensor
    query_label: torch.Tensor
    beta: torch.Tensor


def sample_prompts(
    generator: torch.Generator, batch_size: int, min_context: int, max_context: int, dim: int
) -> PromptBatch:
    """Draw ``batch_size`` prompts with context sizes ``m`` uniform on
    ``{min_context, ..., max_context}`` (padded to ``max_context``), the data of
    the module docstring."""
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    check_integer(batch_size, "batch_size", minimum=1)
    check_integer(min_context, "min_context", minimum=1)
    check_integer(max_context, "max_context", minimum=min_context)
    check_integer(dim, "dim", minimum=1)
    counts = torch.randint(min_context, max_context + 1, (batch_size,), generator=generator)
    beta = torch.randn(batch_size, dim, dtype=torch.float64, generator=generator) / dim**0.5
    mask = torch.arange(max_context).unsqueeze(0) < counts.unsqueeze(1)
    inputs = torch.randn(batch_size, max_context, dim, dtype=torch.float64, generator=generator) * mask.unsqueeze(2)
    query = torch.randn(batch_size, dim, dtype=torch.float64, generator=generator)
    labels = linear_labels(beta, inputs)
    return PromptBatch(inputs, labels, mask, counts.to(torch.float64), query, linear_labels(beta, query), beta)


def linear_labels(beta: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
    """``y = <beta, x>`` for each prompt's task vector: inputs (B, M, D) -> (B, M), or (B, D) -> (B,)."""
    if inputs.ndim == 3:
        return torch.einsum("bd,bmd->bm", beta, inputs)
    return (beta * inputs).sum(dim=1)


class LinearSelfAttention(torch.nn.Module):
    """``y_hat = (1/m) sum_i <w, z_i> <z_i, K x_q>`` (module docstring).

    Parameters (float64, zero at construction): ``key_query`` K (D+1, D), the
    attention group, and ``value`` w (D+1,), the output group; the last entry
    of ``value`` and the last row of ``key_query`` act on the labels.
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        check_integer(dim, "dim", minimum=1)
        self.dim = dim
        self.key_query = torch.nn.Parameter(torch.zeros(dim + 1, dim, dtype=torch.float64))
        self.value = torch.nn.Parameter(torch.zeros(dim + 1, dtype=torch.float64))

    def attention_parameters(self) -> list[torch.nn.Parameter]:
        """The attention group: the key-query block K."""
        return [self.key_query]

    def output_parameters(self) -> list[torch.nn.Parameter]:
        """The output group: the value-projection row w."""
        return [self.value]

    def forward(self, batch: PromptBatch) -> torch.Tensor:
        """The prediction ``y_hat`` of each prompt, shape (B,)."""
        if not isinstance(batch, PromptBatch):
            raise TypeError(f"batch must be a PromptBatch, got {type(batch).__name__}")
        if batch.inputs.shape[2] != self.dim:
            raise ValueError(f"batch inputs must have dimension {self.dim}, got {batch.inputs.shape[2]}")
        tokens = torch.cat([batch.inputs, batch.labels.unsqueeze(2)], dim=2)
        values = tokens @ self.value
        scores = tokens @ (self.key_query @ batch.query.unsqueeze(2))
        return (values * scores.squeeze(2)).sum(dim=1) / batch.counts

    def effective_matrix(self) -> NDArray[np.float64]:
        """``Gamma = w_y K_x + w_x k_y^T`` (D, D), the label-odd part ``g^T Gamma x_q`` of the prediction."""
        with torch.no_grad():
            gamma = self.value[-1] * self.key_query[:-1] + torch.outer(self.value[:-1], self.key_query[-1])
        return gamma.numpy().copy()


def one_step_gd_prediction(batch: PromptBatch, step_size: float) -> torch.Tensor:
    """``(eta/m) sum_i y_i <x_i, x_q>``: one gradient step of size eta from beta = 0
    on the in-context loss ``1/(2m) sum_i (y_i - <beta, x_i>)^2``, evaluated at x_q."""
    _check_real(step_size, "step_size")
    g = (batch.labels.unsqueeze(2) * batch.inputs).sum(dim=1) / batch.counts.unsqueeze(1)
    return step_size * (g * batch.query).sum(dim=1)


def least_squares_prediction(batch: PromptBatch) -> torch.Tensor:
    """``<beta_hat, x_q>`` with beta_hat the minimum-norm least-squares fit of each
    prompt's pairs (exact recovery once m >= D; the padding rows are zero and do not count)."""
    beta_hat = torch.linalg.pinv(batch.inputs) @ batch.labels.unsqueeze(2)
    return (beta_hat.squeeze(2) * batch.query).sum(dim=1)


def optimal_step(dim: int, min_context: int, max_context: int) -> float:
    """The step eta minimising the population error of ``eta g^T x_q`` when m is
    uniform on ``{min_context, ..., max_context}``: ``1 / (1 + (D+1) E[1/m])``."""
    check_integer(dim, "dim", minimum=1)
    check_integer(min_context, "min_context", minimum=1)
    check_integer(max_context, "max_context", minimum=min_context)
    mean_inverse = float(np.mean(1.0 / np.arange(min_context, max_context + 1)))
    return 1.0 / (1.0 + (dim + 1) * mean_inverse)


def one_step_gd_error(step_size: float, context: NDArray[np.float64] | float, dim: int) -> NDArray[np.float64]:
    """Population mean squared error of ``eta g^T x_q`` at context size m:
    ``eta^2 (1 + (D+1)/m) - 2 eta + 1`` (it tends to ``(1 - eta)^2`` as m grows)."""
    _check_real(step_size, "step_size")
    check_integer(dim, "dim", minimum=1)
    m = np.asarray(context, dtype=np.float64)
    if np.any(m < 1) or np.any(m != np.floor(m)):
        raise ValueError("context must hold whole numbers >= 1 (context sizes m)")
    return step_size**2 * (1.0 + (dim + 1) / m) - 2.0 * step_size + 1.0


def initialise(model: LinearSelfAttention, scale: float, generator: torch.Generator) -> None:
    """Set ``key_query`` and ``value`` to independent ``N(0, scale^2)`` entries (key_query first)."""
    if not isinstance(model, LinearSelfAttention):
        raise TypeError(f"model must be a LinearSelfAttention, got {type(model).__name__}")
    _check_real(scale, "scale")
    with torch.no_grad():
        for param in (model.key_query, model.value):
            param.copy_(scale * torch.randn(param.shape, dtype=torch.float64, generator=generator))


@dataclass(frozen=True)
class ICLConfig:
    """Everything one training run needs besides the schedule name and the seed.

    ``dim`` D of the inputs; ``batch_size`` prompts per SGD step,
    ``total_steps`` steps in all; ``lr``, ``warm_steps`` and ``big_step`` as in
    :func:`~lagtheory.experiments.protocol.make_schedule`; ``init_scale`` the
    standard deviation of the initial entries of K and w; ``test_size``
    held-out prompts of each of ``test_contexts``, drawn from
    ``step_generator(test_seed, m)``. The defaults are the chapter's values:
    ``lr`` small enough for ``two-timescale-3``, ``big_step`` small enough for
    the output-only phase of ``one-step`` to stay stable.
    """

    dim: int = 5
    batch_size: int = 128
    total_steps: int = 400
    lr: float = 0.05
    warm_steps: int = 100
    big_step: float = 5.0
    init_scale: float = 0.1
    test_contexts: tuple[int, ...] = (5, 10, 20, 40, 60, 100, 160, 250, 400, 630, 1000)
    test_size: int = 500
    test_seed: int = 10**6


@dataclass(frozen=True)
class ICLRun:
    """The result of one run: the training loss of every step, the label
    weight ``w_y`` and the mean diagonal ``tr(K_x)/D`` of the key-query block at
    every step (before its update), the test mean squared error at each of
    ``config.test_contexts``, the final parameters."""

    losses: NDArray[np.float64]
    label_value: NDArray[np.float64]
    key_query_trace: NDArray[np.float64]
    test_errors: NDArray[np.float64]
    key_query: NDArray[np.float64]
    value: NDArray[np.float64]


def held_out_prompts(config: ICLConfig) -> list[PromptBatch]:
    """One fixed batch of ``config.test_size`` prompts of each test context size
    (all of that exact size), seeded by ``(config.test_seed, m)``."""
    return [
        sample_prompts(step_generator(config.test_seed, m), config.test_size, m, m, config.dim)
        for m in config.test_contexts
    ]


def mean_squared_error(prediction: torch.Tensor, batch: PromptBatch) -> float:
    """``mean (y_hat - y_q)^2`` over the batch."""
    return float(((prediction.detach() - batch.query_label) ** 2).mean())


def training_prompts(config: ICLConfig, seed: int) -> list[PromptBatch]:
    """The prompts of every step of a run with ``seed``: step ``s`` uses
    ``config.batch_size`` prompts drawn from ``step_generator(seed, s + 1)``
    (``step_generator(seed, 0)`` initialises the model), so that every
    schedule run with ``seed`` sees the same data."""
    return [
        sample_prompts(
            step_generator(seed, step + 1), config.batch_size, TRAIN_MIN_CONTEXT, TRAIN_MAX_CONTEXT, config.dim
        )
        for step in range(config.total_steps)
    ]


def run(config: ICLConfig, schedule: str, seed: int, prompts: list[PromptBatch], tests: list[PromptBatch]) -> ICLRun:
    """Train a fresh model (initialised from ``step_generator(seed, 0)``) with
    ``schedule`` on ``prompts`` (one batch per step, from :func:`training_prompts`),
    then measure the test errors on ``tests`` (from :func:`held_out_prompts`)."""
    if len(prompts) != config.total_steps:
        raise ValueError(f"prompts must hold one batch per step ({config.total_steps}), got {len(prompts)}")
    if len(tests) != len(config.test_contexts):
        raise ValueError(f"tests must hold one batch per test context ({len(config.test_contexts)}), got {len(tests)}")
    model = LinearSelfAttention(config.dim)
    initialise(model, config.init_scale, step_generator(seed, 0))
    phases = make_schedule(schedule, config.total_steps, config.lr, config.warm_steps, config.big_step)
    label_value = np.empty(config.total_steps)
    key_query_trace = np.empty(config.total_steps)

    def loss_fn(step: int) -> torch.Tensor:
        label_value[step] = float(model.value.detach()[-1])
        key_query_trace[step] = float(torch.diagonal(model.key_query.detach()[:-1]).mean())
        batch = prompts[step]
        return ((model(batch) - batch.query_label) ** 2).mean()

    losses = train(model.attention_parameters(), model.output_parameters(), phases, loss_fn)
    with torch.no_grad():
        errors = np.array([mean_squared_error(model(batch), batch) for batch in tests])
    return ICLRun(
        losses,
        label_value,
        key_query_trace,
        errors,
        model.key_query.detach().numpy().copy(),
        model.value.detach().numpy().copy(),
    )


def _check_real(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
