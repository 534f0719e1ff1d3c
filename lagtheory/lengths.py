"""Length distributions pi on {1, 2, ...} with unbounded support.

Each distribution knows its exact probability mass function and two proven
tail bounds (:eq:`eq-tail-bound`)::

    T0(N) >= P(n > N)             (mass beyond the truncation length N)
    T1(N) >= E[log n ; n > N]     (log-weighted mass beyond N; the attention
                                   gradient carries a factor log n)

so that a population sum truncated at N has an error bounded by a multiple
of T0(N) and T1(N). Each distribution also draws seeded samples (``sample``: exact for
the geometric law, by inverse CDF on {1, ..., N} otherwise), and the power law has a
density at real lengths for the tail expansion of :mod:`lagtheory.heavy_tail`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import zeta

from ._validation import as_float_array, check_integer, check_lengths, check_positive
from .memory import MEMORY_BUDGET, check_memory_budget, require_memory

DRAW_BYTES = 32
"""Bytes per draw of :meth:`LengthDistribution.sample` (four int64 or float64 arrays of the sample's
size), an upper bound of its peak: the estimate compared with ``memory_budget``."""
SUPPORT_BYTES = 48
"""Bytes per length of the support of an inverse-CDF draw (the lengths, their pmf and its cumulative
sums), an upper bound of the peak while it is built."""

_last_truncation: dict[LengthDistribution, int] = {}


class LengthDistribution(ABC):
    """A distribution of string lengths on {1, 2, ...}.

    ``expandable``: whether the population sums over this law have the tail expansion of
    :prf:ref:`thm-tail-expansion` (:mod:`lagtheory.heavy_tail`; power laws only).
    """

    expandable: ClassVar[bool] = False

    @abstractmethod
    def pmf(self, n: ArrayLike) -> NDArray[np.float64]:
        """Exact probability pi(n) of each length n.

        Parameters
        ----------
        n : array_like
            Lengths, whole numbers >= 1.

        Returns
        -------
        ndarray
            pi(n), float64.
        """

    @abstractmethod
    def tail_mass_bound(self, N: int) -> float:
        """An upper bound T0(N) on P(n > N).

        Parameters
        ----------
        N : int
            The truncation length, >= :attr:`min_truncation`.

        Returns
        -------
        float
            T0(N).
        """

    @abstractmethod
    def tail_log_moment_bound(self, N: int) -> float:
        """An upper bound T1(N) on E[log n ; n > N].

        Parameters
        ----------
        N : int
            The truncation length, >= :attr:`min_truncation`.

        Returns
        -------
        float
            T1(N).
        """

    @property
    @abstractmethod
    def min_truncation(self) -> int:
        """Smallest N for which the tail bounds are valid."""

    def truncation_length(self, mass_tol: float, log_tol: float, max_length: int = 10_000_000) -> int:
        """Smallest N >= min_truncation with T0(N) <= mass_tol and T1(N) <= log_tol.

        Both bounds decrease in N, so doubling then bisection finds N exactly.

        Parameters
        ----------
        mass_tol : float
            The bound on T0(N), > 0.
        log_tol : float
            The bound on T1(N), > 0; ``math.inf`` drops the second condition (used when the
            attention gradient vanishes, w = 0).
        max_length : int, optional
            The largest N allowed.

        Returns
        -------
        int
            N.

        Raises
        ------
        ValueError
            Naming ``tol``, if N would exceed ``max_length`` (a heavy tail with a tiny
            tolerance: loosen tol or lighten the tail).
        """
        check_positive(mass_tol, "tol")
        if log_tol != math.inf:
            check_positive(log_tol, "tol")

        def small_enough(N: int) -> bool:
            return self.tail_mass_bound(N) <= mass_tol and self.tail_log_moment_bound(N) <= log_tol

        # Warm start: a training run asks at every step with nearly the same tolerances, and the
        # answer is usually the previous one (minimal because N - 1 fails; both bounds decrease).
        previous = _last_truncation.get(self)
        if previous is not None and previous <= max_length and small_enough(previous):
            if previous == self.min_truncation or not small_enough(previous - 1):
                return previous
        N = self._smallest_truncation(small_enough, max_length)
        if len(_last_truncation) >= 256:
            _last_truncation.clear()
        _last_truncation[self] = N
        return N

    def sample_support(self, tol: float) -> int | None:
        """The largest length :meth:`sample` draws at tolerance ``tol``.

        Parameters
        ----------
        tol : float
            The mass the draws may leave out, > 0.

        Returns
        -------
        int or None
            The smallest N with P(n > N) <= ``tol`` by the proven tail bound (the mass
            condition of :eq:`eq-tail-bound`); None where the draws are exact and unbounded
            (the geometric law).
        """
        return self.truncation_length(tol, math.inf)

    def sample(
        self, size: int, rng: np.random.Generator, tol: float, *, memory_budget: int = MEMORY_BUDGET
    ) -> NDArray[np.int64]:
        """``size`` lengths drawn from ``rng`` with one uniform each.

        By inverse CDF of pi restricted to {1, ..., N}, N = :meth:`sample_support` (``tol``):
        the law drawn is pi conditioned on n <= N, within total variation ``tol`` of pi.

        Parameters
        ----------
        size : int
            How many lengths, >= 0.
        rng : numpy.random.Generator
            The source of randomness.
        tol : float
            The mass the draws may leave out, > 0.
        memory_budget : int, optional
            The most bytes the draws may take, ``DRAW_BYTES`` a draw and ``SUPPORT_BYTES`` a length
            of the support (:data:`lagtheory.memory.MEMORY_BUDGET` by default). Keyword only.

        Returns
        -------
        ndarray
            int64 lengths.

        Raises
        ------
        ValueError
            Before anything is allocated, when the draws would need more than ``memory_budget``,
            naming ``size``.
        """
        support = self.sample_support(tol)
        _require_draw_memory(size, support, memory_budget)
        uniform = rng.random(size)
        cdf = _support_cdf(self, support)
        return 1 + np.searchsorted(cdf, uniform * cdf[-1], side="right").astype(np.int64)

    def _smallest_truncation(self, small_enough, max_length: int) -> int:
        """Smallest N >= min_truncation with small_enough(N), by doubling then bisection."""
        low = self.min_truncation
        if small_enough(low):
            return low
        high = 2 * low
        while not small_enough(high):
            if high > max_length:
                raise ValueError(
                    f"tol too small for {self!r}: the truncation length would exceed "
                    f"max_length={max_length}; use a larger tol or a lighter-tailed distribution"
                )
            low, high = high, 2 * high
        while high - low > 1:
            middle = (low + high) // 2
            if small_enough(middle):
                high = middle
            else:
                low = middle
        return high


def _require_draw_memory(size: int, support: int | None, memory_budget: int) -> None:
    """Refuse ``size`` draws (by inverse CDF on 1..``support``; None: exact draws) beyond the budget."""
    size = check_integer(size, "size", minimum=0)
    memory_budget = check_memory_budget(memory_budget)
    table = 0 if support is None else support * SUPPORT_BYTES
    require_memory(
        size * DRAW_BYTES + table,
        memory_budget,
        f"{size:.3g} draws of lengths" + ("" if support is None else f" from a support of {support} lengths"),
        f"size <= {max(0, memory_budget - table) // DRAW_BYTES:.3g}",
    )


@lru_cache(maxsize=4)
def _support_cdf(law: LengthDistribution, N: int) -> NDArray[np.float64]:
    """The cumulative sums of pi(1), ..., pi(N), read-only (cached: a run samples at every step)."""
    cdf = np.cumsum(law.pmf(np.arange(1, N + 1)))
    cdf.setflags(write=False)
    return cdf


@dataclass(frozen=True)
class Geometric(LengthDistribution):
    """Geometric lengths with the given mean (:eq:`eq-geometric`):

        pi(n) = q (1 - q)^(n - 1),  n >= 1,  q = 1 / mean.

    Tail bounds: P(n > N) = (1 - q)^N exactly, and since log n <= log N + (n - N)/N
    for n >= N (concavity), E[log n ; n > N] <= (1 - q)^N (log N + 1/(N q)).

    Attributes
    ----------
    mean : float
        The mean length, finite and > 1.

    Raises
    ------
    ValueError
        If ``mean`` is not finite and > 1.
    TypeError
        If ``mean`` is not a real number.
    """

    mean: float

    def __post_init__(self) -> None:
        mean = check_positive(self.mean, "mean")
        if mean <= 1:
            raise ValueError(
                f"mean must be > 1 (a geometric length on {{1, 2, ...}} with unbounded support), got {mean!r}"
            )
        object.__setattr__(self, "mean", mean)

    @property
    def success(self) -> float:
        """Q = 1 / mean."""
        return 1.0 / self.mean

    @property
    def min_truncation(self) -> int:
        return 1

    def pmf(self, n: ArrayLike) -> NDArray[np.float64]:
        n_arr = as_float_array(n, "n")
        check_lengths(n_arr)
        q = self.success
        return q * np.exp((n_arr - 1) * math.log1p(-q))

    def tail_mass_bound(self, N: int) -> float:
        return math.exp(N * math.log1p(-self.success))

    def tail_log_moment_bound(self, N: int) -> float:
        return self.tail_mass_bound(N) * (math.log(N) + 1.0 / (N * self.success))

    def sample_support(self, tol: float) -> None:
        """None: the draws of :meth:`sample` are exact.

        Parameters
        ----------
        tol : float
            Not used.

        Returns
        -------
        None
            The draws are unbounded.
        """
        return None

    def sample(
        self, size: int, rng: np.random.Generator, tol: float, *, memory_budget: int = MEMORY_BUDGET
    ) -> NDArray[np.int64]:
        """``size`` lengths drawn exactly from ``rng`` by inverse CDF, one uniform each:
        n = 1 + floor(log(V) / log(1 - q)), V uniform on (0, 1], since P(n > N) = (1 - q)^N.

        Parameters
        ----------
        size : int
            How many lengths, >= 0.
        rng : numpy.random.Generator
            The source of randomness.
        tol : float
            Not used (the draws are exact).
        memory_budget : int, optional
            The most bytes the draws may take, ``DRAW_BYTES`` a draw
            (:data:`lagtheory.memory.MEMORY_BUDGET` by default). Keyword only.

        Returns
        -------
        ndarray
            int64 lengths.

        Raises
        ------
        ValueError
            Before anything is allocated, when the draws would need more than ``memory_budget``,
            naming ``size``.
        """
        _require_draw_memory(size, None, memory_budget)
        uniform = rng.random(size)
        q = self.success
        return 1 + np.floor(np.log1p(-uniform) / math.log1p(-q)).astype(np.int64)

    def __repr__(self) -> str:
        return f"Geometric(mean={self.mean:g})"


@dataclass(frozen=True)
class PowerLaw(LengthDistribution):
    """Power-law (zeta) lengths with exponent s > 1 (:eq:`eq-power-law`):

        pi(n) = n^(-s) / zeta(s),  n >= 1.

    Tail bounds by comparison with integrals (x^(-s) and x^(-s) log x decrease
    for x >= 3 > e^(1/s)):  P(n > N) <= N^(1-s) / ((s - 1) zeta(s)) and
    E[log n ; n > N] <= N^(1-s) (log N / (s - 1) + 1/(s - 1)^2) / zeta(s),  N >= 3.

    Attributes
    ----------
    exponent : float
        The exponent s, finite and > 1.

    Raises
    ------
    ValueError
        If ``exponent`` is not finite and > 1.
    TypeError
        If ``exponent`` is not a real number.
    """

    exponent: float
    expandable: ClassVar[bool] = True

    def __post_init__(self) -> None:
        exponent = check_positive(self.exponent, "exponent")
        if exponent <= 1:
            raise ValueError(f"exponent must be > 1 (so that sum n^-exponent converges), got {exponent!r}")
        object.__setattr__(self, "exponent", exponent)

    @property
    def normaliser(self) -> float:
        """zeta(s)."""
        return float(zeta(self.exponent))

    @property
    def min_truncation(self) -> int:
        return 3

    def pmf(self, n: ArrayLike) -> NDArray[np.float64]:
        n_arr = as_float_array(n, "n")
        check_lengths(n_arr)
        return self.density(n_arr)

    def density(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """x^(-s) / zeta(s) at real x >= 1 (not checked): pi(n) continued to real lengths, the
        integrand of the tail expansion (:prf:ref:`thm-tail-expansion`).

        Parameters
        ----------
        x : ndarray
            float64 real lengths >= 1.

        Returns
        -------
        ndarray
            float64, the shape of ``x``.
        """
        return np.exp(-self.exponent * np.log(x)) / self.normaliser

    def tail_mass_bound(self, N: int) -> float:
        s = self.exponent
        return N ** (1 - s) / ((s - 1) * self.normaliser)

    def tail_log_moment_bound(self, N: int) -> float:
        s = self.exponent
        return N ** (1 - s) * (math.log(N) / (s - 1) + 1 / (s - 1) ** 2) / self.normaliser

    def __repr__(self) -> str:
        return f"PowerLaw(exponent={self.exponent:g})"
