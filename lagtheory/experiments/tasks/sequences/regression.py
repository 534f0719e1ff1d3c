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
weight ``p(n, 1; marker t)`` of the book :eq:`eq-pooled-weight`, so the
threshold ``marker t > 1`` of :prf:ref:`thm-threshold` is what length generalisation
needs here too. The readout enters ``df/dq`` as a factor: at ``v = 0``, ``f``
is identically 0 and the query gradient is exactly 0 (the analogue of
:prf:ref:`lem-gradients`).

Lengths vary within a batch (padding plus a mask). Runs go through the shared
driver :class:`lagtheory.experiments.tasks.sequences.driver.SequenceRegression` and the
engine (:func:`lagtheory.experiments.engine.cells.run_cell`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from lagtheory._validation import check_integer, check_positive

from .driver import SequenceRegression, SequenceSetting, draw_shape, seed_einsum

KEY_COORDINATE = 0  # k* = e_0
VALUE_COORDINATE = 1  # v* = e_1


@dataclass(frozen=True)
class RegressionBatch:
    """A padded batch: ``tokens`` (..., B, N, D), ``mask`` (..., B, N) True on real tokens,
    ``lengths`` (..., B) float64, ``position`` (..., B) the hidden marked position J
    (0-based), ``target`` (..., B) the label y.

    Attributes
    ----------
    tokens : torch.Tensor
        float64 (..., B, N, D), zero on padding.
    mask : torch.Tensor
        bool (..., B, N), True on the real tokens (the first ``lengths``).
    lengths : torch.Tensor
        float64 (..., B), the lengths n >= 1.
    position : torch.Tensor
        int64 (..., B), the hidden marked position J (0-based).
    target : torch.Tensor
        float64 (..., B), the label y.
    """

    tokens: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor
    position: torch.Tensor
    target: torch.Tensor


def sample_batch(
    rng: np.random.Generator | list[np.random.Generator],
    batch_size: int | tuple[int, ...],
    min_length: int,
    max_length: int,
    dim: int,
    marker: float = 1.0,
) -> RegressionBatch:
    """Draw ``batch_size`` sequences with lengths uniform on ``{min_length, ...,
    max_length}`` (padded to ``max_length``), the data of the module docstring;
    ``batch_size`` may be a shape (several steps' batches at once). From each
    generator, in this order: the lengths, the marked positions, then the Gaussian
    coordinates of all ``max_length`` positions (those past a sequence's length are
    then set to 0). ``rng`` may be a list of generators (one per seed): the result
    then has a leading seed dimension, and seed j's part equals the draw from
    ``rng[j]`` alone.

    Parameters
    ----------
    rng : numpy.random.Generator or list of numpy.random.Generator
        One generator, or a non-empty list of them (one per seed).
    batch_size : int or tuple of int
        Sequences per batch, or a shape; each entry >= 1.
    min_length : int
        The shortest length, >= 1.
    max_length : int
        The longest length, >= ``min_length``.
    dim : int
        The token dimension D, >= 2.
    marker : float, optional
        The marker kappa, finite and > 0.

    Returns
    -------
    RegressionBatch
        The sequences.

    Raises
    ------
    TypeError
        If ``rng`` is not a generator or a list of them, or a size is not an integer.
    ValueError
        If a size or ``marker`` is out of range.
    """
    rngs, shape = draw_shape(rng, batch_size, min_length, max_length, ("min_length", "max_length"))
    check_integer(dim, "dim", minimum=2)
    marker = check_positive(marker, "marker")
    lengths = np.empty((len(rngs), *shape), dtype=np.int64)
    position = np.empty((len(rngs), *shape), dtype=np.int64)
    noise = np.empty((len(rngs), *shape, max_length, dim - 1))
    for j, generator in enumerate(rngs):
        lengths[j] = generator.integers(min_length, max_length + 1, size=shape)
        position[j] = np.floor(generator.random(shape) * lengths[j]).astype(np.int64)
        generator.standard_normal(out=noise[j])
    mask = np.arange(max_length) < lengths[..., None]
    tokens = np.zeros((len(rngs), *shape, max_length, dim))
    free = np.arange(dim) != KEY_COORDINATE  # the noise lies orthogonal to k*
    tokens[..., free] = noise * mask[..., None]
    np.put_along_axis(tokens[..., KEY_COORDINATE], position[..., None], marker, axis=-1)
    if not isinstance(rng, list):
        tokens, mask, lengths, position = tokens[0], mask[0], lengths[0], position[0]
    tokens_t = torch.from_numpy(tokens)
    position_t = torch.from_numpy(position)
    return RegressionBatch(
        tokens_t,
        torch.from_numpy(mask),
        torch.from_numpy(lengths.astype(np.float64)),
        position_t,
        target(tokens_t, position_t),
    )


def target(tokens: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
    """The label ``y = <v*, x_J> = x_J[1]`` of each sequence.

    Parameters
    ----------
    tokens : torch.Tensor
        (..., B, N, D).
    position : torch.Tensor
        int64 (..., B), the marked positions (0-based).

    Returns
    -------
    torch.Tensor
        (..., B).
    """
    return torch.take_along_dim(tokens[..., VALUE_COORDINATE], position.unsqueeze(-1), dim=-1).squeeze(-1)


def attention_weights(
    query: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor
) -> torch.Tensor:
    """``alpha_i = n^<q, x_i> / sum_j n^<q, x_j>`` over the real tokens (0 on padding), shape (..., B, N):
    ``query`` (..., D) with any leading (schedule, seed) dimensions, the batch with or without a seed dimension.

    Parameters
    ----------
    query : torch.Tensor
        q (..., D), any leading (schedule, seed) dimensions.
    tokens : torch.Tensor
        float64 (B, N, D) or with a leading seed dimension, zero on padding.
    mask : torch.Tensor
        bool (B, N) (a leading seed dimension as ``tokens``), True on the real tokens (the first ``lengths``).
    lengths : torch.Tensor
        float64 (B,), the lengths n >= 1 (a leading seed dimension as ``tokens``).

    Returns
    -------
    torch.Tensor
        (..., B, N).
    """
    scores = torch.log(lengths).unsqueeze(-1) * seed_einsum("d,bnd->bn", query, tokens, 1)
    if not bool(mask.all()):
        scores = scores.masked_fill(~mask, -torch.inf)
    return torch.softmax(scores, dim=-1)


def predict(
    query: torch.Tensor, readout: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor
) -> torch.Tensor:
    """``f = <v, sum_i alpha_i x_i>`` of each sequence.

    Parameters
    ----------
    query : torch.Tensor
        q (..., D), any leading (schedule, seed) dimensions.
    readout : torch.Tensor
        v (..., D), the same leading dimensions.
    tokens, mask, lengths : torch.Tensor
        The batch, as in :func:`attention_weights`.

    Returns
    -------
    torch.Tensor
        (..., B).
    """
    alpha = attention_weights(query, tokens, mask, lengths)
    return (alpha * seed_einsum("d,bnd->bn", readout, tokens, 1)).sum(dim=-1)  # sum_i alpha_i <v, x_i>


class SingleLocationModel(torch.nn.Module):
    """One length-scaled attention layer with a trainable query, then a linear readout, for one model
    (the engine trains many at once through :func:`predict`).

    The trained tensors (float64, zero at construction) are ``query`` (D,), the attention
    group, and ``readout`` (D,), the output group.

    Parameters
    ----------
    dim : int
        The token dimension D, >= 2.

    Raises
    ------
    ValueError
        If ``dim`` < 2.
    TypeError
        If ``dim`` is not an integer.
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = check_integer(dim, "dim", minimum=2)
        self.query = torch.nn.Parameter(torch.zeros(dim, dtype=torch.float64))
        self.readout = torch.nn.Parameter(torch.zeros(dim, dtype=torch.float64))

    def attention_weights(self, tokens: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """:func:`attention_weights` of this model, shape (B, N).

        Parameters
        ----------
        tokens : torch.Tensor
            float64 (B, N, D).
        mask : torch.Tensor
            bool (B, N).
        lengths : torch.Tensor
            (B,), the number of True entries of each mask row.

        Returns
        -------
        torch.Tensor
            (B, N).

        Raises
        ------
        ValueError
            If the batch's dtypes or shapes do not fit, or ``lengths`` disagrees with ``mask``.
        """
        self._check_batch(tokens, mask, lengths)
        return attention_weights(self.query, tokens, mask, lengths)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """:func:`predict` of this model, shape (B,).

        Parameters
        ----------
        tokens : torch.Tensor
            float64 (B, N, D).
        mask : torch.Tensor
            bool (B, N).
        lengths : torch.Tensor
            (B,), the number of True entries of each mask row.

        Returns
        -------
        torch.Tensor
            (B,).

        Raises
        ------
        ValueError
            If the batch's dtypes or shapes do not fit, or ``lengths`` disagrees with ``mask``.
        """
        self._check_batch(tokens, mask, lengths)
        return predict(self.query, self.readout, tokens, mask, lengths)

    def _check_batch(self, tokens: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor) -> None:
        if tokens.dtype != torch.float64 or tokens.ndim != 3 or tokens.shape[2] != self.dim:
            raise ValueError(f"tokens must be a float64 tensor of shape (B, N, {self.dim}), got {tuple(tokens.shape)}")
        if mask.dtype != torch.bool or mask.shape != tokens.shape[:2]:
            raise ValueError(f"mask must be a bool tensor of shape {tuple(tokens.shape[:2])}")
        if lengths.shape != tokens.shape[:1] or not torch.equal(lengths, mask.sum(dim=1).to(lengths.dtype)):
            raise ValueError("lengths must have shape (B,) and equal the number of True entries of each mask row")


@dataclass(frozen=True)
class RegressionSetting(SequenceSetting):
    """The data of the task: token dimension ``dim`` D and ``marker`` kappa; the sizes are sequence lengths.

    Attributes
    ----------
    train_min, train_max, test_sizes, test_size, test_seed
        As in :class:`~lagtheory.experiments.tasks.sequences.driver.SequenceSetting` (sequence lengths).
    dim : int, optional
        The token dimension D, >= 2.
    marker : float, optional
        The marker kappa, finite and > 0.
    preset_key : float, optional
        ``kappa t`` of the preset query, finite and > 0.

    Raises
    ------
    ValueError
        If a field is out of range.
    """

    dim: int = 8
    marker: float = 1.0
    preset_key: float = 2.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_integer(self.dim, "dim", 2)
        check_positive(self.marker, "marker")
        check_positive(self.preset_key, "preset_key")


class RegressionTask(SequenceRegression):
    """Single-location regression as an engine task: parameters ``readout`` v (output group) and
    ``query`` q (attention group); the preset query is ``(preset_key / kappa) k*`` (marked weight
    p(n, 1; preset_key), which tends to 1 for preset_key > 1).

    Parameters
    ----------
    setting : RegressionSetting
        The data.

    Raises
    ------
    TypeError
        If ``setting`` is not a :class:`RegressionSetting`.
    """

    name = "single-location regression"

    def __init__(self, setting: RegressionSetting) -> None:
        if not isinstance(setting, RegressionSetting):
            raise TypeError(f"setting must be a RegressionSetting, got {type(setting).__name__}")
        self.setting = setting

    def parameter_shapes(self) -> Mapping[str, tuple[tuple[int, ...], str]]:
        return {"readout": ((self.setting.dim,), "output"), "query": ((self.setting.dim,), "attention")}

    def preset_attention(self) -> Mapping[str, torch.Tensor]:
        query = torch.zeros(self.setting.dim, dtype=torch.float64)
        query[KEY_COORDINATE] = self.setting.preset_key / self.setting.marker
        return {"query": query}

    def sample(
        self, rng: np.random.Generator, batch_size: int | tuple[int, ...], min_size: int, max_size: int
    ) -> RegressionBatch:
        return sample_batch(rng, batch_size, min_size, max_size, self.setting.dim, self.setting.marker)

    def predict(self, params: Mapping[str, torch.Tensor], batch: RegressionBatch) -> torch.Tensor:
        return predict(params["query"], params["readout"], batch.tokens, batch.mask, batch.lengths)

    def target(self, batch: RegressionBatch) -> torch.Tensor:
        return batch.target

    def observe(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, torch.Tensor]:
        """``query_key`` <q, k*> and ``readout_value`` <v, v*>.

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            ``query`` and ``readout`` with leading (schedule, seed) dimensions.

        Returns
        -------
        dict of str to torch.Tensor
            Each (schedules, seeds).
        """
        return {
            "query_key": params["query"][..., KEY_COORDINATE],
            "readout_value": params["readout"][..., VALUE_COORDINATE],
        }
