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
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from ._validation import check_parameter_vector, check_scaling
from .counts import CountDistribution
from .data import Data, check_data
from .heavy_tail import ExpansionTooCostly, plan_fits, string_bounds, tail_expansion
from .lengths import LengthDistribution
from .memory import MEMORY_BUDGET, check_memory_budget, require_memory, size_text
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


# Sums visiting more strings than this use the tail expansion (power laws), where it reaches tol.
EXPANSION_THRESHOLD = 200_000
TAIL_MODES = ("auto", "bounded", "expanded")
STRING_BYTES = 128
"""Bytes per string (n, k) of an exact sum, an upper bound of its peak (measured with tracemalloc:
96 to 100 bytes; the cached table keeps 24 of them): the estimate :func:`population` compares with
its ``memory_budget`` before it allocates."""
CACHED_TABLE_STRINGS = MEMORY_BUDGET // (16 * 24)
"""The longest table (in strings) that is cached; 16 of them at 24 bytes a string take at most
``MEMORY_BUDGET`` in all, and longer ones are built at each call."""


def _tail_factors(data: Data, u: NDArray[np.float64]) -> tuple[float, float]:
    """The factors of :func:`truncation_for`: the neglected loss and gradients are at most
    ``mass_factor`` times the mass and ``log_factor`` times the log-moment beyond N."""
    per_string_loss = float(softplus(max(abs(u[0]), abs(u[1]))))
    return data.prior * max(per_string_loss, 1.0), data.prior * abs(u[1] - u[0]) / 4.0


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
    mass_factor, log_factor = _tail_factors(data, u)
    log_tol = data.tol / log_factor if log_factor > 0 else math.inf
    return data.lengths.truncation_length(data.tol / mass_factor, log_tol)


def population(
    theta: ArrayLike,
    u: ArrayLike,
    data: Data,
    *,
    scaling: str = "log",
    tail: str = "auto",
    memory_budget: int = MEMORY_BUDGET,
) -> Population:
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
    memory_budget : int, optional
        The most bytes the call may allocate (:data:`lagtheory.memory.MEMORY_BUDGET`, 1 GiB, by
        default): an exact sum needs ``STRING_BYTES`` per string (n, k) it visits, an expansion
        ``heavy_tail.EVALUATION_BYTES`` per per-string term it evaluates. Keyword only.

    Returns
    -------
    Population
        The loss, its gradients, and the bound on their error.

    Raises
    ------
    ValueError
        Before anything is allocated, when the exact sum or the expansion would need more than
        ``memory_budget``, naming the argument that drives it (``tol``, or ``|u_b - u_a|`` for the
        expansion) and the range in which the call fits; when neither reaches ``tol``; an argument
        out of its range, naming it.

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
    return _population_trusted(theta, u, data, scaling, tail, check_memory_budget(memory_budget))


def _population_trusted(
    theta: NDArray[np.float64],
    u: NDArray[np.float64],
    data: Data,
    scaling: str,
    tail: str = "auto",
    memory_budget: int = MEMORY_BUDGET,
) -> Population:
    """:func:`population` without argument checks: the trusted inner path of the training
    loops, which check their arguments once. ``theta`` and ``u`` are finite float64 vectors
    of length 2, ``data`` a :class:`lagtheory.data.Data`, ``scaling``, ``tail`` and
    ``memory_budget`` valid."""
    lengths, counts, prior, tol = data.lengths, data.positives, data.prior, data.tol
    t = theta[1] - theta[0]
    w = u[1] - u[0]
    N = _exact_truncation(data, u)
    expansion, refusal = None, None
    exact_terms = math.inf if N is None else counts.strings_up_to(N)
    wanted = tail == "expanded" or (tail == "auto" and exact_terms > EXPANSION_THRESHOLD)
    if lengths.expandable and wanted:
        budget_plain, budget_log = _expansion_budgets(data, u)
        most = math.inf if tail == "expanded" else exact_terms  # auto: only where it is cheaper
        most = min(most, memory_budget // STRING_BYTES + 1)  # and the strings summed exactly fit the budget
        try:
            expansion = tail_expansion(
                lengths,
                counts,
                t,
                u[0],
                u[1],
                scaling == "log",
                budget_plain,
                budget_log,
                most,
                memory_budget=memory_budget,
            )
        except ExpansionTooCostly as too_costly:
            if tail == "expanded":
                raise ValueError(f"tail='expanded' refused for u = ({u[0]:g}, {u[1]:g}): {too_costly}") from None
            refusal = str(too_costly)  # auto: sum term by term, or refuse below
        if expansion is None and tail == "expanded":
            raise ValueError(
                f"the tail expansion of {lengths!r} with {counts!r} does not reach tol = {tol:g} at u = "
                f"({u[0]:g}, {u[1]:g}): {_expansion_reach(data, t, u, scaling == 'log', memory_budget)}"
            )
    if expansion is not None:
        N = expansion.exact_length
    else:
        if not (lengths.expandable and wanted):
            why = ""
        elif refusal is not None:
            why = f"; the tail expansion is refused: {refusal}"
        else:
            why = "; the tail expansion does not reach tol"
        why = f" at u = ({u[0]:g}, {u[1]:g}){why}"
        require_sum_memory(data, N, _tail_factors(data, u), memory_budget, why)
    weight, base, scale = _table(lengths, counts, N, scaling)
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


def _expansion_budgets(data: Data, u: NDArray[np.float64] | tuple[float, float]) -> tuple[float, float]:
    """The budgets of :func:`heavy_tail.tail_expansion` that make every output's error at most
    ``data.tol``: in units of the string bounds M, for the loss and d/du terms and for d/dt."""
    w = u[1] - u[0]
    plain = data.tol / (data.prior * string_bounds(u[0], u[1])[0])
    return plain, data.tol / (data.prior * abs(w)) if w != 0 else math.inf


def _expansion_reach(data: Data, t: float, u: NDArray[np.float64], log_scaled: bool, memory_budget: int) -> str:
    """Where the tail expansion's proven bounds meet tol (:func:`heavy_tail.plan_fits`): the range of
    ``|u_b - u_a|`` at this tol (u_a kept) and of tol at this u, each found by bisection."""

    def fits(width: float, tol: float) -> bool:
        u_b = u[0] + math.copysign(width, u[1] - u[0])
        budgets = _expansion_budgets(replace(data, tol=tol), (u[0], u_b))
        return plan_fits(data.lengths, data.positives, t, u[0], u_b, log_scaled, *budgets, memory_budget)

    def edge(fit, low: float, high: float) -> float:
        """The end of the range where fit holds, between low (fits) and high (does not), on a log scale."""
        for _ in range(10):  # a ratio of 1e15 resolved to 4%
            middle = math.sqrt(low * high)
            low, high = (middle, high) if fit(middle) else (low, middle)
        return low

    width, tol = abs(u[1] - u[0]), data.tol
    smallest = min(width, 1e-9)
    if width > 0 and fits(smallest, tol):
        widths = f"|u_b - u_a| <= {edge(lambda x: fits(x, tol), smallest, width):.3g} at this tol"
    else:
        widths = "no |u_b - u_a| at this tol"
    tols = (
        f"tol >= {edge(lambda x: fits(width, x), 1e30, tol):.2g} at this u" if fits(width, 1e30) else "no tol at this u"
    )
    return f"its proven bounds fit for {widths}, or for {tols}; tail='bounded' sums term by term"


def require_sum_memory(
    data: Data,
    N: int | None,
    factors: tuple[float, float],
    memory_budget: int,
    why: str = "",
    string_bytes: int = STRING_BYTES,
) -> None:
    """Refuse a sum over every positive (n, k) with n <= N when it would need more than
    ``memory_budget`` (``string_bytes`` a string), before anything is allocated.

    ``N`` is the truncation length that ``data.tol`` sets by the rule ``factors = (mass_factor,
    log_factor)``: the smallest N with ``mass_factor P(n > N) <= tol`` and ``log_factor
    E[log n; n > N] <= tol`` (None: beyond the largest length searched). The message names
    ``tol`` and the tol from which the sum fits.

    Parameters
    ----------
    data : Data
        The data distribution.
    N : int or None
        The truncation length.
    factors : tuple of float
        (mass_factor, log_factor), >= 0.
    memory_budget : int
        The budget in bytes.
    why : str, optional
        Appended to what the message says would be allocated (why no cheaper path was taken).
    string_bytes : int, optional
        Bytes per string of the sum (``STRING_BYTES``, a population sum's, by default).

    Raises
    ------
    ValueError
        When the sum would need more than ``memory_budget``, or N is None.
    """
    lengths, counts = data.lengths, data.positives
    fitting = _longest_exact_sum(counts, memory_budget // string_bytes)
    if fitting >= lengths.min_truncation:
        smallest_tol = max(
            factors[0] * lengths.tail_mass_bound(fitting), factors[1] * lengths.tail_log_moment_bound(fitting)
        )
        fits = f"tol >= {smallest_tol:.2g} here"
    else:
        fits = f"no tol here (the bounds of {lengths!r} start at {lengths.min_truncation} lengths)"
    if N is None:
        raise ValueError(
            f"tol too small for {lengths!r} with {counts!r}: the sum would need more than 1e7 lengths{why}; "
            f"it fits memory_budget = {size_text(memory_budget)} for {fits}"
        )
    strings = counts.strings_up_to(N)
    require_memory(
        strings * string_bytes,
        memory_budget,
        f"the sum of {lengths!r} with {counts!r} over {strings:.3g} strings (N = {N} lengths, set by "
        f"tol = {data.tol:g}{why})",
        fits,
    )


def _longest_exact_sum(counts: CountDistribution, strings: int) -> int:
    """The largest N whose exact sum visits at most ``strings`` strings (0 if none)."""
    low, high = 0, 1
    while counts.strings_up_to(high) <= strings:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if counts.strings_up_to(middle) <= strings else (low, middle)
    return low


def _exact_truncation(data: Data, u: NDArray[np.float64]) -> int | None:
    """The truncation length of the exact sum (``truncation_for``), None beyond its max_length."""
    try:
        return truncation_for(data, u)
    except ValueError:
        return None


def _table(
    lengths: LengthDistribution, counts: CountDistribution, N: int, scaling: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """:func:`_length_table`, cached when it holds at most ``CACHED_TABLE_STRINGS`` strings."""
    if counts.strings_up_to(N) <= CACHED_TABLE_STRINGS:
        return _cached_table(lengths, counts, N, scaling)
    return _length_table(lengths, counts, N, scaling)


def _length_table(
    lengths: LengthDistribution, counts: CountDistribution, N: int, scaling: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per string (n, k), n <= N: the weight pi(n) kappa(k | n) and the two parts of the log-odds
    (``pooling._log_odds_parts``)."""
    n, k, kappa = counts._table(np.arange(1, N + 1, dtype=np.int64))
    base, scale = _log_odds_parts(n, k, scaling)
    tables = (lengths.pmf(n) * kappa, base, scale)
    for table in tables:
        table.setflags(write=False)
    return tables


_cached_table = lru_cache(maxsize=16)(_length_table)
"""A training run asks for the same table at every step."""
