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

The prediction is computed from each prompt's moment matrix ``C = (1/m)
sum_i z_i z_i^T`` as ``y_hat = w^T C K x_q`` (the same number as the sum
above), which keeps the cost independent of ``m`` once C is formed. Runs go
through the shared driver
:class:`lagtheory.experiments.tasks.sequences.driver.SequenceRegression` and the engine
(:func:`lagtheory.experiments.engine.cells.run_cell`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from lagtheory._validation import check_integer, check_positive

from .driver import SequenceRegression, SequenceSetting, draw_shape, seed_einsum


@dataclass(frozen=True)
class PromptBatch:
    """Padded prompts: ``inputs`` (..., B, M, D) and ``labels`` (..., B, M), zero on
    padding; ``mask`` (..., B, M) True on the ``counts`` (..., B) real pairs; ``query``
    (..., B, D), ``query_label`` (..., B), the task vectors ``beta`` (..., B, D), and the
    moment matrices ``moments`` (..., B, D+1, D+1), ``C = (1/m) sum_i z_i z_i^T``.

    Attributes
    ----------
    inputs : torch.Tensor
        (..., B, M, D), zero on padding.
    labels : torch.Tensor
        (..., B, M), zero on padding.
    mask : torch.Tensor
        bool (..., B, M), True on the real pairs.
    counts : torch.Tensor
        float64 (..., B), the context sizes m >= 1.
    query : torch.Tensor
        (..., B, D).
    query_label : torch.Tensor
        (..., B).
    beta : torch.Tensor
        (..., B, D), the task vectors.
    moments : torch.Tensor or None
        (..., B, D+1, D+1), or None for a model that reads the pairs.
    """

    inputs: torch.Tensor
    labels: torch.Tensor
    mask: torch.Tensor
    counts: torch.Tensor
    query: torch.Tensor
    query_label: torch.Tensor
    beta: torch.Tensor
    moments: torch.Tensor | None


def prompt_batch(
    inputs: torch.Tensor,
    labels: torch.Tensor,
    mask: torch.Tensor,
    counts: torch.Tensor,
    query: torch.Tensor,
    query_label: torch.Tensor,
    beta: torch.Tensor,
    moments: bool = True,
) -> PromptBatch:
    """A :class:`PromptBatch` with its moment matrices computed from the pairs (padding rows are zero):
    ``C = [[X^T X, X^T y], [y^T X, y^T y]] / m`` (the tokens z_i = (x_i, y_i) are never concatenated);
    without them (``moments=False``, for a model that reads the pairs) the field is None.

    Parameters
    ----------
    inputs : torch.Tensor
        (..., B, M, D), zero on padding.
    labels : torch.Tensor
        (..., B, M), zero on padding.
    mask : torch.Tensor
        bool (..., B, M), True on the real pairs.
    counts : torch.Tensor
        float64 (..., B), the context sizes m >= 1.
    query : torch.Tensor
        (..., B, D).
    query_label : torch.Tensor
        (..., B).
    beta : torch.Tensor
        (..., B, D), the task vectors.
    moments : bool, optional
        Whether to compute the moment matrices.

    Returns
    -------
    PromptBatch
        The batch.
    """
    if not moments:
        return PromptBatch(inputs, labels, mask, counts, query, query_label, beta, None)
    inputs_t = inputs.transpose(-1, -2)
    cross = inputs_t @ labels.unsqueeze(-1)  # X^T y, (..., D, 1)
    top = torch.cat([inputs_t @ inputs, cross], dim=-1)
    bottom = torch.cat([cross.transpose(-1, -2), (labels * labels).sum(dim=-1)[..., None, None]], dim=-1)
    moments = torch.cat([top, bottom], dim=-2) / counts.unsqueeze(-1).unsqueeze(-1)
    return PromptBatch(inputs, labels, mask, counts, query, query_label, beta, moments)


def sample_prompts(
    rng: np.random.Generator | list[np.random.Generator],
    batch_size: int | tuple[int, ...],
    min_context: int,
    max_context: int,
    dim: int,
    moments: bool = True,
) -> PromptBatch:
    """Draw ``batch_size`` prompts with context sizes ``m`` uniform on
    ``{min_context, ..., max_context}`` (padded to ``max_context``), the data of
    the module docstring; ``batch_size`` may be a shape (several steps' batches at
    once). From each generator, in this order: the context sizes, the task vectors,
    the inputs of all ``max_context`` pairs (those past a prompt's context size are
    then set to 0), the queries; ``moments`` as in :func:`prompt_batch`. ``rng`` may be
    a list of generators (one per seed):
    the result then has a leading seed dimension, and seed j's part equals the draw
    from ``rng[j]`` alone.

    Parameters
    ----------
    rng : numpy.random.Generator or list of numpy.random.Generator
        One generator, or a non-empty list of them (one per seed).
    batch_size : int or tuple of int
        Prompts per batch, or a shape; each entry >= 1.
    min_context : int
        The smallest context size, >= 1.
    max_context : int
        The largest context size, >= ``min_context``.
    dim : int
        The input dimension D, >= 1.
    moments : bool, optional
        Whether to compute the moment matrices.

    Returns
    -------
    PromptBatch
        The prompts.

    Raises
    ------
    TypeError
        If ``rng`` is not a generator or a list of them, or a size is not an integer.
    ValueError
        If a size is out of range.
    """
    rngs, shape = draw_shape(rng, batch_size, min_context, max_context, ("min_context", "max_context"))
    check_integer(dim, "dim", minimum=1)
    counts = np.empty((len(rngs), *shape), dtype=np.int64)
    beta = np.empty((len(rngs), *shape, dim))
    inputs = np.empty((len(rngs), *shape, max_context, dim))
    query = np.empty((len(rngs), *shape, dim))
    for j, generator in enumerate(rngs):
        counts[j] = generator.integers(min_context, max_context + 1, size=shape)
        generator.standard_normal(out=beta[j])
        generator.standard_normal(out=inputs[j])
        generator.standard_normal(out=query[j])
    beta /= dim**0.5
    mask = np.arange(max_context) < counts[..., None]
    inputs *= mask[..., None]
    if not isinstance(rng, list):
        counts, beta, inputs, query, mask = counts[0], beta[0], inputs[0], query[0], mask[0]
    beta_t, inputs_t, query_t = torch.from_numpy(beta), torch.from_numpy(inputs), torch.from_numpy(query)
    labels = linear_labels(beta_t, inputs_t)
    return prompt_batch(
        inputs_t,
        labels,
        torch.from_numpy(mask),
        torch.from_numpy(counts.astype(np.float64)),
        query_t,
        linear_labels(beta_t, query_t),
        beta_t,
        moments,
    )


def linear_labels(beta: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
    """``y = <beta, x>`` for each prompt's task vector.

    Parameters
    ----------
    beta : torch.Tensor
        (..., B, D), the task vectors.
    inputs : torch.Tensor
        (..., B, M, D) or (..., B, D).

    Returns
    -------
    torch.Tensor
        (..., B, M) or (..., B).
    """
    if inputs.ndim == beta.ndim + 1:
        return (inputs @ beta.unsqueeze(-1)).squeeze(-1)
    return (beta * inputs).sum(dim=-1)


def predict(key_query: torch.Tensor, value: torch.Tensor, batch: PromptBatch) -> torch.Tensor:
    """``y_hat = w^T C K x_q`` of each prompt, shape (..., B): ``key_query`` K (..., D+1, D) and ``value``
    w (..., D+1) with any leading (schedule, seed) dimensions, the batch with or without a seed dimension.

    Parameters
    ----------
    key_query : torch.Tensor
        K (..., D+1, D), any leading (schedule, seed) dimensions.
    value : torch.Tensor
        w (..., D+1), the same leading dimensions.
    batch : PromptBatch
        The prompts, with their moment matrices, with or without a seed dimension.

    Returns
    -------
    torch.Tensor
        (..., B).
    """
    keyed_query = seed_einsum("ad,bd->ba", key_query, batch.query, 2)  # K x_q, (..., B, D+1)
    read = seed_einsum("a,bac->bc", value, batch.moments, 1)  # w^T C, (..., B, D+1)
    return (read * keyed_query).sum(dim=-1)


def effective_matrix(key_query: ArrayLike, value: ArrayLike) -> NDArray[np.float64]:
    """``Gamma = w_y K_x + w_x k_y^T``, the label-odd part ``g^T Gamma x_q`` of the prediction.

    Parameters
    ----------
    key_query : array_like
        K (..., D+1, D).
    value : array_like
        w (..., D+1).

    Returns
    -------
    ndarray
        float64 (..., D, D).
    """
    key_query = np.asarray(key_query, dtype=np.float64)
    value = np.asarray(value, dtype=np.float64)
    return value[..., -1, None, None] * key_query[..., :-1, :] + value[..., :-1, None] * key_query[..., -1, None, :]


class PromptAttentionLayer(torch.nn.Module):
    """One attention layer over a prompt, for one set of parameters (the engine trains many at once
    through the module's ``predict``): ``key_query`` K (D+1, D), the attention group, and ``value`` w
    (D+1,), the output group, both float64 and zero at construction; the last entry of ``value`` and
    the last row of ``key_query`` act on the labels. A subclass names its ``prediction``
    (key_query, value, batch) -> y_hat.

    Parameters
    ----------
    dim : int
        The input dimension D, >= 1.

    Raises
    ------
    ValueError
        If ``dim`` < 1.
    TypeError
        If ``dim`` is not an integer.
    """

    prediction: ClassVar[Callable[[torch.Tensor, torch.Tensor, PromptBatch], torch.Tensor]]

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = check_integer(dim, "dim", minimum=1)
        self.key_query = torch.nn.Parameter(torch.zeros(dim + 1, dim, dtype=torch.float64))
        self.value = torch.nn.Parameter(torch.zeros(dim + 1, dtype=torch.float64))

    @classmethod
    def with_parameters(cls, key_query: ArrayLike, value: ArrayLike) -> Self:
        """A layer whose parameters are copies (float64) of ``key_query`` and ``value``.

        Parameters
        ----------
        key_query : array_like
            K (D+1, D).
        value : array_like
            w (D+1,), D >= 1.

        Returns
        -------
        PromptAttentionLayer
            The layer (of the class it is called on).

        Raises
        ------
        ValueError
            If the shapes do not fit.
        """
        value_array = np.asarray(value, dtype=np.float64)
        if value_array.ndim != 1 or value_array.shape[0] < 2:
            raise ValueError(f"value must be a vector of length D + 1 >= 2, got shape {value_array.shape}")
        dim = value_array.shape[0] - 1
        key_query_array = np.asarray(key_query, dtype=np.float64)
        if key_query_array.shape != (dim + 1, dim):
            raise ValueError(
                f"key_query must have shape (D + 1, D) = {(dim + 1, dim)} for a value of length {dim + 1}, "
                f"got {key_query_array.shape}"
            )
        layer = cls(dim)
        with torch.no_grad():
            layer.key_query.copy_(torch.from_numpy(key_query_array))
            layer.value.copy_(torch.from_numpy(value_array))
        return layer

    def forward(self, batch: PromptBatch) -> torch.Tensor:
        """The prediction ``y_hat`` of each prompt, shape (B,).

        Parameters
        ----------
        batch : PromptBatch
            Prompts of the layer's dimension D.

        Returns
        -------
        torch.Tensor
            (B,).

        Raises
        ------
        TypeError
            If ``batch`` is not a :class:`PromptBatch`.
        ValueError
            If its inputs are not of dimension D.
        """
        if not isinstance(batch, PromptBatch):
            raise TypeError(f"batch must be a PromptBatch, got {type(batch).__name__}")
        if batch.inputs.shape[-1] != self.dim:
            raise ValueError(f"batch inputs must have dimension {self.dim}, got {batch.inputs.shape[-1]}")
        return self.prediction(self.key_query, self.value, batch)


class LinearSelfAttention(PromptAttentionLayer):
    """``y_hat = (1/m) sum_i <w, z_i> <z_i, K x_q>`` (module docstring, :func:`predict`)."""

    prediction = staticmethod(predict)

    def effective_matrix(self) -> NDArray[np.float64]:
        """:func:`effective_matrix` of this model (D, D)."""
        with torch.no_grad():
            return effective_matrix(self.key_query.numpy(), self.value.numpy())


def one_step_gd_prediction(batch: PromptBatch, step_size: float) -> torch.Tensor:
    """``(eta/m) sum_i y_i <x_i, x_q>``: one gradient step of size eta from beta = 0
    on the in-context loss ``1/(2m) sum_i (y_i - <beta, x_i>)^2``, evaluated at x_q.

    Parameters
    ----------
    batch : PromptBatch
        The prompts (B, M, D), without a seed dimension.
    step_size : float
        eta, finite and > 0.

    Returns
    -------
    torch.Tensor
        (B,).

    Raises
    ------
    ValueError
        If ``step_size`` is not finite and > 0.
    """
    check_positive(step_size, "step_size")
    g = (batch.labels.unsqueeze(2) * batch.inputs).sum(dim=1) / batch.counts.unsqueeze(1)
    return step_size * (g * batch.query).sum(dim=1)


def least_squares_prediction(batch: PromptBatch) -> torch.Tensor:
    """``<beta_hat, x_q>`` with beta_hat the minimum-norm least-squares fit of each
    prompt's pairs (exact recovery once m >= D; the padding rows are zero and do not count).

    Parameters
    ----------
    batch : PromptBatch
        The prompts (B, M, D), without a seed dimension.

    Returns
    -------
    torch.Tensor
        (B,).
    """
    beta_hat = torch.linalg.pinv(batch.inputs) @ batch.labels.unsqueeze(2)
    return (beta_hat.squeeze(2) * batch.query).sum(dim=1)


def optimal_step(dim: int, min_context: int, max_context: int) -> float:
    """The step eta minimising the population error of ``eta g^T x_q`` when m is
    uniform on ``{min_context, ..., max_context}``: ``1 / (1 + (D+1) E[1/m])``.

    Parameters
    ----------
    dim : int
        The input dimension D, >= 1.
    min_context : int
        The smallest context size, >= 1.
    max_context : int
        The largest, >= ``min_context``.

    Returns
    -------
    float
        eta.

    Raises
    ------
    ValueError
        If an argument is out of range.
    TypeError
        If an argument is not an integer.
    """
    check_integer(dim, "dim", minimum=1)
    check_integer(min_context, "min_context", minimum=1)
    check_integer(max_context, "max_context", minimum=min_context)
    mean_inverse = float(np.mean(1.0 / np.arange(min_context, max_context + 1)))
    return 1.0 / (1.0 + (dim + 1) * mean_inverse)


def one_step_gd_error(step_size: float, context: NDArray[np.float64] | float, dim: int) -> NDArray[np.float64]:
    """Population mean squared error of ``eta g^T x_q`` at context size m:
    ``eta^2 (1 + (D+1)/m) - 2 eta + 1`` (it tends to ``(1 - eta)^2`` as m grows).

    Parameters
    ----------
    step_size : float
        eta, finite and > 0.
    context : ndarray or float
        Context sizes m, whole numbers >= 1.
    dim : int
        The input dimension D, >= 1.

    Returns
    -------
    ndarray
        float64, the shape of ``context``.

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    check_positive(step_size, "step_size")
    check_integer(dim, "dim", minimum=1)
    m = np.asarray(context, dtype=np.float64)
    if np.any(m < 1) or np.any(m != np.floor(m)):
        raise ValueError("context must hold whole numbers >= 1 (context sizes m)")
    return step_size**2 * (1.0 + (dim + 1) / m) - 2.0 * step_size + 1.0


def mean_squared_error(prediction: torch.Tensor, batch: PromptBatch) -> float:
    """``mean (y_hat - y_q)^2`` over the batch.

    Parameters
    ----------
    prediction : torch.Tensor
        The predictions, the shape of ``batch.query_label``.
    batch : PromptBatch
        The prompts.

    Returns
    -------
    float
        The mean squared error.
    """
    return float(((prediction.detach() - batch.query_label) ** 2).mean())


@dataclass(frozen=True)
class ICLSetting(SequenceSetting):
    """The data of the task: input dimension ``dim`` D; the sizes are context sizes m.

    Attributes
    ----------
    train_min, train_max, test_sizes, test_size, test_seed
        As in :class:`~lagtheory.experiments.tasks.sequences.driver.SequenceSetting` (context sizes).
    dim : int, optional
        The input dimension D, >= 1.

    Raises
    ------
    ValueError
        If a field is out of range.
    """

    dim: int = 5

    def __post_init__(self) -> None:
        super().__post_init__()
        check_integer(self.dim, "dim", 1)


class PromptRegressionTask(SequenceRegression):
    """In-context regression read by a :class:`PromptAttentionLayer`, as an engine task: parameters
    ``value`` w (output group) and ``key_query`` K (attention group), target y_q. A subclass names its
    ``prediction`` and whether its prompts carry the moments ``C`` (``moments``)."""

    prediction: ClassVar[Callable[[torch.Tensor, torch.Tensor, PromptBatch], torch.Tensor]]
    moments: ClassVar[bool]
    setting: ICLSetting

    def parameter_shapes(self) -> Mapping[str, tuple[tuple[int, ...], str]]:
        d = self.setting.dim
        return {"value": ((d + 1,), "output"), "key_query": ((d + 1, d), "attention")}

    def sample(
        self, rng: np.random.Generator, batch_size: int | tuple[int, ...], min_size: int, max_size: int
    ) -> PromptBatch:
        return sample_prompts(rng, batch_size, min_size, max_size, self.setting.dim, moments=self.moments)

    def predict(self, params: Mapping[str, torch.Tensor], batch: PromptBatch) -> torch.Tensor:
        return self.prediction(params["key_query"], params["value"], batch)

    def target(self, batch: PromptBatch) -> torch.Tensor:
        return batch.query_label

    def observe(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, torch.Tensor]:
        """``label_value`` w_y and ``key_query_trace`` tr(K_x)/D.

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            ``value`` and ``key_query`` with leading (schedule, seed) dimensions.

        Returns
        -------
        dict of str to torch.Tensor
            Each (schedules, seeds).
        """
        key_query = params["key_query"]
        trace = torch.diagonal(key_query[..., :-1, :], dim1=-2, dim2=-1).mean(dim=-1)
        return {"label_value": params["value"][..., -1], "key_query_trace": trace}


class ICLTask(PromptRegressionTask):
    """In-context linear regression read by the linear layer (:func:`predict`); the preset K is
    ``(eta* I; 0)`` with eta* the :func:`optimal_step` of the training context sizes (with
    w = e_(D+1) it predicts like one step of gradient descent with eta*).

    Parameters
    ----------
    setting : ICLSetting
        The data.

    Raises
    ------
    TypeError
        If ``setting`` is not an :class:`ICLSetting`.
    """

    name = "in-context linear regression"
    prediction = staticmethod(predict)
    moments = True

    def __init__(self, setting: ICLSetting) -> None:
        if type(setting) is not ICLSetting:
            raise TypeError(f"setting must be an ICLSetting, got {type(setting).__name__}")
        self.setting = setting

    def preset_attention(self) -> Mapping[str, torch.Tensor]:
        d = self.setting.dim
        eta = optimal_step(d, self.setting.train_min, self.setting.train_max)
        return {
            "key_query": torch.cat([eta * torch.eye(d, dtype=torch.float64), torch.zeros(1, d, dtype=torch.float64)])
        }
