"""The population loss of the torch model as a finite, weighted table of token counts.

The model sees a string only through its token counts (``ShallowTransformer.forward_counts``),
so the population loss of :eq:`eq-population-loss`, truncated at a length N, is a
weighted sum over count vectors: :func:`population_table` builds the table and
:func:`lagtheory.sampled.batch_loss` evaluates it (with the exact log(1 + e^x)), so that::

    batch_loss(model, *population_table(n, k, weight, prior))

is the torch population loss whose autograd the chapters compare with the closed forms of
:prf:ref:`lem-gradients`. The chapters pass the weights pi(n) kappa(k | n) written out from
their formulas, so the table does not depend on the package's own probability mass
functions.
"""

from __future__ import annotations

import numpy as np
import torch
from numpy.typing import ArrayLike

from ._validation import as_float_array, check_counts, check_lengths, check_probability


def population_table(
    n: ArrayLike, k: ArrayLike, weight: ArrayLike, prior: float = 0.5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(counts, labels, weights) of the two-token population loss, :eq:`eq-population-loss`.

    Parameters
    ----------
    n, k, weight : array_like
        1-d arrays of one shape listing the positives: a string of length n with k >= 1 b's
        carries the probability ``weight`` = pi(n) kappa(k | n) among positives.
    prior : float, optional
        P(y = +1), in (0, 1).

    Returns
    -------
    counts, labels, weights : torch.Tensor
        One row per positive, as counts (n - k, k), label +1 and weight prior * weight; then
        one negative, the string ``a`` (counts (1, 0)), label -1 and weight 1 - prior, which
        stands for every a^n since f(a^n) = f(a) for every n (:prf:ref:`lem-pooling`:
        h(a^n) = e_a).
    """
    n_arr, k_arr, weight_arr = (as_float_array(value, name) for value, name in ((n, "n"), (k, "k"), (weight, "weight")))
    if not n_arr.shape == k_arr.shape == weight_arr.shape or n_arr.ndim != 1:
        raise ValueError(
            f"n, k and weight must be 1-d arrays of one shape, got {n_arr.shape}, {k_arr.shape}, {weight_arr.shape}"
        )
    check_lengths(n_arr)
    check_counts(k_arr, n_arr)
    if np.any(k_arr < 1) or np.any(k_arr != np.floor(k_arr)):
        raise ValueError("k must be whole numbers >= 1 (a positive has at least one b)")
    if np.any(weight_arr < 0):
        raise ValueError("weight must be >= 0 (probabilities of the positives)")
    prior = check_probability(prior, "prior")
    counts = np.vstack([np.column_stack([n_arr - k_arr, k_arr]), [[1.0, 0.0]]])
    labels = np.r_[np.ones(n_arr.size), -1.0]
    weights = np.r_[prior * weight_arr, 1.0 - prior]
    return torch.from_numpy(counts), torch.from_numpy(labels), torch.from_numpy(weights)
