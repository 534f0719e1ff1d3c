"""Population sums over power-law lengths with the tail as an integral (book
:prf:ref:`thm-tail-expansion`, :prf:ref:`lem-strip`, :prf:ref:`lem-midpoint-sum`).

A positive of length n with k b's has log-odds z = log k - log(n - k) + t s(n)
:eq:`eq-pooled-weight` and contributes h(k; n) = Phi(z) (times s(n) for the attention
gradient), Phi one of the per-string terms of :mod:`lagtheory.per_string`. The
expectation over positives is sum_n pi(n) m(n) with m(n) = sum_k kappa(k | n) h(k; n).

For pi(n) = n^(-s) / zeta(s) the lengths n <= N0 are summed term by term; for n > N0,
m(n) is replaced by a function m~(x) of a real x, analytic in x:

* one b:       m~(x) = h(1; x) (equal to m(n) at every n);
* uniform k:   m~(x) = (1/x) [sum_{k<=A} h(k; x) + sum_{j<=A} h(x - j; x) + integral of h
               over [A + 1/2, x - A - 1/2] + a difference correction]  (:prf:ref:`lem-midpoint-sum` in k);
* binomial k:  m~(x) = the Taylor polynomial of h(.; x) at k = q x, of degree J - 1,
               averaged against the binomial central moments, and the condition k >= 1.

Then sum_{n > N0} pi(n) m~(n) is an integral over x (:prf:ref:`lem-midpoint-sum` in n), computed by
Gauss-Legendre quadrature in log x. Every step has an explicit error bound from the
analyticity of Phi on the strip ``|Im z| <= min(pi/2, pi/|w|)`` (:prf:ref:`lem-strip`) and Cauchy's
estimates; :func:`tail_expansion` adds them up, chooses N0 (and A or J) so that the sum
is at most the tolerance, and returns the tail and that bound.

What depends on the count law (the surrogate m~, its sizes A or J, the inner bound, the
disks of the outer bound) is one :class:`CountTail` per law, found by :func:`count_tail`
(a ``functools.singledispatch`` function: a new count law registers its own pieces, and a
law without pieces has no expansion). A plan whose per-string evaluations would need more than
the call's ``memory_budget`` (``EVALUATION_BYTES`` each; a narrow strip, ``|u_b - u_a|`` large)
is refused with :class:`ExpansionTooCostly` before anything is allocated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache, singledispatch

import numpy as np
from numpy.typing import NDArray

from .counts import BinomialCount, CountDistribution, OneB, UniformCount
from .lengths import PowerLaw
from .memory import MEMORY_BUDGET, check_memory_budget, size_text
from .per_string import per_string_terms, softplus

GL_NODES = 8
_GL_X, _GL_W = np.polynomial.legendre.leggauss(GL_NODES)
# m-point Gauss-Legendre on a panel of length L, integrand analytic with |g| <= K on the disks
# of radius R around the panel: error <= GL_CONSTANT * L * (L / R)^(2m) * K.
GL_CONSTANT = math.factorial(GL_NODES) ** 4 / ((2 * GL_NODES + 1) * math.factorial(2 * GL_NODES) ** 2)
# lem-midpoint-sum: per cell max|g''''| * (1/576 + 1/1920); per end max|g'''| / 576.
CELL_CONSTANT = 1 / 576 + 1 / 1920
END_CONSTANT = 1 / 576
EXACT_CANDIDATES = (64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048)  # N0, cheapest first
TAYLOR_CANDIDATES = tuple(range(4, 41, 2))  # J (even), binomial counts
CIRCLE_POINTS = 64  # samples on the circle that gives the Taylor coefficients (aliasing 2^-64)
BULK_CUTOFF = 36.0  # the bulk integral of the uniform count runs over |zeta| <= 36
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


@dataclass(frozen=True)
class _Problem:
    lengths: PowerLaw
    counts: CountDistribution
    pieces: CountTail
    u_a: float
    u_b: float
    t: float
    log_scaled: bool
    r: float  # strip half-width (lem-strip)
    M: NDArray[np.float64]  # string_bounds

    @property
    def t_arg(self) -> float:
        """|t| times the argument of x in the log-odds (0 without length scaling)."""
        return abs(self.t) if self.log_scaled else 0.0


def _power_integral(N: float, p: float, log_offset: float | None) -> float:
    """int_N^inf x^-p dx, or int_N^inf x^-p (log x + log_offset) dx when log_offset is not None (p > 1)."""
    head = N ** (1 - p)
    if log_offset is None:
        return head / (p - 1)
    return head * ((math.log(N) + log_offset) / (p - 1) + 1 / (p - 1) ** 2)


# -- binomial central moments as polynomials in the length ---------------------------------


@lru_cache(maxsize=256)
def _binomial_moment_polynomials(q: float, order: int) -> tuple[list[NDArray], list[NDArray]]:
    """Coefficients (in x^0, x^1, ...) of E[(k - q x)^j] for k ~ Binomial(x, q), j <= order, from
    the cumulants x c_i of k (c_i those of one Bernoulli(q)); and the same recursion with |c_i|,
    an upper bound on |E[(k - q xi)^j]| at complex xi with |xi| in place of xi."""
    centred = [1.0] + [q * (1 - q) ** j + (1 - q) * (-q) ** j for j in range(1, order + 1)]
    cumulant = [0.0] * (order + 1)
    for m in range(2, order + 1):
        cumulant[m] = centred[m] - sum(math.comb(m - 1, i - 1) * cumulant[i] * centred[m - i] for i in range(2, m))
    moments = [np.array([1.0]), np.array([0.0])]
    upper = [np.array([1.0]), np.array([0.0])]
    for m in range(2, order + 1):
        value, bound = np.zeros(m // 2 + 1), np.zeros(m // 2 + 1)
        for i in range(2, m + 1):
            lower, lower_bound = moments[m - i], upper[m - i]
            value[1 : lower.size + 1] += math.comb(m - 1, i - 1) * cumulant[i] * lower
            bound[1 : lower.size + 1] += math.comb(m - 1, i - 1) * abs(cumulant[i]) * lower_bound
        moments.append(value)
        upper.append(bound)
    return moments, upper


def _scaled_polynomial(coefficients: NDArray, log_x: NDArray, log_scale: NDArray) -> NDArray:
    """sum_i c_i x^i e^(log_scale), per entry of ``log_x`` (and of ``log_scale``, same shape), in
    log space so that (rho x)^-j with x up to e^700 neither overflows nor loses the small terms."""
    powers = np.arange(coefficients.size)
    return np.exp(np.multiply.outer(log_x, powers) + log_scale[..., None]) @ coefficients


# -- the surrogate m~(x) at real x -----------------------------------------------------------


def _log_odds_at(k: NDArray, x: NDArray, problem: _Problem) -> NDArray:
    """Z = log k - log(x - k) + t s(x) at real or complex k (x real, broadcast)."""
    shift = problem.t * np.log(x) if problem.log_scaled else problem.t
    return np.log(k) - np.log(x - k) + shift


def _terms(z: NDArray, x: NDArray, problem: _Problem) -> NDArray:
    """The four per-string terms at log-odds z, stacked on a new first axis (s(x) on the last)."""
    scale = np.log(x) if problem.log_scaled else 1.0
    return np.stack(per_string_terms(z, problem.u_a, problem.u_b, scale))


class CountTail:
    """The count law's pieces of :prf:ref:`thm-tail-expansion`. ``size`` is A (uniform counts), J
    (binomial counts) or 0 (one b). Every bound is per unit of the string bound M."""

    def sizes(self, N0: int) -> tuple[int, ...]:
        """The sizes to try at exact length N0, smallest (cheapest) first.

        Parameters
        ----------
        N0 : int
            The largest length summed term by term.

        Returns
        -------
        tuple of int
            The sizes.
        """
        raise NotImplementedError

    def surrogate(self, x: NDArray[np.float64], problem: _Problem, size: int) -> tuple[NDArray, NDArray]:
        """m~(x) for the four terms, shape (4, len(x)); and a bound (per unit of M, without s(x)) on
        the numerical error of each value (quadrature inside m~, Taylor coefficients).

        Parameters
        ----------
        x : ndarray
            float64 real lengths >= N0 (the quadrature nodes above N0, and N0 and N0 + 1).
        problem : object
            The expansion's problem, built by :func:`tail_expansion` (the laws, the parameters,
            the strip half-width r and the string bounds M).
        size : int
            A or J, one of :meth:`sizes`.

        Returns
        -------
        surrogate, error : ndarray
            float64 (4, len(x)) and (len(x),).
        """
        raise NotImplementedError

    def evaluations(self, x: NDArray[np.float64], problem: _Problem, size: int) -> int:
        """The number of per-string evaluations :meth:`surrogate` makes at ``x`` (before it runs).

        Parameters
        ----------
        x : ndarray
            float64 real lengths >= N0 (the quadrature nodes above N0, and N0 and N0 + 1).
        problem : object
            The expansion's problem, built by :func:`tail_expansion` (the laws, the parameters,
            the strip half-width r and the string bounds M).
        size : int
            A or J, one of :meth:`sizes`.

        Returns
        -------
        int
            The number of evaluations.
        """
        raise NotImplementedError

    def inner_bound(self, problem: _Problem, N0: int, size: int) -> tuple[float, float]:
        """Bound on ``sum_{n > N0} pi(n) |m(n) - m~(n)|``, per unit of M.

        Parameters
        ----------
        problem : object
            The expansion's problem, built by :func:`tail_expansion` (the laws, the parameters,
            the strip half-width r and the string bounds M).
        N0 : int
            The largest length summed term by term.
        size : int
            A or J, one of :meth:`sizes`.

        Returns
        -------
        tuple of float
            (without s(n), with s(n) = log n).
        """
        raise NotImplementedError

    def disk(self, problem: _Problem, size: int) -> tuple[float, float]:
        """(phi, shift): the disks D(y, rho1 y) of the outer bound have sin(phi) (N0 - shift) / N0
        as their relative radius, phi small enough that m~ is analytic on them.

        Parameters
        ----------
        problem : object
            The expansion's problem, built by :func:`tail_expansion` (the laws, the parameters,
            the strip half-width r and the string bounds M).
        size : int
            A or J, one of :meth:`sizes`.

        Returns
        -------
        tuple of float
            (phi, shift).
        """
        raise NotImplementedError

    def disk_bound(self, problem: _Problem, size: int, y: float) -> float:
        """K with ``|m~| <= M K |s|`` on the disks, ``|xi| >= y``.

        Parameters
        ----------
        problem : object
            The expansion's problem, built by :func:`tail_expansion` (the laws, the parameters,
            the strip half-width r and the string bounds M).
        size : int
            A or J, one of :meth:`sizes`.
        y : float
            The lower bound on ``|xi|`` on the disks, > 0.

        Returns
        -------
        float
            K.
        """
        raise NotImplementedError


@singledispatch
def count_tail(counts: CountDistribution) -> CountTail | None:
    """The pieces of :prf:ref:`thm-tail-expansion` for the count law ``counts``; None (no expansion) for a
    law that registers none.

    Parameters
    ----------
    counts : CountDistribution
        The count law.

    Returns
    -------
    CountTail or None
        Its pieces, or None.
    """
    return None


class _OneBTail(CountTail):
    """One b: m~(x) = h(1; x), equal to m(n) at every length."""

    def sizes(self, N0):
        return (0,)

    def surrogate(self, x, problem, size):
        return _terms(_log_odds_at(1.0, x, problem), x, problem), np.zeros_like(x)

    def evaluations(self, x, problem, size):
        return x.size

    def inner_bound(self, problem, N0, size):
        return 0.0, 0.0

    def disk(self, problem, size):
        return problem.r / (1 + problem.t_arg), 1.0

    def disk_bound(self, problem, size, y):
        return 1.0


class _UniformTail(CountTail):
    """Uniform counts: :prf:ref:`lem-midpoint-sum` in k, A terms summed at each end."""

    def sizes(self, N0):
        return tuple(A for A in (4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192) if 2 * A + 2 < N0 / 2)

    def surrogate(self, x, problem, size):
        return _uniform_surrogate(x, x[:, None], problem, size)

    def evaluations(self, x, problem, size):
        return x.size * (2 * size + 3 + _bulk_limits(x, problem, size)[2] * GL_NODES)

    def inner_bound(self, problem, N0, size):
        s, zeta_s = problem.lengths.exponent, problem.lengths.normaliser
        A, rho = size, math.sin(problem.r / 2)
        per_length = 13 / (360 * rho**4 * (A - 0.5) ** 3) + 1 / (48 * rho**3 * A**3)  # times M s(n) / n
        log_offset = 0.0 if problem.log_scaled else None
        return (
            per_length * _power_integral(N0, s + 1, None) / zeta_s,
            per_length * _power_integral(N0, s + 1, log_offset) / zeta_s,
        )

    def disk(self, problem, size):
        return problem.r / (2 + problem.t_arg), 2 * size + 1.0

    def disk_bound(self, problem, size, y):
        return 1 + (2 * size + 7 / 6) / y


class _BinomialTail(CountTail):
    """Binomial counts: the Taylor polynomial of degree J - 1 at k = q x."""

    def sizes(self, N0):
        return TAYLOR_CANDIDATES

    def surrogate(self, x, problem, size):
        return _binomial_surrogate(x, x[:, None], problem, size)

    def evaluations(self, x, problem, size):
        return x.size * CIRCLE_POINTS

    def inner_bound(self, problem, N0, size):
        s, zeta_s, counts = problem.lengths.exponent, problem.lengths.normaliser, problem.counts
        log_offset = 0.0 if problem.log_scaled else None
        J, q = size, counts.q
        rho = math.sin(problem.r / 2) * min(q, 1 - q)
        _, upper = _binomial_moment_polynomials(q, J)
        factor = math.e * (J + 1) / (rho**J * zeta_s * (1 - (1 - q) ** N0))
        plain = sum(c * _power_integral(N0, s + J - i, None) for i, c in enumerate(upper[J]) if c > 0)
        logged = sum(c * _power_integral(N0, s + J - i, log_offset) for i, c in enumerate(upper[J]) if c > 0)
        return factor * plain, factor * logged

    def disk(self, problem, size):
        return (problem.r / 2) / (2 + problem.t_arg), 0.0

    def disk_bound(self, problem, size, y):
        q = problem.counts.q
        rho_b = math.sin(problem.r / 4) * min(q, 1 - q)
        _, upper = _binomial_moment_polynomials(q, size)
        log_y = np.log(np.array([y]))
        total = sum(float(_scaled_polynomial(upper[j], log_y, -j * (math.log(rho_b) + log_y))[0]) for j in range(size))
        no_b = (1 - q) ** y
        return (total + no_b) / (1 - no_b)


@count_tail.register
def _one_b_tail(counts: OneB) -> CountTail:
    return _OneBTail()


@count_tail.register
def _uniform_tail(counts: UniformCount) -> CountTail:
    return _UniformTail()


@count_tail.register
def _binomial_tail(counts: BinomialCount) -> CountTail:
    return _BinomialTail()


def _bulk_limits(x: NDArray[np.float64], problem: _Problem, A: int) -> tuple[NDArray, NDArray, int]:
    """The bulk integral of the uniform surrogate at the nodes ``x``: its half-width in zeta
    (Lam), that half-width cut off at BULK_CUTOFF, and its number of GL panels (each <= r)."""
    full = np.log((x - A - 0.5) / (A + 0.5))
    half = np.minimum(full, BULK_CUTOFF)  # beyond, sigma' < e^-36: the rest is bounded below
    panels = max(1, math.ceil(2 * float(half.max()) / problem.r))
    return full, half, panels


def logistic_density_bound(distance: NDArray[np.float64], radius: float) -> NDArray[np.float64]:
    """The maximum of ``|sigma'(xi)|`` over ``|Re xi| >= distance``, ``|Im xi| <= radius`` (``radius <= pi/2``),
    the bound on the uniform law's bulk integrand on a quadrature panel's disks: ``sigma'(xi) = 1 / (4
    cosh^2(xi / 2))`` and ``|cosh(a + ib)|^2 = sinh^2 a + cos^2 b`` (:prf:ref:`lem-strip`, proof (iii)) give
    ``1 / (4 (sinh^2(distance / 2) + cos^2(radius / 2)))``, attained at ``distance + i radius``.

    Parameters
    ----------
    distance : ndarray
        float64 distances >= 0 of the panels' disks from the imaginary axis.
    radius : float
        The strip half-width, in (0, pi/2] (not checked).

    Returns
    -------
    ndarray
        float64, the shape of ``distance``.
    """
    return 1 / (4 * (np.sinh(distance / 2) ** 2 + math.cos(radius / 2) ** 2))


def _uniform_surrogate(x, col, problem: _Problem, A: int):
    steps = np.arange(1, A + 2, dtype=np.float64)
    low = _terms(_log_odds_at(steps, col, problem), col, problem)  # k = 1..A+1
    high = _terms(_log_odds_at(col - steps, col, problem), col, problem)  # k = x-1..x-A-1
    all_b = _terms(np.full_like(x, np.inf), x, problem)  # k = x: p = 1
    ends = low[:, :, :A].sum(axis=2) + high[:, :, :A].sum(axis=2) + all_b
    difference = (low[:, :, A] - low[:, :, A - 1]) - (high[:, :, A - 1] - high[:, :, A])
    # bulk: (1/x) int_{A+1/2}^{x-A-1/2} h dk = int_{-Lam}^{Lam} Phi(zeta + tau) sigma'(zeta) d zeta
    full, half, panels = _bulk_limits(x, problem, A)
    width = 2 * half / panels  # <= r
    starts = -half[:, None] + width[:, None] * np.arange(panels)
    zeta = (starts[:, :, None] + width[:, None, None] * (_GL_X + 1) / 2).reshape(x.size, -1)
    density = np.exp(-np.abs(zeta)) / (1 + np.exp(-np.abs(zeta))) ** 2  # sigma'(zeta)
    shift = problem.t * np.log(col) if problem.log_scaled else problem.t
    values = _terms(zeta + shift, col, problem) * density
    weights = np.tile(_GL_W, panels) * (width[:, None] / 2)
    bulk = (values * weights).sum(axis=2)
    surrogate = (ends + difference / 24) / x + bulk
    # quadrature error (lem-strip bound M on Phi; |sigma'| <= 1/(4 (sinh^2(d/2) + cos^2(R/2))) on the disks)
    radius = problem.r
    distance = np.maximum(0.0, np.minimum(np.abs(starts), np.abs(starts + width[:, None])) - radius)
    inside = (starts < 0) & (starts + width[:, None] > 0)
    distance = np.where(inside, 0.0, distance)
    density_bound = logistic_density_bound(distance, radius)
    error = GL_CONSTANT * (width[:, None] * (width[:, None] / radius) ** (2 * GL_NODES) * density_bound).sum(axis=1)
    error += np.where(full > half, 2 * np.exp(-half), 0.0)  # int_{|zeta| > cutoff} sigma' <= 2 e^-cutoff
    return surrogate, error


def _binomial_surrogate(x, col, problem: _Problem, J: int):
    q = problem.counts.q
    rho_b = math.sin(problem.r / 2) * min(q, 1 - q)
    rho_c = rho_b / 2
    angles = 2 * math.pi * np.arange(CIRCLE_POINTS) / CIRCLE_POINTS
    k = q * col + rho_c * col * np.exp(1j * angles)
    values = _terms(_log_odds_at(k, col, problem), col, problem)  # (4, nx, L)
    coefficients = np.fft.fft(values, axis=2)[:, :, :J].real / CIRCLE_POINTS  # a_j (rho_c x)^j
    moments, upper = _binomial_moment_polynomials(q, J)
    log_x = np.log(x)
    scaled = np.stack([_scaled_polynomial(moments[j], log_x, -j * (math.log(rho_c) + log_x)) for j in range(J)], axis=1)
    none_b = _terms(np.full_like(x, -np.inf), x, problem)  # k = 0: p = 0
    no_b = np.exp(x * math.log1p(-q))
    expectation = (coefficients * scaled).sum(axis=2)
    surrogate = (expectation - no_b * none_b) / (1 - no_b)
    # aliasing of the circle rule: |a~_j - a_j| <= M (rho_b x)^-j beta / (1 - beta), beta = (rho_c/rho_b)^L
    beta = 0.5**CIRCLE_POINTS
    upper_scaled = sum(_scaled_polynomial(upper[j], log_x, -j * (math.log(rho_b) + log_x)) for j in range(J))
    error = beta / (1 - beta) * upper_scaled / (1 - no_b)
    return surrogate, error


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
        The count law of the positives; a law without registered pieces (:func:`count_tail`)
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
    """The problem of an expansion; None for a count law without pieces (:func:`count_tail`)."""
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
