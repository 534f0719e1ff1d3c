"""Exact recognition of CONTAINS_B = Sigma* b Sigma* by the model with a linear
readout, for every string up to a length N (N up to 1e18), without sampling.

The model sees a string only through its length n and its count k of b's
(:eq:`eq-pooled-weight`), and f = c + w p(n, k; t) :eq:`eq-readout`. So:

* every negative a^n has f = u_a: all are right iff u_a < 0;
* for w > 0, f increases with k (:prf:ref:`lem-pooling`), so the worst positive of
  length n is a^(n-1) b (k = 1); for w <= 0, the worst is b^n (k = n), where f = u_b;
* along k = 1, p(n, 1; t) = 1 / (1 + (n - 1) s(n)^(-t))  with s(n) = n (log
  scaling) or e (no scaling). The odds factor g(n) = (n - 1) n^(-t) increases on
  [1, n*] and decreases after, n* = t / (t - 1) for t > 1 (n* = infinity for
  t <= 1); under no scaling g increases everywhere. So f(n, 1) is unimodal
  (decreasing, then increasing) in n, and the set of misclassified one-b
  lengths is an interval, found by bisection.

``f = 0`` counts as an error (:prf:ref:`def-recognition`). The sign of f
is computed in float64: at an exact mathematical tie (f = 0, e.g. t = 0 and
u_b / (-u_a) a whole number) rounding decides, so parameters within about
1e-15 (relative) of a tie are not reliably classified.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from ._validation import as_float_array, check_integer, check_parameter_vector, check_scaling
from .pooling import _log_odds_parts


@dataclass(frozen=True)
class Recognition:
    """Verdict of :func:`recognition` on all strings of length 1 to ``max_length``.

    Attributes
    ----------
    recognises : bool
        Whether every string checked is classified correctly (also ``bool(verdict)``).
    max_length : int
        The longest length checked.
    horizon : int
        The largest H such that every string of length <= H is classified correctly
        (H = max_length when all are).
    first_error : tuple of int or None
        The shortest misclassified string as (n, k) with k the number of b's (None when there
        is none).
    margin : float
        The smallest y f(x) over all strings checked.
    """

    recognises: bool
    max_length: int
    horizon: int
    first_error: tuple[int, int] | None
    margin: float

    def __bool__(self) -> bool:
        return self.recognises

    def describe(self) -> str:
        """A one-line, deterministic summary for the book."""
        if self.first_error is None:
            return f"recognises every string of length <= {self.max_length:.3g} (margin {self.margin:.4g})"
        n, k = self.first_error
        return f"first error at length {n}: {_word(n, k)}; horizon {self.horizon}"


def _word(n: int, k: int) -> str:
    """The misclassified string of length n with k b's, as the book writes it."""
    if k == 0:
        return "a" if n == 1 else f"a^{n}"
    if k == 1:
        return {1: "b", 2: "a b"}.get(n, f"a^{n - 1} b")
    return f"a string of length {n} with {k} b's"


def _one_b_log_odds(n: int, t: float, scaling: str) -> float:
    """The log-odds z of p(n, 1; t) :eq:`eq-pooled-weight`, without argument checks."""
    base, scale = _log_odds_parts(float(n), 1.0, scaling)
    return float(base + t * scale)


def _one_b_pooled(n: int, t: float, scaling: str) -> tuple[float, float]:
    """(1 - p, p) with p = p(n, 1; t) from the log-odds :eq:`eq-pooled-weight`, without argument checks."""
    z = _one_b_log_odds(n, t, scaling)
    return float(expit(-z)), float(expit(z))


def _one_b_readout(n: int, t: float, u_a: float, u_b: float, scaling: str) -> float:
    """f(a^(n-1) b) = u_a (1 - p) + u_b p with p = p(n, 1; t) (the form that is exact at p = 0, 1)."""
    q, p = _one_b_pooled(n, t, scaling)
    return u_a * q + u_b * p


def worst_one_b_length(t: float, max_length: int | None = None, scaling: str = "log") -> int:
    """The length n* at which the weight p(n, 1; t) on the single b of a^(n-1) b is smallest
    (:prf:ref:`thm-three-phase`, phase 3; the worst positive of :prf:ref:`thm-threshold` (b)).

    Along k = 1 the odds g(n) = (n - 1) n^(-t) of a against b have
    g'(n) = n^(-t-1) (t - (t - 1) n): for t > 1 (length scaling) they increase up
    to n = t / (t - 1) and decrease after, so over the whole numbers n* is
    floor(t / (t - 1)) or ceil(t / (t - 1)), whichever has the smaller p (the
    floor alone is wrong, e.g. at t = 1.22 the peak is 5.55 and n* = 6). For
    t <= 1, or without scaling, p(n, 1; t) decreases for ever and has no
    minimum: the smallest value over [1, max_length] is at max_length.

    Parameters
    ----------
    t : float
        The attention difference, finite.
    max_length : int, optional
        A whole number >= 1 bounding the lengths considered, or None for all lengths (then t
        must be > 1 and ``scaling`` "log").
    scaling : {"log", "none"}, optional
        Length-scaled attention or unscaled softmax.

    Returns
    -------
    int
        The length n*.

    Examples
    --------
    At t = 1.22 the odds peak at t / (t - 1) = 5.55, and n* is the ceiling:

    >>> worst_one_b_length(1.22)
    6
    """
    t = float(as_float_array(t, "t"))
    check_scaling(scaling)
    if max_length is not None:
        max_length = check_integer(max_length, "max_length", minimum=1)
    elif scaling == "none" or t <= 1:
        raise ValueError(
            f"t must be > 1 with scaling='log' for p(n, 1; t) to have a smallest value over all lengths "
            f"(got t={t!r}, scaling={scaling!r}); pass max_length to bound the lengths"
        )
    return _worst_one_b_length(t, max_length, scaling)


def _worst_one_b_length(t: float, max_length: int | None, scaling: str) -> int:
    """:func:`worst_one_b_length` without argument checks (for the trusted recognition path)."""
    if scaling == "none" or t <= 1:
        return max_length
    peak = t / (t - 1)
    candidates = {max(1, math.floor(peak)), math.ceil(peak)}
    if max_length is not None:
        candidates = {min(max_length, n) for n in candidates}
    # compared through the log-odds, which stay distinct where p rounds to 1.0 (large t)
    return min(sorted(candidates), key=lambda n: _one_b_log_odds(n, t, scaling))


def horizon_at_t0(u: ArrayLike) -> int:
    """The recognition horizon N(0, u) at t = 0, :eq:`eq-horizon`, in exact rational arithmetic.

    At t = 0 the string a^(n-1) b has f = u_a + w / n, right iff n - 1 < R = u_b / (-u_a);
    so N(0, u) = 0 if u_a >= 0 (every negative is wrong) and max(0, ceil(R)) otherwise,
    the number of lengths n >= 1 with n - 1 < R. The floats u_a, u_b are converted to
    fractions exactly, so an exact tie (R a whole number m, f(a^m b) = 0) gives N = m.
    Unlike :func:`recognition`, the result is not capped by a maximal length.

    Parameters
    ----------
    u : array_like
        The output layer (u_a, u_b).

    Returns
    -------
    int
        N(0, u).

    Examples
    --------
    >>> horizon_at_t0([-1.0, 3.0]), horizon_at_t0([-1.0, 2.5]), horizon_at_t0([0.5, 3.0])
    (3, 3, 0)
    """
    u = check_parameter_vector(u, "u")
    if u[0] >= 0:
        return 0
    return max(0, math.ceil(Fraction(float(u[1])) / Fraction(float(-u[0]))))


def _first_bad(lo: int, hi: int, is_bad) -> int:
    """Smallest n in [lo, hi] with is_bad(n), given that is_bad is monotone (False..True) and is_bad(hi)."""
    while lo < hi:
        middle = (lo + hi) // 2
        if is_bad(middle):
            hi = middle
        else:
            lo = middle + 1
    return lo


def recognition(theta: ArrayLike, u: ArrayLike, max_length: int | float = 10**12, scaling: str = "log") -> Recognition:
    """Decide exactly whether the model (theta, u) classifies every string of
    length 1 to ``max_length`` correctly for CONTAINS_B (:prf:ref:`def-recognition`).

    Parameters
    ----------
    theta, u : array_like
        Length-2 vectors ordered (a, b).
    max_length : int or float, optional
        A whole number >= 1 (up to 1e18).
    scaling : {"log", "none"}, optional
        Length-scaled attention or unscaled softmax.

    Returns
    -------
    Recognition
        The verdict, the horizon, the first error and the margin.

    Examples
    --------
    At t = 0 the string a^(n-1) b has the output u_a + (u_b - u_a) / n, which is positive
    iff n - 1 < u_b / (-u_a) (:eq:`eq-horizon`): with u = (-1, 3) the first error is a^3 b.

    >>> verdict = recognition([0.0, 0.0], [-1.0, 3.0])
    >>> verdict.recognises, verdict.horizon, verdict.first_error
    (False, 3, (4, 1))
    """
    theta = check_parameter_vector(theta, "theta")
    u = check_parameter_vector(u, "u")
    check_scaling(scaling)
    return _recognition_trusted(theta, u, check_max_length(max_length), scaling)


def check_max_length(max_length: int | float) -> int:
    """The largest length a recognition verdict covers: a whole number in [1, 1e18], returned as int.

    Parameters
    ----------
    max_length : int or float
        The value to check.

    Returns
    -------
    int
        ``max_length``.
    """
    if isinstance(max_length, bool) or not isinstance(max_length, (int, float, np.integer, np.floating)):
        raise TypeError(f"max_length must be a whole number >= 1, got {type(max_length).__name__}")
    if not math.isfinite(max_length) or max_length < 1 or max_length != math.floor(max_length) or max_length > 1e18:
        raise ValueError(f"max_length must be a whole number in [1, 1e18], got {max_length!r}")
    return int(max_length)


def _recognition_trusted(theta: NDArray[np.float64], u: NDArray[np.float64], N: int, scaling: str) -> Recognition:
    """:func:`recognition` without argument checks (the trusted inner path of the training loops):
    ``theta``, ``u`` finite float64 vectors of length 2, ``N`` a whole number in [1, 1e18]."""
    t, c = float(theta[1] - theta[0]), float(u[0])

    negative_margin = -c  # y f = -u_a for every a^n
    errors: list[tuple[int, int]] = []
    if negative_margin <= 0:
        errors.append((1, 0))

    if u[1] <= u[0]:  # w <= 0, compared exactly
        # the worst positive of each length is b^n, f = u_b; "b" (n = 1) is the shortest
        positive_margin = float(u[1])
        if positive_margin <= 0:
            errors.append((1, 1))
    else:
        n_worst = _worst_one_b_length(t, N, scaling)
        positive_margin = _one_b_readout(n_worst, t, c, float(u[1]), scaling)
        if positive_margin <= 0:
            # f(n, 1) is non-increasing on [1, n_worst]: bisection for the first bad length
            n_bad = _first_bad(1, n_worst, lambda n: _one_b_readout(n, t, c, float(u[1]), scaling) <= 0)
            errors.append((n_bad, 1))

    first_error = min(errors, key=lambda e: (e[0], e[1])) if errors else None
    horizon = N if first_error is None else first_error[0] - 1
    return Recognition(
        recognises=first_error is None,
        max_length=N,
        horizon=horizon,
        first_error=first_error,
        margin=min(negative_margin, positive_margin) + 0.0,  # + 0.0: no signed zero
    )
