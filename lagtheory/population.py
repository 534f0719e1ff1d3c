"""The exact population loss of :eq:`eq-population-loss` and its gradients.

Data: y = +1 with probability ``prior`` (1/2 in the theorems), y = -1 otherwise;
a negative is a^n (pooled weight 0, so f = u_a whatever the length); a positive
has length n ~ pi and k ~ kappa(. | n) b's. With c = u_a, w = u_b - u_a,
t = theta_b - theta_a and p = p(n, k; t):

    L = (1 - prior) softplus(u_a) + prior E_+[softplus(-(c + w p))]
    dL/du_a = (1 - prior) sigma(u_a) - prior E_+[sigma(-f) (1 - p)]        :eq:`eq-grad-u`
    dL/du_b = - prior E_+[sigma(-f) p]                                       :eq:`eq-grad-u`
    dL/dt   = - prior w E_+[sigma(-f) s(n) p (1 - p)],  s(n) = log n        :eq:`eq-grad-t`
    dL/dtheta = (-dL/dt, dL/dt)                   (softmax shift invariance)

The data distribution (lengths, positives, prior, tol) is one :class:`lagtheory.data.Data`.
The expectation over positives is summed exactly over lengths n <= N, with N
the smallest length whose proven tail bound makes the truncation error of the
loss and of every gradient component at most ``tol`` (``error_bound``, :eq:`eq-tail-bound`).
For a power law whose N would make that sum long, the lengths n <= N0 are summed
exactly and the rest is the tail expansion of :mod:`lagtheory.heavy_tail`
(:prf:ref:`thm-tail-expansion`), whose proven error bound is again at most ``tol``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from ._validation import check_parameter_vector, check_scaling
from .counts import CountDistribution
from .data import Data, check_data
from .heavy_tail import ExpansionTooCostly, string_bounds, tail_expansion
from .lengths import LengthDistribution
from .per_string import per_string_terms, softplus
from .pooling import _log_odds_parts


@dataclass(frozen=True)
class Population:
    """Loss and gradients of the population objective at one (theta, u).

    Every output is within ``error_bound`` of its exact value.

    Attributes
    ----------
    loss : float
        The population loss :eq:`eq-population-loss`.
    grad_theta, grad_u : ndarray
        Its gradients in theta and u, ordered (a, b) (:eq:`eq-grad-t`, :eq:`eq-grad-u`).
    truncation_length : int
        The largest length summed term by term.
    error_bound : float
        The bound on the error of every output.
    tail : {"bounded", "expanded"}
        How the lengths beyond ``truncation_length`` enter: left out (:eq:`eq-tail-bound`) or
        as the integral of :prf:ref:`thm-tail-expansion`.
    """

    loss: float
    grad_theta: NDArray[np.float64]
    grad_u: NDArray[np.float64]
    truncation_length: int
    error_bound: float
    tail: str = "bounded"

    @property
    def grad_t(self) -> float:
        """dL/dt, the derivative along t = theta_b - theta_a (equals grad_theta[1])."""
        return float(self.grad_theta[1])


# Sums visiting more strings than this use the tail expansion (power laws); beyond MAX_TERMS
# the exact sum is refused (it would need gigabytes).
EXPANSION_THRESHOLD = 200_000
MAX_TERMS = 50_000_000
TAIL_MODES = ("auto", "bounded", "expanded")


def truncation_for(data: Data, u: NDArray[np.float64]) -> int:
    """Truncation length N for which every truncated term of :eq:`eq-population-loss` and its
    gradients is at most ``data.tol`` (:eq:`eq-tail-bound`).

    Parameters
    ----------
    data : Data
        The data distribution and its tolerance.
    u : ndarray
        The output layer, ordered (a, b), float64 (not checked).

    Returns
    -------
    int
        The truncation length N.

    Notes
    -----
    Per positive string: the loss is at most ``softplus(max|u|)`` (``|f| <= max|u|`` since f is a
    convex combination of u_a and u_b); each ``|d/du|`` term is at most 1; the d/dt term is
    at most ``|w| log(n) / 4`` since ``p (1 - p) <= 1/4``.
    """
    prior, tol = data.prior, data.tol
    per_string_loss = float(softplus(max(abs(u[0]), abs(u[1]))))
    mass_factor = prior * max(per_string_loss, 1.0)
    log_factor = prior * abs(u[1] - u[0]) / 4.0
    log_tol = tol / log_factor if log_factor > 0 else math.inf
    return data.lengths.truncation_length(tol / mass_factor, log_tol)


def population(theta: ArrayLike, u: ArrayLike, data: Data, *, scaling: str = "log", tail: str = "auto") -> Population:
    """Exact population loss and gradients in the original coordinates (theta, u).

    Parameters
    ----------
    theta, u : array_like
        Length-2 vectors ordered (a, b): the attention scores and the output layer.
    data : Data
        The data distribution (:class:`lagtheory.data.Data`: length law, count law of the
        positives, prior P(y = +1), and the tolerance ``data.tol`` that bounds the truncation
        error of every output).
    scaling : {"log", "none"}, optional
        Length-scaled attention or unscaled softmax. Keyword only.
    tail : {"auto", "bounded", "expanded"}, optional
        How the lengths beyond the exact sum enter: left out (:eq:`eq-tail-bound`), expanded
        (:prf:ref:`thm-tail-expansion`, power laws only), or ``"auto"``: expanded when the
        exact sum would visit more than 2e5 strings and the expansion reaches ``tol``, else
        bounded. Keyword only.

    Returns
    -------
    Population
        The loss, its gradients, and the bound on their error.

    Raises
    ------
    ValueError
        An exact sum over more than ``MAX_TERMS`` strings, or an expansion over more than
        ``heavy_tail.MAX_EVALUATIONS`` per-string terms, saying which argument to change; an
        argument out of its range, naming it.

    Examples
    --------
    At u = 0 every output is 0, so the loss is log 2 and the attention gradient vanishes:

    >>> import math
    >>> from lagtheory import Data, Geometric, population
    >>> result = population([0.0, 0.0], [0.0, 0.0], Data(Geometric(10)))
    >>> abs(result.loss - math.log(2)) <= result.error_bound, result.grad_theta.tolist()
    (True, [0.0, 0.0])
    """
    theta = check_parameter_vector(theta, "theta")
    u = check_parameter_vector(u, "u")
    data = check_data(data)
    check_scaling(scaling)
    if tail not in TAIL_MODES:
        raise ValueError(f"tail must be one of {TAIL_MODES}, got {tail!r}")
    if tail == "expanded" and not data.lengths.expandable:
        raise ValueError(f"tail='expanded' needs power-law lengths (thm-tail-expansion), got {data.lengths!r}")
    return _population_trusted(theta, u, data, scaling, tail)


def _population_trusted(
    theta: NDArray[np.float64], u: NDArray[np.float64], data: Data, scaling: str, tail: str = "auto"
) -> Population:
    """:func:`population` without argument checks: the trusted inner path of the training
    loops, which check their arguments once. ``theta`` and ``u`` are finite float64 vectors
    of length 2, ``data`` a :class:`lagtheory.data.Data`, ``scaling`` and ``tail`` valid."""
    lengths, counts, prior, tol = data.lengths, data.positives, data.prior, data.tol
    t = theta[1] - theta[0]
    w = u[1] - u[0]
    N = _exact_truncation(data, u)
    expansion, refusal = None, None
    exact_terms = math.inf if N is None else counts.strings_up_to(N)
    wanted = tail == "expanded" or (tail == "auto" and exact_terms > EXPANSION_THRESHOLD)
    if lengths.expandable and wanted:
        bounds = string_bounds(u[0], u[1])
        budget_log = tol / (prior * abs(w)) if w != 0 else math.inf
        most = math.inf if tail == "expanded" else exact_terms  # auto: only where it is cheaper
        try:
            expansion = tail_expansion(
                lengths, counts, t, u[0], u[1], scaling == "log", tol / (prior * bounds[0]), budget_log, most
            )
        except ExpansionTooCostly as too_costly:
            if tail == "expanded":
                raise ValueError(f"tail='expanded' refused for u = ({u[0]:g}, {u[1]:g}): {too_costly}") from None
            refusal = str(too_costly)  # auto: sum term by term, or refuse below
        if expansion is None and tail == "expanded":
            raise ValueError(f"tol too small for the tail expansion of {lengths!r} with {counts!r}; use a larger tol")
    if expansion is not None:
        N = expansion.exact_length
    elif exact_terms > MAX_TERMS:
        shown = "beyond 1e7" if N is None else str(N)
        if refusal is not None:
            raise ValueError(
                f"the exact sum would need N = {shown} lengths, more than {MAX_TERMS:.0e} strings, and the tail "
                f"expansion is refused for u = ({u[0]:g}, {u[1]:g}): {refusal}"
            )
        raise ValueError(
            f"tol too small for {lengths!r} with {counts!r}: the exact sum would need N = {shown} lengths, more than "
            f"{MAX_TERMS:.0e} strings, and the tail expansion (power laws) does not reach tol; use a larger tol or a "
            "lighter-tailed distribution"
        )
    weight, base, scale = _length_table(lengths, counts, N, scaling)
    terms = per_string_terms(base + t * scale, u[0], u[1], scale)  # z = log-odds of p (eq-pooled-weight)
    expected = [float(weight @ term) for term in terms]  # over positives of length <= N
    if expansion is not None:
        expected = [head + float(tail) for head, tail in zip(expected, expansion.tail, strict=True)]
    positive_loss, miss_a, miss_b, miss_t = expected

    loss = (1 - prior) * float(softplus(u[0])) + prior * positive_loss
    grad_ua = (1 - prior) * float(expit(u[0])) - prior * miss_a
    grad_ub = -prior * miss_b
    grad_t = -prior * w * miss_t  # dp/dt = s(n) p (1 - p) (eq-dp-dt)
    return Population(
        loss=loss,
        grad_theta=np.array([-grad_t, grad_t]) + 0.0,  # + 0.0: no signed zero
        grad_u=np.array([grad_ua, grad_ub]),
        truncation_length=N,
        error_bound=tol,
        tail="expanded" if expansion is not None else "bounded",
    )


def _exact_truncation(data: Data, u: NDArray[np.float64]) -> int | None:
    """The truncation length of the exact sum (``truncation_for``), None beyond its max_length."""
    try:
        return truncation_for(data, u)
    except ValueError:
        return None


@lru_cache(maxsize=16)
def _length_table(
    lengths: LengthDistribution, counts: CountDistribution, N: int, scaling: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per string (n, k), n <= N: the weight pi(n) kappa(k | n) and the two parts of the log-odds
    (``pooling._log_odds_parts``). Cached: a training run asks for the same table at every step."""
    n, k, kappa = counts.table(np.arange(1, N + 1, dtype=np.int64))
    base, scale = _log_odds_parts(n, k, scaling)
    tables = (lengths.pmf(n) * kappa, base, scale)
    for table in tables:
        table.setflags(write=False)
    return tables
