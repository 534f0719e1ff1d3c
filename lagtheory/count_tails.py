"""The count law's pieces of the tail expansion of power-law population sums (book
:prf:ref:`thm-tail-expansion`, :prf:ref:`lem-midpoint-sum`): for each count law of the positives, the
surrogate m~(x) of m(n) = sum_k kappa(k | n) h(k; n) at real lengths x, its sizes (A for uniform
counts, J for binomial counts), the bound on its inner error and the disks of its outer bound.

* one b:       m~(x) = h(1; x) (equal to m(n) at every n);
* uniform k:   m~(x) = (1/x) [sum_{k<=A} h(k; x) + sum_{j<=A} h(x - j; x) + integral of h
               over [A + 1/2, x - A - 1/2] + a difference correction]  (:prf:ref:`lem-midpoint-sum` in k);
* binomial k:  m~(x) = the Taylor polynomial of h(.; x) at k = q x, of degree J - 1,
               averaged against the binomial central moments, and the condition k >= 1.

Each law's pieces are one :class:`CountTail`, found by :func:`count_tail` (a
``functools.singledispatch`` function: a new count law registers its own pieces, and a law without
pieces has no expansion). :mod:`lagtheory.heavy_tail` adds the pieces' bounds to those of the sum
over lengths, chooses the sizes and evaluates the expansion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache, singledispatch

import numpy as np
from numpy.typing import NDArray

from .counts import BinomialCount, CountDistribution, OneB, UniformCount
from .lengths import PowerLaw
from .per_string import per_string_terms

GL_NODES = 8
_GL_X, _GL_W = np.polynomial.legendre.leggauss(GL_NODES)
# m-point Gauss-Legendre on a panel of length L, integrand analytic with |g| <= K on the disks
# of radius R around the panel: error <= GL_CONSTANT * L * (L / R)^(2m) * K.
GL_CONSTANT = math.factorial(GL_NODES) ** 4 / ((2 * GL_NODES + 1) * math.factorial(2 * GL_NODES) ** 2)
TAYLOR_CANDIDATES = tuple(range(4, 41, 2))  # J (even), binomial counts
CIRCLE_POINTS = 64  # samples on the circle that gives the Taylor coefficients (aliasing 2^-64)
BULK_CUTOFF = 36.0  # the bulk integral of the uniform count runs over |zeta| <= 36


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
    M: NDArray[np.float64]  # the string bounds of lem-strip (heavy_tail.string_bounds)

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
            The expansion's problem, built by :func:`~lagtheory.heavy_tail.tail_expansion` (the laws, the parameters,
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
            The expansion's problem, built by :func:`~lagtheory.heavy_tail.tail_expansion` (the laws, the parameters,
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
            The expansion's problem, built by :func:`~lagtheory.heavy_tail.tail_expansion` (the laws, the parameters,
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
            The expansion's problem, built by :func:`~lagtheory.heavy_tail.tail_expansion` (the laws, the parameters,
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
            The expansion's problem, built by :func:`~lagtheory.heavy_tail.tail_expansion` (the laws, the parameters,
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
