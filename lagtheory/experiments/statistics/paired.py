"""Paired statistics for comparing two schedules seed by seed.

Within a seed, two schedules share the data and the initialisation, so the
comparison is made on the per-seed differences ``d_j = a_j - b_j`` (oriented
so that a positive difference favours ``a``), never on two separate means.

* :func:`bootstrap_interval`: a 95% bootstrap interval of the mean difference
  (``scipy.stats.bootstrap``, BCa, on the differences);
* :func:`paired_t`: the paired t-test of "no difference" (a one-sample t-test
  on the differences, ``scipy.stats.ttest_1samp``);
* :func:`mcnemar_exact`: McNemar's exact test for binary outcomes (recognised
  or not): under "no difference" the discordant pairs split as Binomial(b + c,
  1/2) (``scipy.stats.binomtest``);
* :func:`tost` and :func:`tost_binary`: equivalence tests within a stated
  margin (two one-sided t-tests; for binary outcomes an exact one-sided
  binomial test that the discordance rate, which bounds the difference of
  the two success rates, is below the margin);
* :func:`holm`: Holm's step-down adjustment of p-values across the cells of a
  sweep;
* :func:`compare` and :func:`compare_many`: all of the above for one comparison,
  or for many at once (the same values, computed together);
* :func:`compare_family`: a verdict per comparison of a family (helps, hurts,
  equivalent, undetermined).

A degenerate sample (every difference equal) is decided exactly rather than
passed to scipy, whose tests and bootstrap are undefined there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.stats
from numpy.typing import ArrayLike, NDArray

from lagtheory._validation import check_integer, check_positive, check_probability

VERDICTS = ("helps", "hurts", "equivalent", "undetermined")


def _differences(a: ArrayLike, b: ArrayLike, higher_is_better: bool = True) -> NDArray[np.float64]:
    """``a - b`` per seed (negated when lower is better), checked: same length >= 2, finite."""
    if not isinstance(higher_is_better, bool):
        raise TypeError(f"higher_is_better must be True or False, got {higher_is_better!r}")
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(
            f"a and b must be 1-d and of the same length >= 2 (one value per seed), got {a.shape}, {b.shape}"
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a and b must be finite")
    return (a - b) if higher_is_better else (b - a)


def _constant_rows(d: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per row of a 2-d ``d``: whether every difference in it is equal (no spread)."""
    return np.all(d == d[:, :1], axis=1)


def bootstrap_interval(
    d: ArrayLike, confidence: float = 0.95, resamples: int = 9999, seed: int = 0
) -> tuple[float, float]:
    """A BCa bootstrap interval of the mean of the paired differences ``d`` (``scipy.stats.bootstrap``,
    ``resamples`` resamples from ``numpy.random.default_rng(seed)``).

    Parameters
    ----------
    d : array_like
        1-d, at least 2 finite per-seed differences.
    confidence : float, optional
        The confidence level, in (0, 1).
    resamples : int, optional
        The number of bootstrap resamples, an integer >= 100.
    seed : int, optional
        Seeds the resampling.

    Returns
    -------
    tuple of float
        ``(low, high)``; ``(d, d)`` when every difference is d.

    Raises
    ------
    ValueError
        If ``d`` is not 1-d with >= 2 finite values, or ``confidence`` or ``resamples`` is out of range.
    TypeError
        If ``confidence`` or ``resamples`` has the wrong type.
    """
    d = np.asarray(d, dtype=np.float64)
    if d.ndim != 1 or d.size < 2 or not np.all(np.isfinite(d)):
        raise ValueError("d must be a 1-d array of at least 2 finite differences")
    check_probability(confidence, "confidence")
    check_integer(resamples, "resamples", 100)
    low, high = _bootstrap_rows(d[np.newaxis], confidence, resamples, seed)
    return float(low[0]), float(high[0])


def _bootstrap_rows(
    d: NDArray[np.float64], confidence: float, resamples: int, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`bootstrap_interval` of every row of ``d`` (2-d), unchecked: one ``scipy.stats.bootstrap`` call
    per row with spread. (Rows together in one call along the last axis draw the same resamples, but BCa's
    acceleration, computed for many rows at once, can differ from one row's in the last bit: a vectorised
    power.)"""
    low, high = d[:, 0].copy(), d[:, 0].copy()
    for row in np.flatnonzero(~_constant_rows(d)):
        interval = scipy.stats.bootstrap(
            (d[row],),
            np.mean,
            confidence_level=confidence,
            n_resamples=resamples,
            method="BCa",
            rng=np.random.default_rng(seed),
        ).confidence_interval
        low[row], high[row] = interval.low, interval.high
    return low, high


def paired_t(d: ArrayLike) -> float:
    """Two-sided p-value of the paired t-test of mean difference 0.

    Parameters
    ----------
    d : array_like
        1-d per-seed differences, at least 2, finite (as :func:`compare` passes them; not checked here).

    Returns
    -------
    float
        The p-value; for a sample without spread exactly 1 (all d = 0) or 0 (all d equal, != 0).
    """
    return float(_paired_t_rows(np.asarray(d, dtype=np.float64)[np.newaxis])[0])


def _paired_t_rows(d: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`paired_t` of every row of ``d`` (2-d), in one ``scipy.stats.ttest_1samp`` along the last axis."""
    p = np.where(d[:, 0] == 0, 1.0, 0.0)
    spread = ~_constant_rows(d)
    if spread.any():
        p[spread] = scipy.stats.ttest_1samp(d[spread], 0.0, axis=-1).pvalue
    return p


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test of :func:`mcnemar_exact`.

    Attributes
    ----------
    a_only : int
        The pairs where only a succeeded.
    b_only : int
        The pairs where only b succeeded.
    p_value : float
        The two-sided exact p-value.
    """

    a_only: int
    b_only: int
    p_value: float


def mcnemar_exact(a: ArrayLike, b: ArrayLike) -> McNemar:
    """Exact McNemar test on paired binary outcomes: two-sided ``binomtest(a_only, a_only + b_only, 1/2)``
    (p = 1 when no pair is discordant).

    Parameters
    ----------
    a, b : array_like
        1-d binary outcomes (0/1 or False/True) of the same length >= 1, one per seed.

    Returns
    -------
    McNemar
        The discordant counts and the p-value.

    Raises
    ------
    ValueError
        If ``a`` and ``b`` are not 1-d binary outcomes of the same length.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if a.ndim != 1 or a.shape != b.shape or a.size < 1 or not (np.isin(a, (0, 1)).all() and np.isin(b, (0, 1)).all()):
        raise ValueError("a and b must be 1-d binary outcomes (0/1 or False/True) of the same length")
    a_only = int(np.sum((a == 1) & (b == 0)))
    b_only = int(np.sum((a == 0) & (b == 1)))
    if a_only + b_only == 0:
        return McNemar(0, 0, 1.0)
    return McNemar(a_only, b_only, float(scipy.stats.binomtest(a_only, a_only + b_only, 0.5).pvalue))


def tost(d: ArrayLike, margin: float) -> float:
    """p-value of the two one-sided t-tests of equivalence: H0 "mean difference <= -margin or >= margin";
    a small p says the mean difference lies within (-margin, margin).

    Parameters
    ----------
    d : array_like
        1-d per-seed differences, at least 2, finite (as :func:`compare` passes them; not checked here).
    margin : float
        The equivalence margin, finite and > 0.

    Returns
    -------
    float
        The larger of the two one-sided p-values; without spread, 0 if every difference lies
        strictly inside the margin, else 1.

    Raises
    ------
    ValueError
        If ``margin`` is not finite and > 0.
    TypeError
        If ``margin`` is not a real number.
    """
    margin = check_positive(margin, "margin")
    return float(_tost_rows(np.asarray(d, dtype=np.float64)[np.newaxis], margin)[0])


def _tost_rows(d: NDArray[np.float64], margin: float) -> NDArray[np.float64]:
    """:func:`tost` of every row of ``d`` (2-d), each one-sided test in one ``scipy.stats.ttest_1samp``."""
    p = np.where(np.abs(d[:, 0]) < margin, 0.0, 1.0)
    spread = ~_constant_rows(d)
    if spread.any():
        lower = scipy.stats.ttest_1samp(d[spread], -margin, axis=-1, alternative="greater").pvalue
        upper = scipy.stats.ttest_1samp(d[spread], margin, axis=-1, alternative="less").pvalue
        p[spread] = np.maximum(lower, upper)
    return p


def tost_binary(a: ArrayLike, b: ArrayLike, margin: float) -> float:
    """Exact equivalence test for paired binary outcomes: the difference of the success rates is at most the
    discordance rate P(a != b), so "P(a != b) < margin" implies equivalence within the margin; the p-value is
    the exact one-sided ``binomtest(discordant, n, margin, alternative="less")``.

    Parameters
    ----------
    a, b : array_like
        1-d binary outcomes of the same length n >= 1, one per seed.
    margin : float
        The equivalence margin on the success rates, in (0, 1).

    Returns
    -------
    float
        The p-value.

    Raises
    ------
    ValueError
        If ``margin`` is not in (0, 1), or ``a`` and ``b`` are not 1-d of the same length.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    margin = check_probability(margin, "margin")
    if a.ndim != 1 or a.shape != b.shape or a.size < 1:
        raise ValueError("a and b must be 1-d binary outcomes of the same length")
    discordant = int(np.sum(a != b))
    return float(scipy.stats.binomtest(discordant, a.size, margin, alternative="less").pvalue)


def holm(p_values: Sequence[float]) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values: with ``p_(1) <= ... <= p_(m)``, the i-th smallest gets
    ``max_(j <= i) min(1, (m - j + 1) p_(j))``; reject where the adjusted p-value is below alpha.

    Parameters
    ----------
    p_values : sequence of float
        A non-empty 1-d sequence of p-values in [0, 1].

    Returns
    -------
    ndarray
        float64, the adjusted p-values in the order given.

    Raises
    ------
    ValueError
        If ``p_values`` is empty, not 1-d, or holds a value outside [0, 1].
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or np.any((p < 0) | (p > 1)) or not np.all(np.isfinite(p)):
        raise ValueError(f"p_values must be a non-empty 1-d sequence of numbers in [0, 1], got {p_values!r}")
    order = np.argsort(p, kind="stable")
    m = p.size
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted


@dataclass(frozen=True)
class Comparison:
    """One paired comparison of schedule a against schedule b on one cell.

    ``mean`` the mean per-seed difference (positive favours a), ``low``/``high`` its bootstrap
    interval, ``p_difference`` the p-value of "no difference" (paired t, or exact McNemar for
    binary outcomes), ``p_equivalence`` the TOST p-value within ``margin``, both before and
    (``*_adjusted``) after Holm's adjustment across the family, the ``verdict``, and whether the
    difference is shown to lie within the margin (``equivalent``; it can be, with a significant
    difference smaller than the margin).

    Attributes
    ----------
    name : str
        The comparison (cell and schedules).
    seeds : int
        The number of paired seeds.
    mean : float
        The mean per-seed difference, positive favouring a.
    low, high : float
        The bootstrap interval of ``mean``.
    test : str
        The tests used, in words.
    p_difference, p_equivalence : float
        The unadjusted p-values of "no difference" and of equivalence within ``margin``.
    margin : float
        The equivalence margin.
    p_difference_adjusted, p_equivalence_adjusted : float, optional
        The Holm-adjusted p-values (NaN before :func:`compare_family`).
    verdict : {"helps", "hurts", "equivalent", "undetermined"}, optional
        The decision.
    equivalent : bool, optional
        Whether the adjusted equivalence p-value is below alpha.
    """

    name: str
    seeds: int
    mean: float
    low: float
    high: float
    test: str
    p_difference: float
    p_equivalence: float
    margin: float
    p_difference_adjusted: float = float("nan")
    p_equivalence_adjusted: float = float("nan")
    verdict: str = "undetermined"
    equivalent: bool = False

    def describe(self) -> str:
        """The verdict with the effect, its interval and the adjusted p-values, in one line."""
        within = (
            " (yet within the equivalence margin)" if self.equivalent and self.verdict in ("helps", "hurts") else ""
        )
        return (
            f"{self.verdict}{within}: mean difference {self.mean:+.3g}, 95% interval [{self.low:+.3g}, {self.high:+.3g}], "
            f"{format_p(self.p_difference_adjusted)} ({self.test.split(';')[0]}, Holm), "
            f"equivalence within +-{self.margin:g}: {format_p(self.p_equivalence_adjusted)}; {self.seeds} seeds"
        )


def format_p(p: float) -> str:
    """A p-value as printed in the book: two significant digits, or "p < 0.0001" below 1e-4.

    Parameters
    ----------
    p : float
        The p-value.

    Returns
    -------
    str
        ``"p = 0.034"`` or ``"p < 0.0001"``.
    """
    return "p < 0.0001" if p < 1e-4 else f"p = {p:.2g}"


def compare(
    name: str, a: ArrayLike, b: ArrayLike, higher_is_better: bool, margin: float, binary: bool = False, seed: int = 0
) -> Comparison:
    """The unadjusted comparison of a against b (see :class:`Comparison`); ``binary`` outcomes use exact tests.

    Parameters
    ----------
    name : str
        The comparison's name.
    a, b : array_like
        1-d finite per-seed outcomes of the two schedules, the same length >= 2 (0/1 when ``binary``).
    higher_is_better : bool
        The metric's direction; the differences are oriented so that positive favours a.
    margin : float
        The equivalence margin, finite and > 0 (in (0, 1) when ``binary``).
    binary : bool, optional
        Exact McNemar and binomial equivalence tests instead of paired t and TOST.
    seed : int, optional
        Seeds the bootstrap.

    Returns
    -------
    Comparison
        Unadjusted (run :func:`compare_family` for the verdict).

    Raises
    ------
    ValueError
        If ``a`` and ``b`` are not 1-d finite of the same length >= 2, or ``margin`` is out of range.
    TypeError
        If ``higher_is_better`` is not a bool.
    """
    return compare_many([name], [a], [b], higher_is_better, margin, binary=binary, seed=seed)[0]


def compare_many(
    names: Sequence[str],
    a: Sequence[ArrayLike],
    b: Sequence[ArrayLike],
    higher_is_better: bool,
    margin: float,
    binary: bool = False,
    seed: int = 0,
) -> list[Comparison]:
    """:func:`compare` of each ``(names[i], a[i], b[i])``, the same comparisons computed together: the
    comparisons with the same number of seeds share one call per t-test (``scipy.stats.ttest_1samp`` along
    the last axis), which gives each the values it gets alone; the bootstrap runs once per comparison.

    Parameters
    ----------
    names : sequence of str
        The comparisons' names.
    a, b : sequence of array_like
        Per comparison, the per-seed outcomes of the two schedules, as :func:`compare` takes them.
    higher_is_better, margin, binary, seed
        As :func:`compare`, shared by every comparison.

    Returns
    -------
    list of Comparison
        Unadjusted, in the order given.

    Raises
    ------
    ValueError
        If ``names``, ``a`` and ``b`` differ in length, or as :func:`compare`.
    TypeError
        As :func:`compare`.
    """
    if not len(names) == len(a) == len(b):
        raise ValueError(f"names, a and b must have the same length, got {len(names)}, {len(a)}, {len(b)}")
    differences = [_differences(x, y, higher_is_better) for x, y in zip(a, b, strict=True)]
    margin = check_probability(margin, "margin") if binary else check_positive(margin, "margin")
    test = "exact McNemar; exact binomial equivalence" if binary else "paired t; TOST"
    result: list[Comparison | None] = [None] * len(names)
    for size in sorted({d.size for d in differences}):
        index = [i for i, d in enumerate(differences) if d.size == size]
        d = np.stack([differences[i] for i in index])
        low, high = _bootstrap_rows(d, 0.95, 9999, seed)
        if binary:
            pairs = [(np.asarray(a[i], dtype=int), np.asarray(b[i], dtype=int)) for i in index]
            p_difference = [mcnemar_exact(x, y).p_value for x, y in pairs]
            p_equivalence = [tost_binary(x, y, margin) for x, y in pairs]
        else:
            p_difference, p_equivalence = _paired_t_rows(d), _tost_rows(d, margin)
        for k, i in enumerate(index):
            result[i] = Comparison(
                names[i],
                size,
                float(differences[i].mean()),
                float(low[k]),
                float(high[k]),
                test,
                float(p_difference[k]),
                float(p_equivalence[k]),
                margin,
            )
    return result  # type: ignore[return-value]


def compare_family(comparisons: Sequence[Comparison], alpha: float = 0.05) -> list[Comparison]:
    """Holm-adjust the difference and the equivalence p-values across the family and give each comparison
    its verdict: "helps" (adjusted difference p < alpha, mean > 0), "hurts" (same, mean < 0),
    "equivalent" (otherwise, adjusted equivalence p < alpha), else "undetermined".

    Parameters
    ----------
    comparisons : sequence of Comparison
        A non-empty family of :func:`compare` results.
    alpha : float, optional
        The level, in (0, 1).

    Returns
    -------
    list of Comparison
        The comparisons with adjusted p-values and verdicts, in the order given.

    Raises
    ------
    ValueError
        If ``comparisons`` is empty or ``alpha`` is not in (0, 1).
    """
    check_probability(alpha, "alpha")
    if not comparisons:
        raise ValueError("comparisons must not be empty")
    difference = holm([c.p_difference for c in comparisons])
    equivalence = holm([c.p_equivalence for c in comparisons])
    result = []
    for c, p_diff, p_equiv in zip(comparisons, difference, equivalence, strict=True):
        if p_diff < alpha and c.mean != 0:
            verdict = "helps" if c.mean > 0 else "hurts"
        elif p_equiv < alpha:
            verdict = "equivalent"
        else:
            verdict = "undetermined"
        result.append(
            Comparison(
                **{
                    **c.__dict__,
                    "p_difference_adjusted": float(p_diff),
                    "p_equivalence_adjusted": float(p_equiv),
                    "verdict": verdict,
                    "equivalent": bool(p_equiv < alpha),
                }
            )
        )
    return result
