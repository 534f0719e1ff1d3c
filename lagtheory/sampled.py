"""The training protocols of :mod:`lagtheory.schedules`, run by mini-batch SGD
on the torch model :class:`lagtheory.model.ShallowTransformer` instead of full-batch
GD on the exact population loss.

Data (:prf:ref:`def-data`, :eq:`eq-population-loss`): y = +1 with
probability ``prior``, else -1; a length n ~ pi; a negative is a^n; a positive
has k ~ kappa(. | n) b's. The model is permutation invariant, so it sees a
string only through its token counts: a batch is a tensor of counts
(#a, #b) = (n - k, k), fed to ``ShallowTransformer.forward_counts`` (exact, in
log space, for any length). Strings are never spelled out.

Sampling, all by inverse CDF from one ``numpy.random.Generator`` (so a seed
fixes the whole run):

* labels: y = +1 iff U < prior;
* lengths (``LengthDistribution.sample``), :class:`~lagtheory.lengths.Geometric`:
  exactly, n = 1 + floor(log(V) / log(1 - q)) with V uniform on (0, 1], since
  P(n > N) = (1 - q)^N;
* lengths, any other :class:`~lagtheory.lengths.LengthDistribution` (e.g.
  :class:`~lagtheory.lengths.PowerLaw`): inverse CDF of pi restricted to
  {1, ..., N}, N the smallest length whose proven tail bound gives
  P(n > N) <= ``tol`` of the :class:`~lagtheory.data.Data`
  (``LengthDistribution.sample_support``, the mass condition of the population
  truncation, eq. :eq:`eq-tail-bound`). The sampled law is pi conditioned on
  n <= N, within total variation ``tol`` of pi, so the expectation of any
  quantity bounded by B moves by at most 2 B tol;
* counts: k by inverse CDF of kappa(. | n) for each length
  (``CountDistribution.table``); negatives have k = 0.

Each step draws a fresh batch, takes the gradient of the batch mean of the
logistic loss l(y f) = log(1 + e^(-y f)) (:func:`lagtheory.losses.logistic_loss`)
by autograd, and moves the phase's group(s) by SGD with the phase's step
sizes: ``attention_lr`` on the attention group (theta) and ``output_lr`` on
the output group (u). In expectation over the batch this is the population
gradient of :func:`lagtheory.population` (up to the truncation above), which
is what the tests check. The loop is :func:`lagtheory.training.descend`, the
same as for the population runs, with torch's SGD as the update.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from ._validation import check_integer, check_parameter_vector, check_scaling
from .data import Data, check_data
from .losses import logistic_loss
from .memory import MEMORY_BUDGET, check_memory_budget, require_memory
from .model import ShallowTransformer
from .schedules import Phase, check_phases
from .training import RECORD_STEP_BYTES, TorchGroupOptimiser, Trajectory, TrajectoryRecorder, descend


@dataclass(frozen=True)
class Batch:
    """A mini-batch of strings given by their token counts.

    Attributes
    ----------
    counts : torch.Tensor
        float64, shape (B, 2), columns (#a, #b) = (n - k, k).
    labels : torch.Tensor
        float64, shape (B,), entries +1 (contains a b) or -1 (a^n).
    """

    counts: torch.Tensor
    labels: torch.Tensor


BATCH_BYTES = 80
"""Bytes per string of a batch of :meth:`DataSampler.sample` (its labels, lengths, counts and the
uniforms they are drawn from; measured with tracemalloc, about 50), an upper bound: the estimate
compared with ``memory_budget``."""
STEP_STRING_BYTES = 128
"""Bytes per string of one step of :func:`run_sampled`: the batch (``BATCH_BYTES``) and torch's forward and
backward on it (a few float64 per string for each intermediate of ``forward_counts`` and the loss), an upper
bound: measured 104 (the resident set's peak growth over a step on 1e6 strings; tracemalloc does not see
torch's allocations, benchmarks/bench.py's memory rows). The estimate :func:`run_sampled` compares with its
``memory_budget``."""
COUNT_CDF_BYTES = 16
"""Bytes per possible count k of a length whose count law :meth:`DataSampler.sample` keeps (k and
the cumulative sums); building it takes the count law's ``table_bytes`` per k for a moment."""


class DataSampler:
    """Seeded sampler of the data distribution D of :prf:ref:`def-data`.

    Parameters
    ----------
    data : Data
        The data distribution (:class:`~lagtheory.data.Data`); its ``tol`` is the mass beyond
        the largest length drawn from a non-geometric length law (``truncation_length``, None
        for the geometric law, whose draws are exact; see the module docstring).
    memory_budget : int, optional
        The most bytes a batch may take with the count laws it needs; the sampler keeps at most
        half of it between batches (the count laws of the lengths drawn so far)
        (:data:`lagtheory.memory.MEMORY_BUDGET` by default). Keyword only.
    """

    def __init__(self, data: Data, *, memory_budget: int = MEMORY_BUDGET) -> None:
        self.data = check_data(data)
        self.memory_budget = check_memory_budget(memory_budget)
        self.truncation_length = data.lengths.sample_support(data.tol)
        self._count_cdfs: dict[int, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
        self._kept = 0  # bytes of the count laws kept

    def sample_lengths(self, size: int, rng: np.random.Generator) -> NDArray[np.int64]:
        """``size`` lengths n ~ pi (exact for Geometric, truncated at N otherwise).

        Parameters
        ----------
        size : int
            How many lengths.
        rng : numpy.random.Generator
            The source of randomness.

        Returns
        -------
        ndarray
            int64 lengths.
        """
        return self.data.lengths.sample(size, rng, self.data.tol, memory_budget=self.memory_budget)

    def sample_counts(self, n: NDArray[np.int64], rng: np.random.Generator) -> NDArray[np.int64]:
        """One k ~ kappa(. | n) for each entry of ``n`` (positives).

        Parameters
        ----------
        n : ndarray
            int64 lengths of positives.
        rng : numpy.random.Generator
            The source of randomness.

        Returns
        -------
        ndarray
            int64 counts of b, one per length.
        """
        lengths = np.unique(n)
        new = np.array([length for length in lengths if int(length) not in self._count_cdfs], dtype=np.int64)
        rows = self.data.positives.rows(new)
        require_memory(
            n.size * BATCH_BYTES + rows * self.data.positives.table_bytes,
            self.memory_budget,
            f"the counts of {n.size} positives, with the count laws of {new.size} new lengths ({rows:.3g} counts k)",
            "a smaller batch_size, or a larger tol of the data (shorter lengths)",
        )
        if self._kept + rows * COUNT_CDF_BYTES > self.memory_budget // 2:
            self._count_cdfs.clear()
            self._kept = 0
        uniform = rng.random(n.size)
        k = np.empty(n.size, dtype=np.int64)
        for length in lengths:
            ks, cdf = self._count_cdf(int(length))
            chosen = n == length
            index = np.searchsorted(cdf, uniform[chosen] * cdf[-1], side="right")
            k[chosen] = ks[index]
        return k

    def sample(self, batch_size: int, rng: np.random.Generator) -> Batch:
        """A batch of ``batch_size`` i.i.d. strings from D, as counts and labels.

        Parameters
        ----------
        batch_size : int
            >= 1.
        rng : numpy.random.Generator
            The source of randomness.

        Returns
        -------
        Batch
            Counts and labels.
        """
        check_integer(batch_size, "batch_size", minimum=1)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        require_memory(
            batch_size * BATCH_BYTES,
            self.memory_budget,
            f"a batch of batch_size = {batch_size} strings",
            f"batch_size <= {self.memory_budget // BATCH_BYTES:.3g}",
        )
        positive = rng.random(batch_size) < self.data.prior
        n = self.sample_lengths(batch_size, rng)
        k = np.zeros(batch_size, dtype=np.int64)
        k[positive] = self.sample_counts(n[positive], rng)
        counts = np.stack([n - k, k], axis=1).astype(np.float64)
        labels = np.where(positive, 1.0, -1.0)
        return Batch(counts=torch.from_numpy(counts), labels=torch.from_numpy(labels))

    def _count_cdf(self, length: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The support and the cumulative sums of kappa(. | length), cached."""
        if length not in self._count_cdfs:
            _, ks, kappa = self.data.positives._table(np.array([length], dtype=np.int64))
            self._count_cdfs[length] = (ks.astype(np.int64), np.cumsum(kappa))
            self._kept += ks.size * COUNT_CDF_BYTES
        return self._count_cdfs[length]


def batch_loss(
    model: ShallowTransformer, counts: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor | None = None
) -> torch.Tensor:
    """``sum_i weights_i l(y_i f(x_i))`` with the exact logistic loss l (:func:`lagtheory.losses.logistic_loss`).

    Parameters
    ----------
    model : ShallowTransformer
        The model, evaluated by ``model.forward_counts``.
    counts : torch.Tensor
        (#a, #b, ...) per string, shape (B, vocabulary size).
    labels : torch.Tensor
        +1 or -1 per string, shape (B,).
    weights : torch.Tensor, optional
        Per string; default 1/B, the batch mean.

    Returns
    -------
    torch.Tensor
        The weighted loss, a scalar.
    """
    losses = logistic_loss(labels * model.forward_counts(counts))
    if weights is None:
        return losses.mean()
    return losses @ weights


# The keyword arguments of population_gd.run_schedule on purpose: the sampled runner is its counterpart with a
# batch size and a seed.
def run_sampled(
    phases: list[Phase],
    data: Data,
    batch_size: int,
    seed: int,
    *,
    theta0: ArrayLike = (0.0, 0.0),
    u0: ArrayLike = (0.0, 0.0),
    scaling: str = "log",
    max_length: int = 10**12,
    memory_budget: int = MEMORY_BUDGET,
) -> Trajectory:
    """Run the phases by mini-batch SGD on the two-token linear ShallowTransformer.

    Parameters
    ----------
    phases : list of Phase
        The schedule (e.g. ``schedules.three_phase(...)``).
    data : Data
        The data distribution the batches are drawn from (:class:`~lagtheory.data.Data`).
    batch_size : int
        Strings per batch, >= 1.
    seed : int
        >= 0; the batches are drawn with ``numpy.random.default_rng(seed)``.
    theta0, u0 : array_like, optional
        The starting point, ordered (a, b). Keyword only, as are the rest.
    scaling : {"log", "none"}, optional
        Length-scaled attention or unscaled softmax.
    max_length : int, optional
        The longest length of the exact recognition verdicts.
    memory_budget : int, optional
        The most bytes the run's record (:func:`lagtheory.training.descend`, ``RECORD_STEP_BYTES`` a
        step), each step on a batch (``STEP_STRING_BYTES`` a string) and each batch's count laws
        (:class:`DataSampler`) may take (:data:`lagtheory.memory.MEMORY_BUDGET` by default); refused
        before anything is allocated, naming the argument that drives it.

    Returns
    -------
    Trajectory
        (:class:`~lagtheory.training.Trajectory`) Row 0 is the initial point, row i the point after step i; ``loss[i]`` is the
        mini-batch loss at point i on the batch whose gradient makes step i + 1 (the last row
        gets one extra evaluation batch); ``horizon`` and ``recognises`` are exact
        (:func:`lagtheory.exact_recognition.recognition`, all lengths up to ``max_length``).
    """
    check_phases(phases)
    check_integer(batch_size, "batch_size", minimum=1)
    check_integer(seed, "seed", minimum=0)
    theta = check_parameter_vector(theta0, "theta0")
    u = check_parameter_vector(u0, "u0")
    check_scaling(scaling)
    sampler = DataSampler(data, memory_budget=memory_budget)  # batches and the step plan check their memory
    require_memory(
        batch_size * STEP_STRING_BYTES,
        sampler.memory_budget,
        f"a step on batch_size = {batch_size} strings (the batch, the model's forward and backward on it)",
        f"batch_size <= {sampler.memory_budget // STEP_STRING_BYTES:.3g}",
    )
    rng = np.random.default_rng(int(seed))

    model = ShallowTransformer(vocab_size=2, readout="linear", scaling=scaling)
    with torch.no_grad():
        model.theta.copy_(torch.from_numpy(theta))
        model.u.copy_(torch.from_numpy(u))
    optimiser = TorchGroupOptimiser([[model.theta]], [[model.u]], kind="sgd")
    recorder = TrajectoryRecorder(max_length, scaling)

    def record(loss: float) -> None:
        recorder.record(model.theta.detach().numpy(), model.u.detach().numpy(), loss)

    def gradient(step: int, phases_now: tuple[Phase | None, ...]) -> NDArray[np.float64]:
        batch = sampler.sample(batch_size, rng)
        loss = batch_loss(model, batch.counts, batch.labels)
        optimiser.backward(loss, phases_now)
        record(loss.item())
        return np.array([loss.item()])

    descend([phases], gradient, optimiser, memory_budget=sampler.memory_budget, kept_per_step=RECORD_STEP_BYTES)
    batch = sampler.sample(batch_size, rng)
    with torch.no_grad():
        record(batch_loss(model, batch.counts, batch.labels).item())
    return recorder.trajectory(phases)
