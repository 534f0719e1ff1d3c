"""Population sums over power-law lengths with the tail as an integral (book
:prf:ref:`thm-tail-expansion`, :prf:ref:`lem-strip`, :prf:ref:`lem-midpoint-sum`).

A positive of length n with k b's has log-odds z = log k - log(n - k) + t s(n)
:eq:`eq-pooled-weight` and contributes h(k; n) = Phi(z) (times s(n) for the attention
gradient), Phi one of the per-string terms of :mod:`lagtheory.per_string`. The
expectation over positives is sum_n pi(n) m(n) with m(n) = sum_k kappa(k | n) h(k; n).

For pi(n) = n^(-s) / zeta(s) the lengths n <= N0 are summed term by term; for n > N0,
m(n) is replaced by a function m~(x) of a real x, analytic in x, the surrogate of the count
law (:mod:`lagtheory.count_tails`).

Then sum_{n > N0} pi(n) m~(n) is an integral over x (:prf:ref:`lem-midpoint-sum` in n), computed by
Gauss-Legendre quadrature in log x. Every step has an explicit error bound from the
analyticity of Phi on the strip ``|Im z| <= min(pi/2, pi/|w|)`` (:prf:ref:`lem-strip`) and Cauchy's
estimates; :func:`tail_expansion` adds them up, chooses N0 (and A or J) so that the sum
is at most the tolerance, and returns the tail and that bound.

What depends on the count law (the surrogate m~, its sizes A or J, the inner bound, the
disks of the outer bound) is one :class:`~lagtheory.count_tails.CountTail` per law, found by
:func:`~lagtheory.count_tails.count_tail` (a law without pieces has no expansion). A plan whose per-string evaluations would need more than
the call's ``memory_budget`` (``EVALUATION_BYTES`` each; a narrow strip, ``|u_b - u_a|`` large)
is refused with :class:`ExpansionTooCostly` before anything is allocated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .count_tails import (
    _GL_W,
    _GL_X,
    GL_CONSTANT,
    GL_NODES,
    _power_integral,
    _Problem,
    count_tail,
    logistic_density_bound,  # noqa: F401 (re-exported: the setting chapter calls heavy_tail.logistic_density_bound)
)
from .counts import CountDistribution
from .lengths import PowerLaw
from .memory import MEMORY_BUDGET, check_memory_budget, size_text
from .per_string import softplus

# lem-midpoint-sum: per cell max|g''''| * (1/576 + 1/1920); per end max|g'''| / 576.
CELL_CONSTANT = 1 / 576 + 1 / 1920
END_CONSTANT = 1 / 576
EXACT_CANDIDATES = (64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048)  # N0, cheapest first
MAX_LOG_LENGTH = 700.0  # the integral runs to x = e^V, V <= 700 (beyond, e^V overflows)
EVALUATION_BYTES = 128
"""Bytes per per-string evaluation of an expansion (float64 intermediates; 256 over-estimated the
measured peak about 2.5 to 3 times), the estimate :func:`tail_expansion` compares with its
``memory_budget``."""


class ExpansionTooCostly(ValueError):
    """The cheapest plan that meets the budget would need more than the call's memory budget."""


def strip_half_width(w: float) -> float:
    """The half-width ``r = min(pi/2, pi/|w|)`` of the strip ``|Im z| <= r`` on which the per-string terms are analytic (:prf:ref:`lem-strip`).

    Parameters
    ----------
    w : float
        ``u_b - u_a``.

    Returns
    -------
    float
        r.
    """
    return math.pi / 2 if abs(w) <= 2 else math.pi / abs(w)


def string_bounds(u_a: float, u_b: float) -> NDArray[np.float64]:
    """Bounds on the strip of :prf:ref:`lem-strip` for the four per-string terms (loss, d/du_a, d/du_b, d/dt):
    softplus(-min(u_a, u_b)) + pi/2 for the loss, 1 for the others.

    Parameters
    ----------
    u_a, u_b : float
        The output layer.

    Returns
    -------
    ndarray
        float64 (4,).
    """
    return np.array([float(softplus(np.float64(-min(u_a, u_b)))) + math.pi / 2, 1.0, 1.0, 1.0])


@dataclass(frozen=True)
class TailExpansion:
    """The tail of a power-law population sum, from :func:`tail_expansion`.

    Attributes
    ----------
    exact_length : int
        N0, the largest length summed term by term.
    tail : ndarray
        The four expectations over positives of length > N0 (loss, d/du_a, d/du_b and d/dt
        terms, the last with its s(n)).
    bound : ndarray
        A proven bound on the error of each.
    """

    exact_length: int
    tail: NDArray[np.float64]
    bound: NDArray[np.float64]


# -- the bounds of thm-tail-expansion --------------------------------------------------------


def _outer_geometry(problem: _Problem, N0: int, size: int) -> tuple[float, float, float] | None:
    """(rho1, phi, K): disks D(y, rho1 y), y >= N0, on which m~ is analytic with |m~| <= M K |s|,
    every argument in play at most phi; None if the disks do not fit."""
    phi, shift = problem.pieces.disk(problem, size)
    # rho1^-4 (1 - rho1)^-s in the bounds is smallest at rho1 = 4 / (s + 4): no need to go wider
    phi = min(phi, math.asin(4 / (problem.lengths.exponent + 4)))
    rho1 = math.sin(phi) * (N0 - shift) / N0
    if rho1 <= 0 or N0 * (1 - rho1) < 3:
        return None
    y = N0 * (1 - rho1)  # lower bound on |xi| and Re xi on the disks
    return rho1, phi, problem.pieces.disk_bound(problem, size, y)


def _outer_bound(problem: _Problem, N0: int, rho1: float, phi: float, K: float) -> tuple[float, float]:
    """:prf:ref:`lem-midpoint-sum` in n with Cauchy's estimates on D(y, rho1 y): per unit of M, (plain, log)."""
    s, zeta_s = problem.lengths.exponent, problem.lengths.normaliser
    front = K * (1 - rho1) ** -s / zeta_s  # |f(xi)| <= front y^-s M Sbar(y) on D(y, rho1 y)
    log_offset = math.log1p(rho1) + phi  # |log xi| <= log y + log(1 + rho1) + phi
    results = []
    for offset in (None, log_offset if problem.log_scaled else None):
        cells = CELL_CONSTANT * 24 * front / rho1**4 * _power_integral(N0 - 0.5, s + 4, offset)
        s_bar = 1.0 if offset is None else math.log(N0) + offset
        end = END_CONSTANT * 6 * front * N0**-s * s_bar / (rho1 * N0) ** 3
        results.append(cells + end)
    return results[0], results[1]


class _TooManyPanels(Exception):
    """A plan of the outer integral would need more panels than the memory budget allows."""

    def __init__(self, panels: int) -> None:
        super().__init__(panels)
        self.panels = panels


def _plan_outer_integral(
    problem: _Problem, N0: int, rho1: float, phi: float, K: float, budget: float, max_panels: float = math.inf
):
    """Panels in v = log x from log(N0 + 1/2) to V, V where the rest of the integral is below
    budget / 4; returns (edges, truncation bounds (plain, log), panel errors (plain, log)), or None
    when no plan fits the budget; raises :class:`_TooManyPanels` (before building them) when the
    panels would exceed ``max_panels``."""
    s, zeta_s = problem.lengths.exponent, problem.lengths.normaliser
    v0 = math.log(N0 + 0.5)
    log_offset = 0.0 if problem.log_scaled else None
    V = v0
    while True:
        V += 1.0
        truncation = K * _power_integral(math.exp(V), s, log_offset) / zeta_s
        if truncation <= budget / 4 or V > MAX_LOG_LENGTH:
            break
    if V > MAX_LOG_LENGTH:
        return None
    plain_truncation = K * _power_integral(math.exp(V), s, None) / zeta_s
    radius = math.log1p(rho1)  # v-disks of this radius map into D(x, rho1 x)
    for halving in range(8):  # panels as wide as the budget allows (at most the radius)
        panels = math.ceil((V - v0) / (radius * 2 ** (-halving / 2)))
        if panels > max_panels:  # more halving only adds panels
            raise _TooManyPanels(panels)
        edges = np.linspace(v0, V, panels + 1)
        width = edges[1] - edges[0]
        # |e^v' f(e^v')| <= (1 + rho1) e^v Fbar(e^v) for v' within radius of v; bounded on a panel
        # by e^((1 - s) start) (log(e^end (1 + rho1)) + phi)
        start = edges[:-1]
        front = (1 + rho1) * K * (1 - rho1) ** -s / zeta_s * np.exp((1 - s) * start)
        per_panel = GL_CONSTANT * width * (width / radius) ** (2 * GL_NODES)
        plain = float(np.sum(per_panel * front))
        logged = float(np.sum(per_panel * front * (start + width + math.log1p(rho1) + phi)))
        if not problem.log_scaled:
            logged = plain
        if max(plain / budget, logged / budget) <= 1 / 4:
            return edges, (plain_truncation, truncation), (plain, logged)
    return None


# plan_fits repeats this parameter list on purpose: it is this function's dry run.
def tail_expansion(
    lengths: PowerLaw,
    counts: CountDistribution,
    t: float,
    u_a: float,
    u_b: float,
    log_scaled: bool,
    budget_plain: float,
    budget_log: float,
    max_terms: float = math.inf,
    *,
    memory_budget: int = MEMORY_BUDGET,
) -> TailExpansion | None:
    """The expectations over positives of length > N0 (:prf:ref:`thm-tail-expansion`) with a proven error bound.

    Parameters
    ----------
    lengths : PowerLaw
        The length law.
    counts : CountDistribution
        The count law of the positives; a law without registered pieces (:func:`~lagtheory.count_tails.count_tail`)
        has no expansion.
    t : float
        The attention difference theta_b - theta_a.
    u_a, u_b : float
        The output layer.
    log_scaled : bool
        Whether attention is length-scaled (s(n) = log n) or not (s(n) = 1).
    budget_plain : float
        The bound on the error of the loss and the d/du terms, in units of the string bound M.
    budget_log : float
        The same for the d/dt term, its s(n) included.
    max_terms : float, optional
        The exact part (lengths up to N0) must visit fewer strings than this.
    memory_budget : int, optional
        The most bytes the evaluations may take, ``EVALUATION_BYTES`` each
        (:data:`lagtheory.memory.MEMORY_BUDGET` by default). Keyword only.

    Returns
    -------
    TailExpansion or None
        N0 the smallest candidate for which the bound fits, the tail and its bound; None when
        no candidate fits (the caller sums term by term).

    Raises
    ------
    ExpansionTooCostly
        Before anything is allocated, when the expansions that meet the budgets would need more
        than ``memory_budget``.
    """
    memory_budget = check_memory_budget(memory_budget)
    problem = _problem(lengths, counts, t, u_a, u_b, log_scaled)
    if problem is None:
        return None
    too_costly = None
    for N0, size, edges, bounds, evaluations in _plans(problem, budget_plain, budget_log, max_terms, memory_budget):
        if evaluations * EVALUATION_BYTES > memory_budget:
            too_costly = evaluations if too_costly is None else min(too_costly, evaluations)
            continue
        tail, numerical = _evaluate(problem, N0, size, edges)
        plain = bounds[0] + numerical[0]
        logged = bounds[1] + numerical[1]
        if plain <= budget_plain and logged <= budget_log:
            bound = problem.M * np.array([plain, plain, plain, logged])
            return TailExpansion(exact_length=N0, tail=tail, bound=bound)
    if too_costly is not None:
        raise ExpansionTooCostly(
            f"the expansions that meet tol would evaluate at least {too_costly:.2g} per-string terms, about "
            f"{size_text(too_costly * EVALUATION_BYTES)}, more than memory_budget = {size_text(memory_budget)}: "
            f"|u_b - u_a| = {abs(u_b - u_a):.4g} narrows the strip of lem-strip to r = {problem.r:.3g}; use a u with "
            "smaller |u_b - u_a|, a larger tol, or tail='bounded'"
        )
    return None


# The parameter list of tail_expansion on purpose: plan_fits is its dry run (same _problem and _plans, nothing
# evaluated).
def plan_fits(
    lengths: PowerLaw,
    counts: CountDistribution,
    t: float,
    u_a: float,
    u_b: float,
    log_scaled: bool,
    budget_plain: float,
    budget_log: float,
    memory_budget: int = MEMORY_BUDGET,
) -> bool:
    """Whether :func:`tail_expansion` has a plan whose proven bounds, before the rounding inside
    the surrogate, meet the budgets within ``memory_budget``: nothing is evaluated.

    Parameters
    ----------
    lengths, counts, t, u_a, u_b, log_scaled, budget_plain, budget_log, memory_budget
        As in :func:`tail_expansion`.

    Returns
    -------
    bool
        True when such a plan exists (the expansion then fails only if the rounding inside the
        surrogate does not fit what the plan leaves).
    """
    problem = _problem(lengths, counts, t, u_a, u_b, log_scaled)
    return problem is not None and any(
        evaluations * EVALUATION_BYTES <= memory_budget
        for *_, evaluations in _plans(problem, budget_plain, budget_log, math.inf, memory_budget)
    )


def _problem(
    lengths: PowerLaw, counts: CountDistribution, t: float, u_a: float, u_b: float, log_scaled: bool
) -> _Problem | None:
    """The problem of an expansion; None for a count law without pieces (:func:`~lagtheory.count_tails.count_tail`)."""
    pieces = count_tail(counts)
    if pieces is None:
        return None
    r = strip_half_width(u_b - u_a)
    return _Problem(lengths, counts, pieces, u_a, u_b, t, log_scaled, r, string_bounds(u_a, u_b))


def _plans(problem: _Problem, budget_plain: float, budget_log: float, max_terms: float, memory_budget: int):
    """The plans whose proven bounds fit the budgets, cheapest N0 first: (N0, size, panel edges,
    (plain, log) bound before the rounding inside the surrogate, per-string evaluations). Plans
    whose nodes alone (``GL_NODES`` a panel) would exceed ``memory_budget`` are not built: they come
    with edges and bounds None and the number of nodes as their evaluations."""
    max_panels = memory_budget // (GL_NODES * EVALUATION_BYTES)
    for N0 in EXACT_CANDIDATES:
        if problem.counts.strings_up_to(N0) >= max_terms:
            return
        for size, rho1, phi, K, inner in _sizes(problem, N0, budget_plain, budget_log):
            outer = _outer_bound(problem, N0, rho1, phi, K)
            remaining = min(budget_plain - inner[0] - outer[0], budget_log - inner[1] - outer[1])
            if remaining <= 0:
                continue
            try:
                integral_plan = _plan_outer_integral(problem, N0, rho1, phi, K, remaining, max_panels)
            except _TooManyPanels as too_many:  # beyond the budget: report the nodes alone, build nothing
                yield N0, size, None, None, too_many.panels * GL_NODES
                continue
            if integral_plan is None:
                continue
            edges, truncation, quadrature = integral_plan
            bounds = tuple(inner[i] + outer[i] + truncation[i] + quadrature[i] for i in (0, 1))
            yield N0, size, edges, bounds, problem.pieces.evaluations(_nodes(N0, edges)[0], problem, size)


def _sizes(problem: _Problem, N0: int, budget_plain: float, budget_log: float):
    """The A's (uniform) or J's (binomial), smallest first, whose inner bound is at most 2/5 of the
    budget and whose outer disks fit, each as (size, rho1, phi, K, inner bounds)."""
    for size in problem.pieces.sizes(N0):
        inner = problem.pieces.inner_bound(problem, N0, size)
        if inner[0] > budget_plain / 2 or inner[1] > budget_log / 2:
            continue
        geometry = _outer_geometry(problem, N0, size)
        if geometry is not None:
            yield (size, *geometry, inner)


def _nodes(N0: int, edges: NDArray) -> tuple[NDArray, NDArray]:
    """The lengths x at which the tail is evaluated (the GL nodes in v = log x over the panels of
    ``edges``, then N0 and N0 + 1) and the GL weights in v of the nodes."""
    width = edges[1] - edges[0]
    v = (edges[:-1, None] + width * (_GL_X + 1) / 2).ravel()
    weights = np.tile(_GL_W, edges.size - 1) * (width / 2)
    return np.concatenate([np.exp(v), [float(N0), N0 + 1.0]]), weights


def _evaluate(problem: _Problem, N0: int, size: int, edges: NDArray) -> tuple[NDArray, tuple[float, float]]:
    """The tail: GL in v = log x over the panels of ``edges`` plus the difference correction at
    N0 (:prf:ref:`lem-midpoint-sum` in n); and the bound on the numerical error inside m~ at the nodes."""
    x, weights = _nodes(N0, edges)
    surrogate, error = problem.pieces.surrogate(x, problem, size)
    pmf = problem.lengths.density(x)
    f = surrogate * pmf  # (4, nodes + 2)
    node_weight = np.concatenate([weights * x[:-2], [-1 / 24, 1 / 24]])  # integral in v, then (f(N0+1) - f(N0))/24
    tail = f @ node_weight
    numeric = float(np.abs(node_weight) @ (error * pmf))
    logged = float(np.abs(node_weight) @ (error * pmf * (np.log(x) if problem.log_scaled else 1.0)))
    return tail, (numeric, logged)
