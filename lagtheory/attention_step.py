"""Closed forms of the first steps of the three-phase schedule from uniform attention (t = 0).

At t = 0 the pooled weight on the b's of a string with k b's among n letters is
exactly p = k / n (:eq:`eq-pooled-weight`), so the first gradient steps have
closed forms that several chapters use:

* ``mean_b_fraction``: m = E_+[k / n] (:eq:`eq-phase1`);
* ``phase_one_output``: the output layer u^(1) after one gradient step of size
  eta1 on u from theta = 0, u = 0 (:eq:`eq-phase1`, and the remark on other priors in
  :prf:ref:`thm-three-phase`);
* ``attention_factor``: G(u) = E_+[sigma(-f) log(n) p (1 - p)] at t = 0, so that
  dL/dt = -prior w G(u) (:prf:ref:`lem-gradients`); G(eta1) of :eq:`eq-phase2` is
  G(u^(1)), and the G(u_0) of :prf:ref:`thm-one-step` (b) is G(u_0);
* ``first_marker_factor``: G_F of :prf:ref:`prop-first` (c), the same factor for
  the language FIRST and the position-1 score s.

The first three take the data distribution as one :class:`lagtheory.data.Data`. Each
expectation over positives is summed exactly over the lengths n <= N, with N the smallest
length whose proven tail bound (:eq:`eq-tail-bound`) makes the truncation error at most
its ``tol``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, gammaln

from ._validation import as_float_array, check_positive
from .data import Data, check_data
from .lengths import LengthDistribution
from .memory import MEMORY_BUDGET, check_memory_budget, require_memory
from .population import STRING_BYTES, require_sum_memory

FIRST_LENGTH_BYTES = 80
"""Bytes per length of :func:`first_marker_factor`'s largest sum (about 8 float64 arrays of that
length; measured with tracemalloc, 65 bytes at N = 1355): the estimate compared with its
``memory_budget``."""
FACTOR_STRING_BYTES = 64
"""Bytes per string (n, k) of :func:`attention_factor`'s sum at one output layer (the table, the
ratio k/n, the weights and one row of logistic terms; measured with tracemalloc, 49 bytes), the
estimate compared with its ``memory_budget``. :func:`mean_b_fraction` needs about 99 bytes a
string and uses ``lagtheory.population.STRING_BYTES``."""

_BLOCK = 1 << 22  # entries of one block of the (output layers x table rows) matrix


def _checked_lengths(lengths: LengthDistribution) -> LengthDistribution:
    if not isinstance(lengths, LengthDistribution):
        raise TypeError(
            f"lengths must be a LengthDistribution such as Geometric(mean) or PowerLaw(exponent), got {lengths!r}"
        )
    return lengths


def _positives_at_t0(
    data: Data, factors: tuple[float, float], memory_budget: int, string_bytes: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(n, k / n, pi(n) kappa(k | n)) over every positive (n, k) with n <= N, N the smallest length
    with ``factors[0] P(n > N) <= tol`` and ``factors[1] E[log n; n > N] <= tol``; refused
    before anything is allocated when the sum would need more than ``memory_budget``."""
    memory_budget = check_memory_budget(memory_budget)
    mass_tol = data.tol / factors[0] if factors[0] else 1.0  # P(n > N) <= 1 always holds
    log_tol = data.tol / factors[1] if factors[1] else math.inf
    try:
        N = data.lengths.truncation_length(mass_tol, log_tol)
    except ValueError:
        N = None
    require_sum_memory(data, N, factors, memory_budget, string_bytes=string_bytes)
    n, k, kappa = data.positives._table(np.arange(1, N + 1, dtype=np.int64))
    return n, k / n, data.lengths.pmf(n) * kappa


def mean_b_fraction(data: Data, *, memory_budget: int = MEMORY_BUDGET) -> float:
    """M = E_+[k / n], the mean fraction of b's in a positive (:eq:`eq-phase1`).

    Parameters
    ----------
    data : Data
        The data distribution (:class:`lagtheory.data.Data`); its ``tol`` bounds the truncation
        error (k / n <= 1, so the neglected part is at most P(n > N)).
    memory_budget : int, optional
        The most bytes the sum may take (:data:`lagtheory.memory.MEMORY_BUDGET` by default); a sum
        that would need more is refused before anything is allocated, naming ``tol``. Keyword only.

    Returns
    -------
    float
        m.

    Examples
    --------
    One b and geometric lengths with q = 1/10 give E[1/n] = q log(1/q) / (1 - q) = log(10) / 9:

    >>> import math
    >>> from lagtheory import Data, Geometric
    >>> abs(mean_b_fraction(Data(Geometric(10))) - math.log(10) / 9) < 1e-12
    True
    """
    data = check_data(data)
    _, ratio, weight = _positives_at_t0(data, (1.0, 0.0), memory_budget, STRING_BYTES)
    return float(weight @ ratio)


def phase_one_output(eta1: float, data: Data, *, memory_budget: int = MEMORY_BUDGET) -> NDArray[np.float64]:
    """u^(1) = -eta1 grad_u L(theta = 0, u = 0), :eq:`eq-phase1`.

    At u = 0 every output is 0 and sigma(0) = 1/2, so by :eq:`eq-grad-u` with the prior
    of positives ``prior = data.prior``: dL/du_a = 1/2 - prior + prior m / 2 and
    dL/du_b = -prior m / 2, with m = :func:`mean_b_fraction`. For prior = 1/2 this is
    u^(1) = (eta1 m / 4) (-1, 1).

    Parameters
    ----------
    eta1 : float
        The step size, > 0.
    data : Data
        The data distribution; each component errs by at most eta1 ``data.tol`` / 2.
    memory_budget : int, optional
        As in :func:`mean_b_fraction`. Keyword only.

    Returns
    -------
    ndarray
        u^(1), ordered (a, b).
    """
    eta1 = check_positive(eta1, "eta1")
    m = mean_b_fraction(data, memory_budget=memory_budget)
    prior = data.prior
    return -eta1 * np.array([0.5 - prior + prior * m / 2, -prior * m / 2])


def attention_factor(u: ArrayLike, data: Data, *, memory_budget: int = MEMORY_BUDGET) -> float | NDArray[np.float64]:
    """G(u) = E_+[sigma(-f) log(n) p (1 - p)] at t = 0, where p = k / n and f = u_a + w k / n
    (:eq:`eq-phase2`, :prf:ref:`thm-one-step`): dL/dt = -prior (u_b - u_a) G(u) at t = 0.

    G(eta1) of :eq:`eq-phase2` is ``attention_factor(phase_one_output(eta1, ...), ...)``.
    The integrand is at most log(n) / 4, so the truncation error is at most
    E[log n; n > N] / 4 <= ``data.tol``.

    Parameters
    ----------
    u : array_like
        One output layer (u_a, u_b), or an array of shape (M, 2) of them.
    data : Data
        The data distribution (its prior does not enter G).
    memory_budget : int, optional
        As in :func:`mean_b_fraction`. Keyword only.

    Returns
    -------
    float or ndarray
        G(u), or M values for M output layers.
    """
    data = check_data(data)
    u_arr = as_float_array(u, "u")
    if u_arr.shape[-1:] != (2,) or u_arr.ndim > 2:
        raise ValueError(f"u must have shape (2,) or (M, 2), ordered (a, b), got shape {u_arr.shape}")
    # P(n > N) <= 1 always holds: only the log-moment condition decides N here
    n, ratio, weight = _positives_at_t0(data, (0.0, 0.25), memory_budget, FACTOR_STRING_BYTES)
    spread = weight * np.log(n) * ratio * (1 - ratio)
    mixed = spread > 0  # n = 1 and k = n contribute 0
    ratio, spread = ratio[mixed], spread[mixed]
    layers = u_arr.reshape(-1, 2)
    values = np.empty(layers.shape[0])
    block = max(1, _BLOCK // max(1, ratio.size))
    for start in range(0, layers.shape[0], block):
        c = layers[start : start + block, :1]
        w = layers[start : start + block, 1:] - c
        values[start : start + block] = expit(-(c + w * ratio)) @ spread
    return float(values[0]) if u_arr.ndim == 1 else values


def first_marker_factor(
    u: ArrayLike, lengths: LengthDistribution, *, tol: float = 1e-12, memory_budget: int = MEMORY_BUDGET
) -> float:
    """G_F of :prf:ref:`prop-first` (c): dL/ds = -(w / 2) G_F for the language FIRST with
    a position-1 score s, at theta = 0, s = 0 and the output layer ``u`` (balanced classes)::

        G_F = E_(n, j)[ log(n) (n - 1) / n^2 ( sigma(-f_+) (1 - j / (n - 1)) + sigma(f_-) j / (n - 1) ) ],

    with n ~ ``lengths``, j ~ Bin(n - 1, 1/2) the number of b's after position 1, and
    ``f_+ = u_a + w (1 + j) / n``, ``f_- = u_a + w j / n`` the outputs of the positive (first
    letter b) and of the negative (first letter a) at uniform attention. Terms with n = 1
    are 0. The bracket is at most 1 and (n - 1) / n^2 <= 1/4, so the truncation error is at
    most E[log n; n > N] / 4 <= ``tol``. The data distribution here is FIRST's (balanced
    classes, the letters after the first uniform), not a :class:`lagtheory.data.Data`: only
    the length law and the tolerance are free.

    Parameters
    ----------
    u : array_like
        The output layer (u_a, u_b).
    lengths : LengthDistribution
        The length law.
    tol : float, optional
        The bound on the truncation error, > 0. Keyword only.
    memory_budget : int, optional
        The most bytes the largest sum may take, ``FIRST_LENGTH_BYTES`` per length
        (:data:`lagtheory.memory.MEMORY_BUDGET` by default); refused before anything is allocated,
        naming ``tol``. Keyword only.

    Returns
    -------
    float
        G_F.
    """
    lengths = _checked_lengths(lengths)
    tol = check_positive(tol, "tol")
    u_arr = as_float_array(u, "u")
    if u_arr.shape != (2,):
        raise ValueError(f"u must be a vector of length 2 ordered (a, b), got shape {u_arr.shape}")
    c, w = float(u_arr[0]), float(u_arr[1] - u_arr[0])
    N = lengths.truncation_length(1.0, 4.0 * tol)  # P(n > N) <= 1 always: only the log condition binds
    memory_budget = check_memory_budget(memory_budget)
    fitting = max(lengths.min_truncation, memory_budget // FIRST_LENGTH_BYTES)
    require_memory(
        N * FIRST_LENGTH_BYTES,
        memory_budget,
        f"first_marker_factor's sum over j at the length N = {N} (set by tol = {tol:g})",
        f"tol >= {lengths.tail_log_moment_bound(fitting) / 4:.2g}",
    )
    total = 0.0
    for n in range(2, N + 1):
        j = np.arange(n, dtype=np.float64)
        binomial = np.exp(gammaln(n) - gammaln(j + 1) - gammaln(n - j) - (n - 1) * math.log(2))
        share = j / (n - 1)
        bracket = expit(-(c + w * (1 + j) / n)) * (1 - share) + expit(c + w * j / n) * share
        total += float(lengths.pmf(n)) * math.log(n) * (n - 1) / n**2 * float(binomial @ bracket)
    return total
