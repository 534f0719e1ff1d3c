"""Distributions kappa(k | n) of the number k >= 1 of b's in a positive string
of length n (:eq:`eq-population-loss`). The b's sit at uniform positions;
the model only sees the counts, so kappa is all the population needs."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from ._validation import check_probability
from .memory import MEMORY_BUDGET, check_memory_budget, require_memory

TABLE_BYTES = 128
"""Bytes per row (n, k) of :meth:`CountDistribution.table` at its peak for a law that does not state
its own (``table_bytes``), an upper bound of every law here (measured with tracemalloc: 24 for one b,
40 for the uniform law, 99 for the binomial): the estimate compared with ``memory_budget``."""


class CountDistribution(ABC):
    """kappa(k | n) on k in {1, ..., n}.

    A law implements ``_table`` (and :meth:`rows` and :meth:`strings_up_to` where it has fewer than every k);
    :meth:`table` checks its memory first, ``table_bytes`` per row.
    """

    table_bytes: ClassVar[int] = TABLE_BYTES
    """Bytes per row of :meth:`CountDistribution.table` at its peak, an upper bound within twice the measured peak."""

    def table(
        self, lengths: NDArray[np.int64], *, memory_budget: int = MEMORY_BUDGET
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Flat arrays (n, k, kappa(k | n)) over every length in ``lengths`` and every k it allows.

        Parameters
        ----------
        lengths : ndarray
            int64 lengths, >= 1.
        memory_budget : int, optional
            The most bytes the table may take, ``table_bytes`` per row
            (:data:`lagtheory.memory.MEMORY_BUDGET` by default). Keyword only.

        Returns
        -------
        n, k, kappa : ndarray
            float64, one entry per string (n, k).

        Raises
        ------
        ValueError
            Before anything is allocated, when the rows would need more than ``memory_budget``,
            naming ``lengths`` and the number of rows that fit.
        """
        lengths = np.asarray(lengths, dtype=np.int64)
        rows = self.rows(lengths)
        memory_budget = check_memory_budget(memory_budget)
        require_memory(
            rows * self.table_bytes,
            memory_budget,
            f"the table of {self!r} over {lengths.size} lengths (the largest {lengths.max(initial=0)}) with {rows:.3g} rows",
            f"lengths with at most {memory_budget // self.table_bytes:.3g} rows in all (one per string (n, k))",
        )
        return self._table(lengths)

    @abstractmethod
    def _table(
        self, lengths: NDArray[np.int64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """:meth:`table` without its memory check: the rows (n, k, kappa(k | n))."""

    def rows(self, lengths: NDArray[np.int64]) -> int:
        """The number of rows of :meth:`table` over ``lengths``.

        Parameters
        ----------
        lengths : ndarray
            int64 lengths, >= 1.

        Returns
        -------
        int
            Here every 1 <= k <= n: the sum of the lengths.
        """
        return int(np.sum(lengths, dtype=np.float64))

    def strings_up_to(self, N: int) -> int:
        """The number of positives (n, k) with n <= N that a population sum visits.

        Parameters
        ----------
        N : int
            The truncation length.

        Returns
        -------
        int
            Here every 1 <= k <= n: N (N + 1) / 2, the rows of :meth:`table` over the
            lengths 1 to N.
        """
        return N * (N + 1) // 2


@dataclass(frozen=True)
class OneB(CountDistribution):
    """The base case: exactly one b, kappa(1 | n) = 1."""

    table_bytes: ClassVar[int] = 48  # measured 24 a row

    def _table(self, lengths):
        n = lengths.astype(np.float64)
        return n, np.ones_like(n), np.ones_like(n)

    def rows(self, lengths: NDArray[np.int64]) -> int:
        """One row (n, 1) per length.

        Parameters
        ----------
        lengths : ndarray
            int64 lengths, >= 1.

        Returns
        -------
        int
            The number of lengths.
        """
        return int(np.size(lengths))

    def strings_up_to(self, N: int) -> int:
        """N: one string (n, 1) per length.

        Parameters
        ----------
        N : int
            The truncation length.

        Returns
        -------
        int
            N.
        """
        return N


def _all_counts(lengths: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    n = np.repeat(lengths, lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    k = np.arange(n.size) - starts + 1
    return n.astype(np.float64), k.astype(np.float64)


@dataclass(frozen=True)
class UniformCount(CountDistribution):
    """k uniform on {1, ..., n}: kappa(k | n) = 1 / n."""

    table_bytes: ClassVar[int] = 64  # measured 40 a row

    def _table(self, lengths):
        n, k = _all_counts(lengths)
        return n, k, 1.0 / n


@dataclass(frozen=True)
class BinomialCount(CountDistribution):
    """Each position is b with probability q, conditioned on at least one b.

    ``kappa(k | n) = C(n, k) q^k (1 - q)^(n - k) / (1 - (1 - q)^n)``.

    Attributes
    ----------
    q : float
        The probability of b at each position, in (0, 1).
    """

    q: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "q", check_probability(self.q, "q"))

    def _table(self, lengths):
        from scipy.stats import binom  # scipy.stats costs ~0.9 s to import; only this law needs it

        n, k = _all_counts(lengths)
        log_no_b = n * np.log1p(-self.q)
        weight = np.exp(binom.logpmf(k, n, self.q) - np.log(-np.expm1(log_no_b)))
        return n, k, weight


def resolve_counts(positives: str | CountDistribution) -> CountDistribution:
    """Accept a CountDistribution or the names "one-b" and "uniform".

    Parameters
    ----------
    positives : CountDistribution or {"one-b", "uniform"}
        The count law, or its name.

    Returns
    -------
    CountDistribution
        The law.

    Examples
    --------
    >>> resolve_counts("uniform"), resolve_counts(BinomialCount(0.3))
    (UniformCount(), BinomialCount(q=0.3))
    """
    if isinstance(positives, CountDistribution):
        return positives
    named = {"one-b": OneB(), "uniform": UniformCount()}
    if not isinstance(positives, str) or positives not in named:
        raise ValueError(
            f"positives must be 'one-b', 'uniform' or a CountDistribution (OneB, UniformCount, BinomialCount), got {positives!r}"
        )
    return named[positives]
