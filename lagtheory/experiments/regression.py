"""Single-location regression (Marion et al., ICLR 2025), the task of the
chapter ``empirical_regression``.

Data. A sequence of ``n`` tokens ``x_1, ..., x_n`` in R^D. One position ``J``,
uniform on ``{1, ..., n}`` and hidden, is marked by the key direction
``k* = e_0``: ``x_J = marker * e_0 + z_J``, and every other token is ``x_i =
z_i``, where the ``z_i`` are independent standard Gaussian vectors of the
hyperplane orthogonal to ``e_0`` (coordinate 0 is exactly 0). The target reads
the marked token along the value direction ``v* = e_1``:

    y = <v*, x_J> = z_J[1]          (so E[y] = 0, Var[y] = 1).

Model. One attention layer with a trainable query ``q`` (the attention
parameters) and length-scaled scores, then a linear readout ``v`` (the output
parameters):

    alpha_i = n^<q, x_i> / sum_j n^<q, x_j>,      f = <v, sum_i alpha_i x_i>,

trained on the squared loss ``(f - y)^2``. With ``q = t e_0`` the weight of
the marked token is ``n^(marker t) / (n^(marker t) + n - 1)``, the pooled
weight ``p(n, 1; marker t)`` of the book (eq. ``eq-pooled-weight``), so the
threshold ``marker t > 1`` of ``thm-threshold`` is what length generalisation
needs here too. The readout enters ``df/dq`` as a factor: at ``v = 0``, ``f``
is identically 0 and the query gradient is exactly 0 (the analogue of
``lem-gradients``).

Lengths vary within a batch (padding plus a mask); training lengths are
uniform on ``{TRAIN_MIN_LENGTH, ..., TRAIN_MAX_LENGTH}`` and the test lengths
go far beyond (the protocol of Deletang et al., ICLR 2023).

Runs: :func:`training_batches` draws the batches of every step from
``step_generator(seed, step + 1)``, :func:`held_out_batches` the test batches
of each length, and :func:`run` trains with one schedule of
:mod:`lagtheory.experiments.protocol`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray

from lagtheory._validation import check_integer

from .protocol import make_schedule, step_generator, train

TRAIN_MIN_LENGTH = 2
TRAIN_MAX_LENGTH = 40
KEY_COORDINATE = 0  # k* = e_0
VALUE_COORDINATE = 1  # v* = e_1


@dataclass(frozen=True)
class RegressionBatch:
    """A padded batch: ``tokens`` (B, N, D), ``mask`` (B, N) True on real tokens,
    ``lengths`` (B,) float64, ``position`` (B,) the hidden marked position J
    (0-based), ``target`` (B,) the label y."""

    tokens: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor
    position: torch.Tensor
    target: torch.Tensor


def sample_batch(
    generator: torch.Generator,
    batch_size: int,
    min_length: int,
    max_length: int,
    dim: int,
    marker: float = 1.0,
) -> RegressionBatch:
    """Draw ``batch_size`` sequences with lengths uniform on ``{min_length, ...,
    max_length}`` (padded to ``max_length``), the data of the module docstring."""
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    check_integer(batch_size, "batch_size", minimum=1)
    check_integer(min_length, "min_length", minimum=1)
    check_integer(max_length, "max_length", minimum=min_length)
    check_integer(dim, "dim", minimum=2)
    _check_marker(marker)
    lengths = torch.randint(min_length, max_length + 1, (batch_size,), generator=generator)
    position = torch.floor(torch.rand(batch_size, dtype=torch.float64, generator=generator) * lengths).long()
    tokens = torch.randn(batch_size, max_length, dim, dtype=torch.float64, generator=generator)
    tokens[:, :, KEY_COORDINATE] = 0.0
    mask = torch.arange(max_length).unsqueeze(0) < lengths.unsqueeze(1)
    tokens = tokens * mask.unsqueeze(2)
    rows = torch.arange(batch_size)
    tokens[rows, position, KEY_COORDINATE] = float(marker)
    return RegressionBatch(tokens, mask, lengths.to(torch.float64), position, target(tokens, position))


def target(tokens: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
    """The label ``y = <v*, x_J> = x_J[1]`` of each sequence, shape (B,)."""
    return tokens[torch.arange(tokens.shape[0]), position, VALUE_COORDINATE]


class SingleLocationModel(torch.nn.Module):
    """One length-scaled attention layer with a trainable query, then a linear readout.

    Parameters (float64, zero at construction): ``query`` (D,), the attention
    group, and ``readout`` (D,), the output group.
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        check_integer(dim, "dim", minimum=2)
        self.dim = dim
        self.query = torch.nn.Parameter(torch.zeros(dim, dtype=torch.float64))
        self.readout = torch.nn.Parameter(torch.zeros(dim, dtype=torch.float64))

    def attention_parameters(self) -> list[torch.nn.Parameter]:
        """The attention group: the query."""
        return [self.query]

    def output_parameters(self) -> list[torch.nn.Parameter]:
        """The output group: the readout."""
        return [self.readout]

    def attention_weights(self, tokens: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``alpha_i = n^<q, x_i> / sum_j n^<q, x_j>`` over the real tokens (0 on padding), shape (B, N)."""
        self._check_batch(tokens, mask, lengths)
        scores = torch.log(lengths).unsqueeze(1) * (tokens @ self.query)
        return torch.softmax(scores.masked_fill(~mask, -torch.inf), dim=1)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``f = <v, sum_i alpha_i x_i>``, shape (B,)."""
        alpha = self.attention_weights(tokens, mask, lengths)
        pooled = (alpha.unsqueeze(2) * tokens).sum(dim=1)
        return pooled @ self.readout

    def _check_batch(self, tokens: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor) -> None:
        if tokens.dtype != torch.float64 or tokens.ndim != 3 or tokens.shape[2] != self.dim:
            raise ValueError(f"tokens must be a float64 tensor of shape (B, N, {self.dim}), got {tuple(tokens.shape)}")
        if mask.dtype != torch.bool or mask.shape != tokens.shape[:2]:
            raise ValueError(f"mask must be a bool tensor of shape {tuple(tokens.shape[:2])}")
        if lengths.shape != tokens.shape[:1] or not torch.equal(lengths, mask.sum(dim=1).to(lengths.dtype)):
            raise ValueError("lengths must have shape (B,) and equal the number of True entries of each mask row")


def initialise(model: SingleLocationModel, scale: float, generator: torch.Generator) -> None:
    """Set ``query`` and ``readout`` to independent ``N(0, scale^2 I)`` draws (query first)."""
    if not isinstance(model, SingleLocationModel):
        raise TypeError(f"model must be a SingleLocationModel, got {type(model).__name__}")
    _check_scale(scale)
    with torch.no_grad():
        for param in (model.query, model.readout):
            param.copy_(scale * torch.randn(model.dim, dtype=torch.float64, generator=generator))


@dataclass(frozen=True)
class RegressionConfig:
    """Everything one training run needs besides the schedule name and the seed.

    ``dim`` D and ``marker`` kappa of the data; ``batch_size`` sequences per
    SGD step, ``total_steps`` steps in all; ``lr``, ``warm_steps`` and
    ``big_step`` as in :func:`~lagtheory.experiments.protocol.make_schedule`;
    ``init_scale`` the standard deviation of the initial entries of q and v;
    ``test_size`` held-out sequences of each of ``test_lengths``, drawn from
    ``step_generator(test_seed, n)``. The defaults are the chapter's values:
    ``lr`` small enough for the stiff query direction of ``two-timescale-3``.
    """

    dim: int = 8
    marker: float = 1.0
    batch_size: int = 64
    total_steps: int = 300
    lr: float = 0.05
    warm_steps: int = 75
    big_step: float = 20.0
    init_scale: float = 0.1
    test_lengths: tuple[int, ...] = (5, 10, 20, 40, 60, 100, 160, 250, 400, 630, 1000)
    test_size: int = 256
    test_seed: int = 10**6


@dataclass(frozen=True)
class RegressionRun:
    """The result of one run: the training loss of every step, the key and
    value components ``<q, k*>`` and ``<v, v*>`` of the parameters at every
    step (before its update), the test mean squared error at each of
    ``config.test_lengths``, the final parameters."""

    losses: NDArray[np.float64]
    query_key: NDArray[np.float64]
    readout_value: NDArray[np.float64]
    test_errors: NDArray[np.float64]
    query: NDArray[np.float64]
    readout: NDArray[np.float64]


def held_out_batches(config: RegressionConfig) -> list[RegressionBatch]:
    """One fixed batch of ``config.test_size`` sequences of each test length
    (all of that exact length), seeded by ``(config.test_seed, length)``."""
    return [
        sample_batch(step_generator(config.test_seed, n), config.test_size, n, n, config.dim, config.marker)
        for n in config.test_lengths
    ]


def mean_squared_error(model: SingleLocationModel, batch: RegressionBatch) -> float:
    """``mean (f - y)^2`` over the batch (the target has variance 1, so 1 is the error of f = 0)."""
    with torch.no_grad():
        return float(((model(batch.tokens, batch.mask, batch.lengths) - batch.target) ** 2).mean())


def training_batches(config: RegressionConfig, seed: int) -> list[RegressionBatch]:
    """The batches of every step of a run with ``seed``: step ``s`` uses
    ``config.batch_size`` sequences drawn from ``step_generator(seed, s + 1)``
    (``step_generator(seed, 0)`` initialises the model), so that every
    schedule run with ``seed`` sees the same data."""
    return [
        sample_batch(
            step_generator(seed, step + 1),
            config.batch_size,
            TRAIN_MIN_LENGTH,
            TRAIN_MAX_LENGTH,
            config.dim,
            config.marker,
        )
        for step in range(config.total_steps)
    ]


def run(
    config: RegressionConfig, schedule: str, seed: int, batches: list[RegressionBatch], tests: list[RegressionBatch]
) -> RegressionRun:
    """Train a fresh model (initialised from ``step_generator(seed, 0)``) with
    ``schedule`` on ``batches`` (one per step, from :func:`training_batches`),
    then measure the test errors on ``tests`` (from :func:`held_out_batches`)."""
    if len(batches) != config.total_steps:
        raise ValueError(f"batches must hold one batch per step ({config.total_steps}), got {len(batches)}")
    if len(tests) != len(config.test_lengths):
        raise ValueError(f"tests must hold one batch per test length ({len(config.test_lengths)}), got {len(tests)}")
    model = SingleLocationModel(config.dim)
    initialise(model, config.init_scale, step_generator(seed, 0))
    phases = make_schedule(schedule, config.total_steps, config.lr, config.warm_steps, config.big_step)
    query_key = np.empty(config.total_steps)
    readout_value = np.empty(config.total_steps)

    def loss_fn(step: int) -> torch.Tensor:
        query_key[step] = float(model.query.detach()[KEY_COORDINATE])
        readout_value[step] = float(model.readout.detach()[VALUE_COORDINATE])
        batch = batches[step]
        return ((model(batch.tokens, batch.mask, batch.lengths) - batch.target) ** 2).mean()

    losses = train(model.attention_parameters(), model.output_parameters(), phases, loss_fn)
    errors = np.array([mean_squared_error(model, batch) for batch in tests])
    return RegressionRun(
        losses,
        query_key,
        readout_value,
        errors,
        model.query.detach().numpy().copy(),
        model.readout.detach().numpy().copy(),
    )


def _check_marker(marker: float) -> None:
    if isinstance(marker, bool) or not isinstance(marker, (int, float, np.integer, np.floating)):
        raise TypeError(f"marker must be a real number, got {type(marker).__name__}")
    if not np.isfinite(marker) or marker <= 0:
        raise ValueError(f"marker must be a finite number > 0, got {marker!r}")


def _check_scale(scale: float) -> None:
    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.integer, np.floating)):
        raise TypeError(f"scale must be a real number, got {type(scale).__name__}")
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
