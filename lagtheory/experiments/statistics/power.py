"""Power of paired tests of two schedules, and the seeds per cell they call for.

The comparisons are paired by seed (:mod:`lagtheory.experiments.statistics.paired`); each outcome has its own
test, so its own power:

* (a) failure, and for languages exact recognition: McNemar's exact test
  (:func:`mcnemar_power`, exact: the number of discordant pairs is Binomial(n, p10 + p01), and given it the
  pairs where only joint fails are Binomial(D, p10 / (p10 + p01)); the test rejects where the two-sided exact
  binomial p-value, ``min(1, 2 P(Bin(D, 1/2) <= min(k, D - k)))``, is below alpha);
* (b) the log10 held-out loss on the seeds where both succeed, differences taken as normal: the paired t-test
  of no difference (:func:`t_power`) and the two one-sided tests of equivalence within a margin
  (:func:`tost_power`), both exact up to quadrature (given the sample sd the mean is normal and independent of
  it; the power is an integral over the sd's chi-square law);
* (c) the step-size window: a rate of the grid counts as a success when at least 90% of the n seeds succeed
  there; :func:`window_accuracy` gives the probability that a rate is classified right when its true success
  probability is ``p``.

Nothing here knows a study: the confirmatory study's planning effects and seeds per cell
(``book/registration.md``) are computed from these in :mod:`lagtheory.experiments.confirmatory.planning`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import scipy.integrate
import scipy.stats
from numpy.typing import ArrayLike, NDArray

from lagtheory._validation import check_integer, check_probability


def _check_n(n: int) -> int:
    return check_integer(n, "n", 1)


def _check_share(value: float, name: str) -> float:
    """A probability in [0, 1] (0 allowed: a discordance that never happens)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return float(value)


def mcnemar_power(n: int, p10: float, p01: float, alpha: float) -> float:
    """Exact power of McNemar's exact two-sided test at level ``alpha`` with ``n`` pairs, where a pair is
    discordant one way with probability ``p10`` and the other way with ``p01`` (module docstring).

    Parameters
    ----------
    n : int
        The number of pairs, >= 1.
    p10, p01 : float
        The probabilities of the two kinds of discordant pair, each in [0, 1], with ``p10 + p01 <= 1``.
    alpha : float
        The level, in (0, 1).

    Returns
    -------
    float
        The power (0 when no pair can be discordant).

    Raises
    ------
    ValueError
        If an argument is out of range.
    TypeError
        If ``n``, ``p10`` or ``p01`` has the wrong type.
    """
    n = _check_n(n)
    p10 = _check_share(p10, "p10")
    p01 = _check_share(p01, "p01")
    check_probability(alpha, "alpha")
    if p10 + p01 > 1:
        raise ValueError(f"p10 + p01 must be at most 1, got {p10 + p01!r}")
    if p10 + p01 == 0:
        return 0.0
    size = 1 << (n - 1).bit_length() if n <= _ROUNDED_UP_TO else n  # the runs up to a power of two, reused
    sums, lengths = _mcnemar_runs(p10 / (p10 + p01), alpha, size)
    return _weighted_total(scipy.stats.binom.pmf(np.arange(1, n + 1), n, p10 + p01), sums[:n], lengths[:n])


_ROUNDED_UP_TO = 4096
"""The largest n whose runs :func:`mcnemar_power` computes up to the power of two at or above it (beyond it,
up to n itself: a table of every rejected count grows as n^2, and a search that runs away should not pay 4 times)."""


@functools.lru_cache(maxsize=64)
def _mcnemar_runs(share: float, alpha: float, size: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """For each discordant total D = 1..``size``: the probability, given D, of the counts that McNemar's test
    rejects at ``alpha`` (their Binomial(D, ``share``) pmfs summed in increasing k, :func:`_run_sums`), and how
    many counts that is. They do not depend on the number of pairs n, so :func:`mcnemar_power` takes them
    from here, computed once per share and level up to the power of two at or above n (up to n beyond
    ``_ROUNDED_UP_TO``; each D's values are computed element by element, the same whatever ``size`` is):
    :func:`smallest_n`'s search at one share computes them once, not once per n tried. The arrays are read-only."""
    discordant = np.arange(1, size + 1)

    # The p-value grows with min(k, D - k), so the test rejects exactly where min(k, D - k) <= c_D, c_D the
    # largest count with 2 P(Bin(D, 1/2) <= c_D) < alpha (-1: none). Since P(Bin(D, 1/2) <= D // 2) >= 1/2,
    # c_D < D / 2 and the two tails {k <= c_D}, {k >= D - c_D} do not meet. The quantile gives c_D; the loop
    # settles it by the p-value's own comparison where the quantile's rounding is off by one (each D's c_D by
    # its own comparisons).
    def rejects(k: NDArray[np.int64]) -> NDArray[np.bool_]:
        return np.minimum(1.0, 2.0 * scipy.stats.binom.cdf(k, discordant, 0.5)) < alpha

    critical = scipy.stats.binom.ppf(alpha / 2.0, discordant, 0.5).astype(np.int64) - 1
    while True:
        up = (critical + 1 < discordant - critical - 1) & rejects(critical + 1)
        down = (critical >= 0) & ~rejects(critical)
        if not (up.any() or down.any()):
            break
        critical += up.astype(np.int64) - down.astype(np.int64)
    # Given D, the probability of the rejected counts: their binomial pmfs, all in one call, summed per D in
    # increasing k (the sum as a registered design's powers were first computed, one D at a time: the same
    # operations, so the same last bits).
    lengths = np.where(critical >= 0, 2 * (critical + 1), 0)
    starts = np.cumsum(lengths) - lengths
    position = np.arange(lengths.sum()) - np.repeat(starts, lengths)
    low = np.repeat(critical, lengths)
    counts = np.where(position <= low, position, np.repeat(discordant, lengths) - 2 * low - 1 + position)
    sums = _run_sums(scipy.stats.binom.pmf(counts, np.repeat(discordant, lengths), share), lengths)
    sums.setflags(write=False)
    lengths.setflags(write=False)
    return sums, lengths


def _run_sums(values: NDArray[np.float64], lengths: ArrayLike) -> NDArray[np.float64]:
    """The sum of each run of ``values`` (the runs laid end to end, ``lengths[D]`` long; 0 for an empty run),
    each run summed by itself (a copy, so that its last bits do not depend on where it lies in ``values``).

    Parameters
    ----------
    values : ndarray of float
        The probabilities of the rejected tables, run after run.
    lengths : array_like of int
        The length of each run, summing to ``len(values)``.

    Returns
    -------
    ndarray of float
        One sum per run.
    """
    sums, start = np.zeros(len(lengths)), 0
    for index, length in enumerate(lengths):
        if length:
            sums[index] = float(values[start : start + length].copy().sum())
            start += length
    return sums


def _weighted_total(weights: ArrayLike, sums: NDArray[np.float64], lengths: ArrayLike) -> float:
    """The sum over discordant totals D with a non-empty run of ``weights[D] * sums[D]``, accumulated in
    increasing D: the operations of a loop over D (:func:`sum_per_total`).

    Parameters
    ----------
    weights : array_like of float
        One weight per total, P(D).
    sums : ndarray of float
        One run sum per total (:func:`_run_sums`).
    lengths : array_like of int
        The length of each total's run (0: nothing rejected, left out).

    Returns
    -------
    float
        The sum.
    """
    total = 0.0
    for weight, run_sum, length in zip(weights, sums, lengths, strict=True):
        if length:
            total += weight * run_sum
    return float(total)


def sum_per_total(weights: ArrayLike, values: NDArray[np.float64], lengths: ArrayLike) -> float:
    """The sum over discordant totals D of ``weights[D]`` times the sum of the D-th run of ``values`` (the runs
    laid end to end, ``lengths[D]`` long), each run summed by itself and the products accumulated in increasing
    D: the operations of a loop over D, so that an exact power computed in one vectorised pass has the last bits
    the registered designs' powers were first computed with (:func:`mcnemar_power`,
    :func:`lagtheory.experiments.confirmatory.transformer_report.tost_power`).

    Parameters
    ----------
    weights : array_like of float
        One weight per total, P(D).
    values : ndarray of float
        The probabilities of the rejected tables, run after run.
    lengths : array_like of int
        The length of each total's run (0: nothing rejected), summing to ``len(values)``.

    Returns
    -------
    float
        The sum.
    """
    return _weighted_total(weights, _run_sums(values, lengths), lengths)


def _over_sample_sd(n: int, probability: Any) -> float:
    """E over the sample standard deviation s of n normal differences with sd 1 of ``probability(s)``:
    (n - 1) s^2 is chi-square with n - 1 degrees of freedom (numerical quadrature over it, between its
    1e-13 and 1 - 1e-13 quantiles, where all but 2e-13 of its mass lies)."""
    df = n - 1
    value, _ = scipy.integrate.quad(
        lambda v: probability(math.sqrt(v / df)) * scipy.stats.chi2.pdf(v, df),
        scipy.stats.chi2.ppf(1e-13, df),
        scipy.stats.chi2.isf(1e-13, df),
        epsabs=1e-12,
        epsrel=1e-10,
        limit=200,
    )
    return float(min(1.0, max(0.0, value)))


def t_power(n: int, effect: float, sd: float, alpha: float) -> float:
    """Power of the two-sided paired t-test at level ``alpha`` with ``n`` pairs whose differences are normal
    with mean ``effect`` and standard deviation ``sd``: given the sample sd s, the mean is N(effect, sd^2 / n)
    and the test rejects where ``|mean| > t s / sqrt(n)`` (t the critical value), so the power is the expectation
    over s of ``P(|mean| > t s / sqrt(n))`` (exact up to quadrature).

    Parameters
    ----------
    n : int
        The number of pairs, >= 2.
    effect : float
        The mean of the differences.
    sd : float
        Their standard deviation, > 0.
    alpha : float
        The level, in (0, 1).

    Returns
    -------
    float
        The power, in [0, 1].

    Raises
    ------
    ValueError
        If ``n``, ``sd`` or ``alpha`` is out of range.
    """
    n = check_integer(n, "n", 2)
    if not sd > 0:
        raise ValueError(f"sd must be > 0, got {sd!r}")
    check_probability(alpha, "alpha")
    critical = scipy.stats.t.ppf(1 - alpha / 2, n - 1)
    shift = effect / sd * math.sqrt(n)  # the mean in units of its standard error

    def rejects(s: float) -> float:
        edge = critical * s
        return float(scipy.stats.norm.cdf(-edge - shift) + scipy.stats.norm.sf(edge - shift))

    return _over_sample_sd(n, rejects)


def tost_power(n: int, sd: float, margin: float, alpha: float, effect: float = 0.0) -> float:
    """Power of the two one-sided t-tests of equivalence within +-``margin`` at level ``alpha`` (each
    one-sided) with ``n`` normal differences of mean ``effect`` and sd ``sd``: both reject where
    ``-margin + t s / sqrt(n) < mean < margin - t s / sqrt(n)``, so the power is the expectation over the sample
    sd s of that probability (exact up to quadrature).

    Parameters
    ----------
    n : int
        The number of pairs, >= 2.
    sd : float
        The standard deviation of the differences, > 0.
    margin : float
        The equivalence margin, > 0.
    alpha : float
        The level of each one-sided test, in (0, 1).
    effect : float, optional
        The mean of the differences.

    Returns
    -------
    float
        The power, in [0, 1].

    Raises
    ------
    ValueError
        If ``n``, ``sd``, ``margin`` or ``alpha`` is out of range.
    """
    n = check_integer(n, "n", 2)
    if not sd > 0 or not margin > 0:
        raise ValueError(f"sd and margin must be > 0, got {sd!r}, {margin!r}")
    check_probability(alpha, "alpha")
    critical = scipy.stats.t.ppf(1 - alpha, n - 1)
    scale = math.sqrt(n) / sd  # converts the loss scale into standard errors of the mean

    def rejects(s: float) -> float:
        high = (margin - effect) * scale - critical * s
        low = (-margin - effect) * scale + critical * s
        return float(max(0.0, scipy.stats.norm.cdf(high) - scipy.stats.norm.cdf(low)))

    return _over_sample_sd(n, rejects)


def window_accuracy(n: int, p: float, share: float = 0.9) -> float:
    """The probability that a grid rate is classified right by "at least ``share`` of n seeds succeed" when a
    run there succeeds with probability ``p``: ``P(Bin(n, p) >= ceil(share n))`` if ``p >= share``, else the
    complement.

    Parameters
    ----------
    n : int
        The number of seeds, >= 1.
    p : float
        The success probability of a run at the rate, in [0, 1].
    share : float, optional
        The share of seeds that must succeed, in (0, 1).

    Returns
    -------
    float
        The probability of the right classification.

    Raises
    ------
    ValueError
        If an argument is out of range.
    TypeError
        If an argument has the wrong type.
    """
    n = _check_n(n)
    p = _check_share(p, "p")
    share = check_probability(share, "share")
    needed = math.ceil(share * n - 1e-9)
    inside = float(scipy.stats.binom.sf(needed - 1, n, p))
    return inside if p >= share else 1.0 - inside


def smallest_n(power: Any, target: float, start: int = 2, stop: int = 20_000) -> int | None:
    """The smallest n in [start, stop] with ``power(n) >= target``: doubling from ``start`` until the target is
    reached, then bisection (power is taken as non-decreasing in n, true for the t-tests and up to the small
    saw-tooth of an exact test).

    Parameters
    ----------
    power : callable
        ``power(n)``, the power with n seeds.
    target : float
        The power to reach.
    start : int, optional
        The smallest n tried (not checked).
    stop : int, optional
        The largest n tried.

    Returns
    -------
    int or None
        The n; None if the target is not reached by ``stop``.
    """
    low, high = start, start
    while power(high) < target:
        if high >= stop:
            return None
        low, high = high + 1, min(stop, 2 * high)
    while low < high:
        middle = (low + high) // 2
        if power(middle) >= target:
            high = middle
        else:
            low = middle + 1
    return high
