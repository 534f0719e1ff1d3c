"""The pooled weight of the attention layer on the symbol b.

For a string of length ``n`` with ``k`` b's and attention difference
``t = theta_b - theta_a``, length-scaled attention gives every b the weight
``n**t / (k n**t + n - k)``, so the pooled vector is ``h = (1 - p, p)`` with

    p(n, k; t) = k n^t / (k n^t + n - k)                      (:eq:`eq-pooled-weight`)

and, for unscaled softmax,

    p(n, k; t) = k e^t / (k e^t + n - k)                      (:eq:`eq-unscaled`).

Both are logistic functions of a log-odds, ``p = expit(z)`` with
``z = log k - log(n - k) + t log n`` (resp. ``+ t``), which is how they are
computed here: finite and warning-free for n up to 1e18 and ``|t|`` up to 1e3.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from ._validation import as_float_array, check_counts, check_lengths, check_scaling
from .memory import MEMORY_BUDGET, check_memory_budget, require_memory

ELEMENT_BYTES = 32
"""Bytes per element of the broadcast shape of ``n``, ``k`` and ``t`` at the peak of
:func:`pooled_log_odds` and :func:`pooled_weight` (their log-odds and its parts), an upper bound:
measured with tracemalloc, 16 bytes when ``n`` and ``k`` broadcast to fewer elements than ``t``
and 24 when they span the whole shape; the estimate compared with ``memory_budget``."""
DT_ELEMENT_BYTES = 48
"""The same for :func:`pooled_weight_dt`, which also keeps ``s(n)`` and both logistic weights:
measured 32 bytes per element."""


def _score_scale(n: NDArray[np.float64], scaling: str) -> NDArray[np.float64]:
    """The factor multiplying t in the log-odds: log n (scaled) or 1 (unscaled)."""
    return np.log(n) if scaling == "log" else np.ones_like(n)


def pooled_log_odds(
    n: ArrayLike, k: ArrayLike, t: ArrayLike, scaling: str = "log", *, memory_budget: int = MEMORY_BUDGET
) -> NDArray[np.float64]:
    """Log-odds ``z = log k - log(n - k) + t * s(n)`` of the pooled weight (:eq:`eq-pooled-weight`).

    Parameters
    ----------
    n, k, t : array_like
        Lengths (whole numbers >= 1), counts of b (0 <= k <= n) and the attention difference
        ``t = theta_b - theta_a`` (finite); they broadcast against each other.
    scaling : {"log", "none"}, optional
        ``s(n) = log n`` for length-scaled attention, 1 for unscaled softmax.
    memory_budget : int, optional
        The most bytes the call may take, ``ELEMENT_BYTES`` per element of the shape that ``n``,
        ``k`` and ``t`` broadcast to (:data:`lagtheory.memory.MEMORY_BUDGET` by default); refused
        before anything is allocated. Keyword only.

    Returns
    -------
    ndarray
        The log-odds, float64; -inf where k = 0 and +inf where k = n.

    Examples
    --------
    >>> import math
    >>> float(pooled_log_odds(10, 1, 0.0)) == math.log(1 / 9)
    True
    """
    n_arr, k_arr, t_arr = _validated(n, k, t, scaling, memory_budget)
    return _log_odds(n_arr, k_arr, t_arr, scaling)


def pooled_weight(
    n: ArrayLike, k: ArrayLike, t: ArrayLike, scaling: str = "log", *, memory_budget: int = MEMORY_BUDGET
) -> NDArray[np.float64] | float:
    """Attention mass on the b's, ``p(n, k; t)`` of :eq:`eq-pooled-weight` (scaled) or :eq:`eq-unscaled`.

    Parameters
    ----------
    n, k, t : array_like
        Lengths (whole numbers >= 1), counts of b (0 <= k <= n) and the attention difference
        ``t = theta_b - theta_a`` (finite); they broadcast against each other.
    scaling : {"log", "none"}, optional
        Length-scaled attention (``"log"``, :eq:`eq-pooled-weight`) or unscaled softmax
        (``"none"``, :eq:`eq-unscaled`).
    memory_budget : int, optional
        As in :func:`pooled_log_odds`. Keyword only.

    Returns
    -------
    float or ndarray
        A float for scalar input, else a float64 array.

    Examples
    --------
    One b among ten letters gets the weight ``k n^t / (k n^t + n - k)``: 10/19 at t = 1.

    >>> pooled_weight(10, 1, 1.0) == 10 / 19
    True
    >>> pooled_weight([10, 100], 1, 1.0)
    array([0.52631579, 0.50251256])
    """
    n_arr, k_arr, t_arr = _validated(n, k, t, scaling, memory_budget)
    p = expit(_log_odds(n_arr, k_arr, t_arr, scaling))
    return float(p) if p.ndim == 0 else p


def pooled_weight_dt(
    n: ArrayLike, k: ArrayLike, t: ArrayLike, scaling: str = "log", *, memory_budget: int = MEMORY_BUDGET
) -> NDArray[np.float64] | float:
    """Derivative ``dp/dt = s(n) p (1 - p)`` of :eq:`eq-dp-dt`.

    ``p (1 - p)`` is formed as ``expit(z) expit(-z)`` so it never cancels to a spurious 0 or
    goes negative.

    Parameters
    ----------
    n, k, t : array_like
        As in :func:`pooled_weight`.
    scaling : {"log", "none"}, optional
        ``s(n) = log n`` (``"log"``) or 1 (``"none"``).
    memory_budget : int, optional
        As in :func:`pooled_log_odds`, with ``DT_ELEMENT_BYTES`` per element. Keyword only.

    Returns
    -------
    float or ndarray
        A float for scalar input, else a float64 array.
    """
    n_arr, k_arr, t_arr = _validated(n, k, t, scaling, memory_budget, DT_ELEMENT_BYTES)
    z = _log_odds(n_arr, k_arr, t_arr, scaling)
    derivative = _score_scale(np.broadcast_to(n_arr, z.shape), scaling) * expit(z) * expit(-z)
    return float(derivative) if derivative.ndim == 0 else derivative


def _validated(
    n: ArrayLike, k: ArrayLike, t: ArrayLike, scaling: str, memory_budget: int, element_bytes: int = ELEMENT_BYTES
):
    check_scaling(scaling)
    n_arr = as_float_array(n, "n")
    k_arr = as_float_array(k, "k")
    t_arr = as_float_array(t, "t")
    shape = np.broadcast_shapes(n_arr.shape, k_arr.shape, t_arr.shape)
    elements = math.prod(shape)
    memory_budget = check_memory_budget(memory_budget)
    require_memory(
        elements * element_bytes,
        memory_budget,
        f"n, k and t broadcast to the shape {shape} ({elements:.3g} elements)",
        f"arguments that broadcast to at most {memory_budget // element_bytes:.3g} elements",
    )
    check_lengths(n_arr)
    n_b, k_b = np.broadcast_arrays(n_arr, k_arr)
    check_counts(k_b, n_b)
    return n_arr, k_arr, t_arr


def _log_odds(
    n: NDArray[np.float64], k: NDArray[np.float64], t: NDArray[np.float64], scaling: str
) -> NDArray[np.float64]:
    base, scale = _log_odds_parts(*np.broadcast_arrays(n, k), scaling)
    return base + t * scale


def _log_odds_parts(n: ArrayLike, k: ArrayLike, scaling: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The two parts of the log-odds ``z = base + t * scale`` :eq:`eq-pooled-weight`: ``base = log k -
    log(n - k)`` (-inf where k = 0, +inf where k = n) and ``scale = s(n)``. Trusted inner path:
    ``n`` (>= 1), ``k`` (0 <= k <= n) and ``scaling`` are not checked; the population sums cache
    both parts."""
    with np.errstate(divide="ignore"):  # log 0 = -inf is the intended value at k = 0 and k = n
        base = np.log(k) - np.log(np.subtract(n, k))
    return base, _score_scale(np.asarray(n, dtype=np.float64), scaling)
