"""Certified forms of the book's closed forms: ball arithmetic (python-flint's ``arb``).

Every function here evaluates one closed form of the book in ball arithmetic at
``PREC`` bits (``acb``, complex balls, for the strip of :prf:ref:`lem-strip`): the result
is a ball (midpoint and radius) that provably contains
the exact value of the formula at the given arguments, with every rounding error
and every truncated tail of an infinite sum bounded rigorously inside the radius.
An inequality that holds for the whole ball (``a < b`` between arbs is True only
when it holds for every pair of points of the two balls) is thereby proved for
that instance. This is an independent second path beside the package's float64
forms: nothing here calls them.

What a certificate proves is the inequality at the instance evaluated (or on a
box of parameters, where a function covers one by subdivision), not the theorem
for all parameters; see the contributing page ("Certified checks").

Arguments are exact: ints, :class:`fractions.Fraction`, floats (taken as the
exact binary number they are) or arbs (balls, e.g. an enclosure of ``t1``).
Infinite sums over lengths are summed up to ``terms`` and their tails added as
an interval ``[0, bound]`` with the bound named in each docstring.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

import flint
from flint import acb, arb

from ._validation import check_integer

PREC = 256
"""Working precision in bits (about 77 decimal digits). Importing this module sets flint's
global precision to it, so that arithmetic on the returned balls in a notebook cell (``c1 + w1``)
keeps it; every function here also runs at ``PREC`` whatever the global setting."""
flint.ctx.prec = PREC

Number = int | float | Fraction | arb


def ball(x: Number) -> arb:
    """``x`` as a ball: exact for ints and floats, the ball of p/q at ``PREC`` bits for a Fraction p/q.

    Parameters
    ----------
    x : int, float, Fraction or arb
        The number; a float is taken as the exact binary number it is and must be finite; an arb is
        returned as it is.

    Returns
    -------
    arb
        A ball containing ``x`` (of radius 0 unless ``x`` is a Fraction that is not a dyadic rational
        or an arb that is not exact).

    Raises
    ------
    TypeError
        If ``x`` is not an int, float, Fraction or arb (a bool is refused).
    ValueError
        If ``x`` is an infinite float or NaN.
    """
    if isinstance(x, arb):
        return x
    if isinstance(x, Fraction):
        with flint.ctx.workprec(PREC):
            return arb(x.numerator) / arb(x.denominator)
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise TypeError(f"x must be an int, float, Fraction or arb, got {type(x).__name__}")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"x must be finite, got {x!r}")
    return arb(x)


def interval(low: arb, high: arb) -> arb:
    """The smallest ball containing ``[low, high]`` (both balls included).

    Parameters
    ----------
    low, high : int, float, Fraction or arb
        The ends, taken by :func:`ball` (either may be the larger; the result contains both balls).

    Returns
    -------
    arb
        A ball containing every point of ``low`` and of ``high`` and all between.
    """
    return ball(low).union(ball(high))


def with_tail(partial: arb, tail_bound: arb) -> arb:
    """``partial + [0, tail_bound]``, an enclosure of a sum of non-negative terms whose truncated part is at most ``tail_bound``.

    Parameters
    ----------
    partial : arb
        A ball containing the sum of the terms kept.
    tail_bound : int, float, Fraction or arb
        A bound (>= 0) on the sum of the terms left out; the upper end of its ball is used.

    Returns
    -------
    arb
        A ball containing ``partial + [0, tail_bound]``.
    """
    return partial + interval(arb(0), ball(tail_bound).upper())


def floor_certified(x: arb, name: str = "x") -> int:
    """``floor(x)``, proved for the whole ball.

    Parameters
    ----------
    x : arb
        The ball.
    name : str, optional
        What ``x`` is, for the error message ("x" by default).

    Returns
    -------
    int
        The floor of every point of ``x``.

    Raises
    ------
    ValueError
        If the ball straddles an integer (its floor is not decided at ``PREC`` bits).
    """
    low, high = x.lower().floor(), x.upper().floor()
    if not (low.is_exact() and high.is_exact() and low == high):
        raise ValueError(f"{name} = {x} straddles an integer: its floor is not decided at {PREC} bits")
    return int(low.unique_fmpz())


def width_bound(x: arb) -> float:
    """The smallest power of ten above the ball's width (2 x radius), a round bound to print.

    Parameters
    ----------
    x : arb
        The ball.

    Returns
    -------
    float
        0.0 for an exact ball; else a power of ten at least the width (which is taken as
        ``1 + 1e-15`` times its float value, so rounding cannot put the bound below it).
    """
    width = 2 * float(x.rad().upper().mid()) * (1 + 1e-15)
    if width == 0:
        return 0.0
    return 10.0 ** math.ceil(math.log10(width) + 1e-12)


def describe(x: arb, digits: int = 8) -> str:
    """``x`` printed for a stored output: its midpoint with the digits its radius supports, then its width.

    The midpoint shows at most ``digits`` significant digits and no more than the width supports
    (at least one); the width is shown as ``width < 1e-k`` (:func:`width_bound`), or ``width 0`` for
    an exact ball.

    Parameters
    ----------
    x : arb
        The ball.
    digits : int, optional
        The most significant digits shown, in 1..8 (8 by default).

    Returns
    -------
    str
        For example ``0.69314718 (width < 1e-77)`` for log 2.

    Raises
    ------
    ValueError
        If ``digits`` is not in 1..8.
    """
    if not 1 <= digits <= 8:
        raise ValueError(f"digits must be in 1..8, got {digits!r}")
    mid = float(x.mid())
    width = width_bound(x)
    if mid == 0:
        shown = "0"
    else:
        leading = math.floor(math.log10(abs(mid)))
        supported = leading - math.ceil(math.log10(10 * width)) + 1 if width else digits
        shown = f"{mid:.{min(digits, max(1, supported))}g}"
    return f"{shown} (width {'0' if not width else f'< {width:.0e}'})"


def _precise(function: Callable) -> Callable:
    """Run ``function`` at ``PREC`` bits (restoring the caller's precision after)."""

    def wrapper(*args, **kwargs):
        with flint.ctx.workprec(PREC):
            return function(*args, **kwargs)

    wrapper.__name__, wrapper.__doc__, wrapper.__wrapped__ = function.__name__, function.__doc__, function
    return wrapper


def sigmoid(z: arb) -> arb:
    """The logistic function ``sigma(z) = 1 / (1 + e^(-z))`` in balls.

    Parameters
    ----------
    z : int, float, Fraction or arb
        The argument.

    Returns
    -------
    arb
        A ball containing sigma(z).
    """
    return 1 / (1 + (-ball(z)).exp())


def softplus(z: arb) -> arb:
    """``log(1 + e^z)``, the loss ``l(-z)`` of a margin -z (:prf:ref:`def-data`'s ``l(z) = log(1 + e^(-z))``), in balls.

    Parameters
    ----------
    z : int, float, Fraction or arb
        The argument.

    Returns
    -------
    arb
        A ball containing ``log(1 + e^z)``.
    """
    z = ball(z)
    return z.exp().log1p()


# ---------------------------------------------------------------------------- lengths


def geometric_pmf(n: int, q: Number) -> arb:
    """The geometric length law ``pi(n) = q (1 - q)^(n - 1)``, :eq:`eq-geometric`, in balls.

    Parameters
    ----------
    n : int
        The length, >= 1.
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1].

    Returns
    -------
    arb
        A ball containing pi(n).
    """
    q = ball(q)
    return q * (1 - q) ** (n - 1)


def geometric_tail(N: int, q: Number) -> arb:
    """The tail ``P(n > N) = (1 - q)^N`` of geometric lengths (:eq:`eq-tail-bound`), in balls.

    Parameters
    ----------
    N : int
        The truncation length, >= 0.
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1].

    Returns
    -------
    arb
        A ball containing ``(1 - q)^N``.
    """
    return (1 - ball(q)) ** N


def power_law_pmf(n: int, s: Number) -> arb:
    """The power-law length law ``pi(n) = n^(-s) / zeta(s)``, :eq:`eq-power-law`, in balls.

    Parameters
    ----------
    n : int
        The length, >= 1.
    s : int, float, Fraction or arb
        The exponent of :eq:`eq-power-law`, > 1.

    Returns
    -------
    arb
        A ball containing pi(n).
    """
    s = ball(s)
    return arb(n) ** (-s) / s.zeta()


def power_law_tail(N: int, s: Number, extra: int = 0) -> arb:
    """``sum_{n > N} n^(-s - extra) / zeta(s) = zeta(s + extra, N + 1) / zeta(s)`` (Hurwitz zeta, no truncation), in balls.

    With ``extra = 0`` this is ``P(n > N)`` for the power-law lengths of :eq:`eq-power-law`.

    Parameters
    ----------
    N : int
        The truncation length, >= 0.
    s : int, float, Fraction or arb
        The exponent of :eq:`eq-power-law`, > 1.
    extra : int, optional
        Added to the exponent of n in the sum (0 by default); ``s + extra`` > 1.

    Returns
    -------
    arb
        A ball containing the sum.
    """
    s = ball(s)
    return (s + extra).zeta(arb(N + 1)) / s.zeta()


def geometric_log_tail(N: int, q: Number) -> arb:
    """An upper bound of ``sum_{n > N} pi(n) log n`` for geometric lengths :eq:`eq-geometric`.

    ``log n <= log N + (n - N)/N`` for n > N (concavity), and ``sum_{n > N} pi(n) (n - N) = (1 - q)^N / q``,
    so the sum is at most ``(1 - q)^N (log N + 1/(q N))``.

    Parameters
    ----------
    N : int
        The truncation length, a whole number >= 1.
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean).

    Returns
    -------
    arb
        A ball whose every point is >= the tail.
    """
    if not (isinstance(N, int) and N >= 1):
        raise ValueError(f"N must be a whole number >= 1, got {N!r}")
    q = ball(q)
    return geometric_tail(N, q) * (arb(N).log() + 1 / (q * N))


def power_law_log_tail(N: int, s: Number) -> arb:
    """An upper bound of ``sum_{n > N} pi(n) log n`` for power-law lengths :eq:`eq-power-law`.

    ``log n <= log N + n/N`` gives ``(log(N) zeta(s, N + 1) + zeta(s - 1, N + 1)/N) / zeta(s)`` (Hurwitz zeta).

    Parameters
    ----------
    N : int
        The truncation length, a whole number >= 1.
    s : int, float, Fraction or arb
        The exponent of :eq:`eq-power-law`, > 2 (the bound uses zeta(s - 1)).

    Returns
    -------
    arb
        A ball whose every point is >= the tail.
    """
    s = ball(s)
    if not (isinstance(N, int) and N >= 1 and s > 2):
        raise ValueError(f"power_law_log_tail needs a whole N >= 1 and s > 2, got N = {N!r}, s = {s}")
    return (arb(N).log() * s.zeta(arb(N + 1)) + (s - 1).zeta(arb(N + 1)) / N) / s.zeta()


# ---------------------------------------------------------------------------- pooled weight


def odds(n: Number, t: Number) -> arb:
    """The odds ``g_t(n) = (n - 1) n^(-t)`` of a against b on ``a^(n-1) b`` (:prf:ref:`thm-threshold`), in balls.

    Parameters
    ----------
    n : int, float, Fraction or arb
        The length, >= 1.
    t : int, float, Fraction or arb
        The attention difference theta_b - theta_a.

    Returns
    -------
    arb
        A ball containing g_t(n).
    """
    n = ball(n)
    return (n - 1) * n ** (-ball(t))


def pooled_weight(n: Number, k: int, t: Number) -> arb:
    """The pooled weight on the b's, :eq:`eq-pooled-weight` (:prf:ref:`lem-pooling`), in balls.

    ``p(n, k; t) = k n^t / (k n^t + n - k)``, evaluated as ``1 / (1 + (n - k) n^(-t) / k)`` (for
    k = 1 the same arithmetic as :func:`one_b_weight`; for k = n exactly 1).

    Parameters
    ----------
    n : int, float, Fraction or arb
        The length, >= k.
    k : int
        The number of b's, a whole number >= 1.
    t : int, float, Fraction or arb
        The attention difference theta_b - theta_a.

    Returns
    -------
    arb
        A ball containing p(n, k; t).
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    n = ball(n)
    return 1 / (1 + (n - k) * n ** (-ball(t)) / k)


def one_b_weight(n: Number, t: Number) -> arb:
    """The pooled weight ``p(n, 1; t) = 1 / (1 + g_t(n))`` on the single b, :eq:`eq-pooled-weight`, in balls.

    Parameters
    ----------
    n : int, float, Fraction or arb
        The length, >= 1.
    t : int, float, Fraction or arb
        The attention difference theta_b - theta_a.

    Returns
    -------
    arb
        A ball containing p(n, 1; t) (:func:`pooled_weight` with k = 1).
    """
    return pooled_weight(n, 1, t)


def unscaled_weight(n: Number, k: int, t: Number) -> arb:
    """The weight on the b's with unscaled softmax, :eq:`eq-unscaled` (:prf:ref:`prop-unscaled`), in balls.

    ``p(n, k; t) = k e^t / (k e^t + n - k)``.

    Parameters
    ----------
    n : int, float, Fraction or arb
        The length, >= k.
    k : int
        The number of b's, a whole number >= 1.
    t : int, float, Fraction or arb
        The attention difference theta_b - theta_a.

    Returns
    -------
    arb
        A ball containing the weight.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    weighted = k * ball(t).exp()
    return weighted / (weighted + ball(n) - k)


@_precise
def worst_one_b_length(t: Number) -> int:
    """The length n* where ``p(n, 1; t)`` is smallest, for t > 1 (:prf:ref:`thm-three-phase`, phase 3).

    g_t (:func:`odds`) increases up to ``t / (t - 1)`` and decreases after, so n* is the floor or the
    ceiling of ``t / (t - 1)`` (that number itself when it is an exact integer); the ball comparison of
    g_t at the two decides which.

    Parameters
    ----------
    t : int, float, Fraction or arb
        The attention difference theta_b - theta_a; its whole ball must be > 1.

    Returns
    -------
    int
        n*.

    Raises
    ------
    ValueError
        If t > 1 is not decided for the ball, the floor of ``t / (t - 1)`` is not decided, or the
        comparison of g_t at the floor and the ceiling is not (a tie, or too wide a ball).
    """
    t = ball(t)
    if not t > 1:
        raise ValueError(f"t must be > 1 (certified), got {t}")
    peak = t / (t - 1)
    if peak.is_exact() and peak.is_integer():
        return int(peak.unique_fmpz())
    low = floor_certified(peak, "t/(t-1)")
    high = low + 1
    if low < 1:
        raise ValueError(f"t/(t-1) = {peak} below 1")
    g_low, g_high = odds(low, t), odds(high, t)
    if g_low > g_high:
        return low
    if g_high > g_low:
        return high
    raise ValueError(f"n* is not decided at t = {t}: g({low}) = {g_low}, g({high}) = {g_high}")


# ---------------------------------------------------------------------------- gradients


@dataclass(frozen=True)
class PopulationGradient:
    """The population loss :eq:`eq-population-loss` and its gradient :eq:`eq-grad-u`, :eq:`eq-grad-t`
    (:prf:ref:`lem-gradients`) at one point, as balls.

    Attributes
    ----------
    loss : arb
        L(theta, u).
    grad_u_a, grad_u_b : arb
        dL/du_a and dL/du_b, :eq:`eq-grad-u`.
    grad_t : arb
        dL/dt, :eq:`eq-grad-t`.
    """

    loss: arb
    grad_u_a: arb
    grad_u_b: arb
    grad_t: arb

    @property
    def grad_theta(self) -> tuple[arb, arb]:
        """(dL/dtheta_a, dL/dtheta_b) = (-dL/dt, dL/dt), :eq:`eq-grad-t`."""
        return -self.grad_t, self.grad_t


@_precise
def population_gradient(
    t: Number,
    u: tuple[Number, Number],
    pmf: Callable[[int], arb],
    tail_mass: Callable[[int], arb],
    tail_log: Callable[[int], arb],
    terms: int,
    kappa: Callable[[int, int], arb] | None = None,
    prior: Number = Fraction(1, 2),
) -> PopulationGradient:
    """L(theta, u) :eq:`eq-population-loss` and its gradient by the closed forms of :prf:ref:`lem-gradients`.

    With a prior rho of positives (the factors 1/2 become 1 - rho and rho) and f = u_a + w p(n, k; t)::

        L       = (1 - rho) log(1 + e^(u_a)) + rho E_+[log(1 + e^(-f))]
        dL/du_a = (1 - rho) sigma(u_a) - rho E_+[sigma(-f) (1 - p)]          (eq-grad-u)
        dL/du_b = -rho E_+[sigma(-f) p]                                      (eq-grad-u)
        dL/dt   = -rho w E_+[sigma(-f) log(n) p (1 - p)]                     (eq-grad-t)

    The lengths n <= ``terms`` are summed in balls; the rest is added as ``[0, bound]``: per string
    ``l(f) <= l(min(u_a, u_b))``, ``sigma(-f)(1 - p)`` and ``sigma(-f) p`` are in [0, 1] and
    ``sigma(-f) log(n) p (1 - p)`` is in [0, log(n)/4], so the bounds are ``tail_mass(terms)`` times
    those constants and ``tail_log(terms) / 4``.

    Parameters
    ----------
    t : int, float, Fraction or arb
        theta_b - theta_a (a ball for a box of t, e.g. the exact difference of two floats).
    u : tuple
        The output layer (u_a, u_b).
    pmf : callable
        ``pmf(n)`` = pi(n) as a ball.
    tail_mass : callable
        ``tail_mass(N)`` >= sum_{n > N} pi(n).
    tail_log : callable
        ``tail_log(N)`` >= sum_{n > N} pi(n) log n (:func:`geometric_log_tail`, :func:`power_law_log_tail`).
    terms : int
        The lengths summed in balls, a whole number >= 1.
    kappa : callable or None, optional
        ``kappa(n, k)`` = ``kappa(k | n)``, summed over k = 1..n; None (default) for one b per positive.
    prior : int, float, Fraction or arb, optional
        rho = P(y = +1), in (0, 1); 1/2 by default.

    Returns
    -------
    PopulationGradient
        Balls containing the loss and the gradient.
    """
    if not (isinstance(terms, int) and terms >= 1):
        raise ValueError(f"terms must be a whole number >= 1, got {terms!r}")
    u_a, u_b, t, rho = ball(u[0]), ball(u[1]), ball(t), ball(prior)
    if not (0 < rho < 1):
        raise ValueError(f"prior must be in (0, 1), got {rho}")
    w = u_b - u_a
    sums = [arb(0)] * 4  # E_+[l(f)], E_+[sigma(-f)(1 - p)], E_+[sigma(-f) p], E_+[sigma(-f) log(n) p (1 - p)]
    for n in range(1, terms + 1):
        log_n = arb(n).log()
        inner = [arb(0)] * 4
        for k in [1] if kappa is None else range(1, n + 1):
            p = pooled_weight(n, k, t)
            f = u_a + w * p
            miss = sigmoid(-f)
            weight = arb(1) if kappa is None else kappa(n, k)
            parts = (softplus(-f), miss * (1 - p), miss * p, miss * log_n * p * (1 - p))
            inner = [a + weight * b for a, b in zip(inner, parts, strict=True)]
        mass = pmf(n)
        sums = [a + mass * b for a, b in zip(sums, inner, strict=True)]
    mass_tail, log_tail = tail_mass(terms), tail_log(terms)
    tails = (softplus(-(u_a.min(u_b))) * mass_tail, mass_tail, mass_tail, log_tail / 4)
    loss_part, miss_a, miss_b, miss_t = (with_tail(s, b) for s, b in zip(sums, tails, strict=True))
    return PopulationGradient(
        loss=(1 - rho) * softplus(u_a) + rho * loss_part,
        grad_u_a=(1 - rho) * sigmoid(u_a) - rho * miss_a,
        grad_u_b=-rho * miss_b,
        grad_t=-rho * w * miss_t,
    )


def pull_on_u_b(n: Number, k: int, t: Number, u: tuple[Number, Number]) -> arb:
    """The pull of one positive on u_b per unit probability (:prf:ref:`cor-output-gradients`), in balls.

    ``|g(n, k)| = sigma(-f) p(n, k; t)`` with ``f = u_a + (u_b - u_a) p``: the per-string part of
    dL/du_b in :eq:`eq-grad-u`.

    Parameters
    ----------
    n : int, float, Fraction or arb
        The length, >= k.
    k : int
        The number of b's, a whole number >= 1.
    t : int, float, Fraction or arb
        theta_b - theta_a.
    u : tuple
        The output layer (u_a, u_b).

    Returns
    -------
    arb
        A ball containing ``|g(n, k)|``.
    """
    u_a, u_b = ball(u[0]), ball(u[1])
    p = pooled_weight(n, k, t)
    return sigmoid(-(u_a + (u_b - u_a) * p)) * p


# ---------------------------------------------------------------------------- unscaled softmax


def unscaled_best_margin(N: int, t: Number) -> arb:
    """The best margin with unscaled softmax, ``gamma*(N, t) = e^t / (e^t + 2N - 2)`` (:prf:ref:`prop-unscaled`).

    The largest margin on the strings of length <= N over output layers with ``|u_a|, |u_b| <= 1``.

    Parameters
    ----------
    N : int
        The maximal length, a whole number >= 1.
    t : int, float, Fraction or arb
        theta_b - theta_a.

    Returns
    -------
    arb
        A ball containing gamma*(N, t).
    """
    if not (isinstance(N, int) and N >= 1):
        raise ValueError(f"N must be a whole number >= 1, got {N!r}")
    scale = ball(t).exp()
    return scale / (scale + 2 * N - 2)


@_precise
def unscaled_horizon(t: Number, u: tuple[Number, Number]) -> int:
    """The horizon of the linear readout with unscaled softmax (:prf:ref:`prop-unscaled`).

    ``a^(n-1) b`` is right iff ``n - 1 < e^t u_b / (-u_a)``, so the largest length up to which every
    string is right is ``ceil(e^t u_b / (-u_a))``; the ceiling is decided in balls.

    Parameters
    ----------
    t : int, float, Fraction or arb
        theta_b - theta_a.
    u : tuple
        The output layer (u_a, u_b), u_a < 0 < u_b.

    Returns
    -------
    int
        ceil(e^t u_b / (-u_a)).

    Raises
    ------
    ValueError
        If u_a < 0 < u_b is not decided, or the ball of e^t u_b / (-u_a) straddles an integer.
    """
    u_a, u_b = ball(u[0]), ball(u[1])
    if not (u_a < 0 < u_b):
        raise ValueError(f"unscaled_horizon needs u_a < 0 < u_b, got {u_a}, {u_b}")
    return -floor_certified(-(ball(t).exp() * u_b / (-u_a)), "e^t u_b / (-u_a)")


# ---------------------------------------------------------------------------- threshold


@dataclass(frozen=True)
class HorizonCertificate:
    """The checks that N is the horizon of :prf:ref:`thm-threshold` (a), from :func:`horizon_certificate`.

    ``g_t(N) < R <= g_t(N + 1)`` and the theorem's bounds ``floor(R^(1/(1-t))) <= N < max(2, (2R)^(1/(1-t)))``,
    each proved (True) or not decided (False); the balls are kept to print.

    Attributes
    ----------
    below : bool
        ``g_t(N) < R`` proved for the whole balls (True for N = 0).
    beyond : bool
        ``R <= g_t(N + 1)`` proved.
    lower_power : bool
        ``floor(R^(1/(1-t))) <= N`` proved (as ``R^(1/(1-t)) < N + 1``).
    upper_power : bool
        ``N < max(2, (2R)^(1/(1-t)))`` proved.
    R : arb
        ``u_b / (-u_a)``.
    lower : arb
        ``R^(1/(1-t))``.
    upper : arb
        ``(2R)^(1/(1-t))``.
    """

    below: bool
    beyond: bool
    lower_power: bool
    upper_power: bool
    R: arb
    lower: arb
    upper: arb

    @property
    def holds(self) -> bool:
        """Whether all four checks are proved, that is N is the horizon and the theorem's bounds hold at this instance."""
        return self.below and self.beyond and self.lower_power and self.upper_power


@_precise
def horizon_certificate(t: Number, u_a: Number, u_b: Number, N: int) -> HorizonCertificate:
    """Certify that N is the horizon N(t, u) of :prf:ref:`thm-threshold` (a), and the theorem's bounds on it.

    For t < 1 and u_a < 0 < u_b, ``a^(n-1) b`` is right iff ``g_t(n) < R = u_b / (-u_a)`` (:func:`odds`),
    and g_t increases, so N is the horizon iff ``g_t(N) < R <= g_t(N + 1)``.

    Parameters
    ----------
    t : int, float, Fraction or arb
        theta_b - theta_a; its whole ball must be < 1.
    u_a, u_b : int, float, Fraction or arb
        The output layer; u_a < 0 and u_b / (-u_a) > 0 must be decided.
    N : int
        The claimed horizon, >= 0.

    Returns
    -------
    HorizonCertificate
        Which of the four inequalities are proved (:attr:`HorizonCertificate.holds` when all are),
        and R and the two powers as balls.

    Raises
    ------
    ValueError
        If t < 1, u_a < 0 or R > 0 is not decided for the balls.
    """
    t, R = ball(t), ball(u_b) / (-ball(u_a))
    if not (t < 1 and ball(u_a) < 0 and R > 0):
        raise ValueError("horizon_certificate needs t < 1, u_a < 0 < u_b")
    exponent = 1 / (1 - t)
    lower, upper = R**exponent, (2 * R) ** exponent
    below = N == 0 or odds(N, t) < R
    return HorizonCertificate(
        below=bool(below),
        beyond=bool(R <= odds(N + 1, t)),
        lower_power=bool(lower < N + 1),  # floor(R^(1/(1-t))) <= N
        upper_power=bool(N < 2 or N < upper),  # N < max(2, (2R)^(1/(1-t)))
        R=R,
        lower=lower,
        upper=upper,
    )


@_precise
def horizon(t: Number, u_a: Number, u_b: Number, max_length: int = 10**18) -> int:
    """The horizon N(t, u) of :prf:ref:`thm-threshold` (a) for t < 1 and u_a < 0 < u_b, decided in balls.

    N(t, u) is the largest n with ``g_t(n) < R = u_b / (-u_a)`` (g_t of :func:`odds` increases), found
    by bisection on [1, max_length + 1] with every comparison decided over the balls.

    Parameters
    ----------
    t : int, float, Fraction or arb
        theta_b - theta_a; its whole ball must be < 1.
    u_a, u_b : int, float, Fraction or arb
        The output layer; u_a < 0 and u_b / (-u_a) > 0 must be decided.
    max_length : int, optional
        The largest horizon searched for (``10**18`` by default).

    Returns
    -------
    int
        N(t, u), >= 1.

    Raises
    ------
    ValueError
        If t < 1, u_a < 0 or R > 0 is not decided, if ``g_t(max_length + 1) < R`` is proved (the
        horizon is beyond ``max_length``), or if a comparison of the bisection is not decided at
        ``PREC`` bits.
    """
    t, R = ball(t), ball(u_b) / (-ball(u_a))
    if not (t < 1 and ball(u_a) < 0 and R > 0):
        raise ValueError("horizon needs t < 1, u_a < 0 < u_b")
    if odds(max_length + 1, t) < R:
        raise ValueError(f"the horizon is beyond max_length = {max_length}")
    low, high = 1, max_length + 1  # g_t(1) = 0 < R, g_t(high) >= R
    while high - low > 1:
        mid = (low + high) // 2
        g = odds(mid, t)
        if g < R:
            low = mid
        elif g >= R:
            high = mid
        else:
            raise ValueError(f"g_t({mid}) = {g} against R = {R} is not decided at {PREC} bits")
    return low


@_precise
def loss_geometric_one_b(t: Number, u: tuple[Number, Number], q: Number, terms: int = 1000) -> arb:
    """The population loss L(theta, u) of :eq:`eq-population-loss` for balanced classes, one-b positives and geometric lengths, in balls.

    ``L = 1/2 sp(u_a) + 1/2 sum_n pi(n) sp(-f(n))`` with ``sp(x) = log(1 + e^x)`` (:func:`softplus`),
    ``f(n) = u_a + w p(n, 1; t)`` and ``w = u_b - u_a``. The tail beyond ``terms``: each
    ``sp(-f) <= sp(-min(u_a, u_b))``, so it is at most ``(1 - q)^terms sp(-min(u_a, u_b))``.

    Parameters
    ----------
    t : int, float, Fraction or arb
        theta_b - theta_a.
    u : tuple
        The output layer (u_a, u_b).
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1].
    terms : int, optional
        The lengths 1..terms summed in balls (1000 by default).

    Returns
    -------
    arb
        A ball containing L(theta, u).
    """
    u_a, u_b = ball(u[0]), ball(u[1])
    w = u_b - u_a
    total = arb(0)
    for n in range(1, terms + 1):
        total += geometric_pmf(n, q) * softplus(-(u_a + w * one_b_weight(n, t)))
    worst = softplus(-u_a).union(softplus(-u_b))
    tail = geometric_tail(terms, q) * worst.upper()
    return softplus(u_a) / 2 + with_tail(total, tail) / 2


@_precise
def threshold_loss_bound(r: Number, q: Number) -> arb:
    """The bound ``e^(-r) + (r + log 2)/2 (1 - q)^floor(r/2)`` on ``L(0, (-r, r^2))`` of :prf:ref:`thm-threshold` (c), in balls.

    Parameters
    ----------
    r : int, float, Fraction or arb
        The scale of the output layer (-r, r^2), > 0; the floor of r/2 must be decided.
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1].

    Returns
    -------
    arb
        A ball containing the bound.

    Raises
    ------
    ValueError
        If the ball of r/2 straddles an integer (:func:`floor_certified`).
    """
    r = ball(r)
    return (-r).exp() + (r + arb(2).log()) / 2 * (1 - ball(q)) ** floor_certified(r / 2, "r/2")


# ---------------------------------------------------------------------------- three phases


@_precise
def mean_b_fraction_geometric(q: Number) -> arb:
    """The mean b-fraction ``m = E_+[k/n] = q log(1/q) / (1 - q)`` for one b and geometric lengths (:eq:`eq-phase1`), in balls.

    The closed form of the series ``sum_n q (1 - q)^(n-1) / n``.

    Parameters
    ----------
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1).

    Returns
    -------
    arb
        A ball containing m.
    """
    q = ball(q)
    return q * (1 / q).log() / (1 - q)


def phase_one_output(eta1: Number, m: arb) -> tuple[arb, arb]:
    """The output layer after phase 1, ``(c1, w1) = (-eta1 m / 4, eta1 m / 2)``, :eq:`eq-phase1` (balanced classes).

    Parameters
    ----------
    eta1 : int, float, Fraction or arb
        The step size of phase 1, > 0.
    m : arb
        The mean b-fraction ``E_+[k/n]`` (:func:`mean_b_fraction_geometric` for one b and geometric lengths).

    Returns
    -------
    tuple of (arb, arb)
        c1 = u_a and w1 = u_b - u_a after phase 1.
    """
    eta1 = ball(eta1)
    return -eta1 * m / 4, eta1 * m / 2


@_precise
def attention_factor_geometric(c: Number, w: Number, q: Number, terms: int = 1000) -> arb:
    """The attention factor ``G(u) = E_pi[sigma(-c - w/n) log(n) (n - 1)/n^2]`` at t = 0, one b, geometric lengths, in balls.

    G of :eq:`eq-phase2` at u = u^(1), and of :prf:ref:`thm-one-step` (b) at u = u_0. The tail:
    ``sigma <= 1`` and ``log(n)(n-1)/n^2 <= log(n)/n``, decreasing for n >= 3, so the terms
    n > terms >= 2 sum to at most ``log(terms + 1)/(terms + 1) (1 - q)^terms``.

    Parameters
    ----------
    c, w : int, float, Fraction or arb
        The output layer as (u_a, u_b - u_a).
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1].
    terms : int, optional
        The lengths 2..terms summed in balls, >= 2 (1000 by default).

    Returns
    -------
    arb
        A ball containing G(u).

    Raises
    ------
    ValueError
        If ``terms`` < 2.
    """
    if terms < 2:
        raise ValueError(f"terms must be >= 2, got {terms!r}")
    c, w = ball(c), ball(w)
    total = arb(0)
    for n in range(2, terms + 1):
        total += geometric_pmf(n, q) * sigmoid(-c - w / n) * arb(n).log() * (n - 1) / arb(n) ** 2
    tail = arb(terms + 1).log() / (terms + 1) * geometric_tail(terms, q)
    return with_tail(total, tail)


@dataclass(frozen=True)
class PhaseTwo:
    """The certified constants of :prf:ref:`thm-three-phase`, phases 1 and 2 (:eq:`eq-phase1`, :eq:`eq-phase2`, :eq:`eq-boundary`).

    From :func:`phase_two` (two tokens) or :func:`d_token_phase_two` (d tokens,
    :prf:ref:`prop-d-tokens`, whose forms of c1, w1, t1 and eta2_star it gives).

    Attributes
    ----------
    m : arb
        The mean b-fraction ``E_+[k/n]``.
    c1, w1 : arb
        The output layer after phase 1 as (u_a, u_b - u_a).
    G : arb
        The attention factor G at (c1, c1 + w1), :eq:`eq-phase2`.
    t1 : arb
        The attention difference after phase 2.
    eta2_star : arb
        The eta2 that gives t1 = 1 (:eq:`eq-boundary`).
    """

    m: arb
    c1: arb
    w1: arb
    G: arb
    t1: arb
    eta2_star: arb


@_precise
def phase_two(eta1: Number, eta2: Number, q: Number, terms: int = 1000) -> PhaseTwo:
    """The constants of phases 1 and 2 of :prf:ref:`thm-three-phase` for one b and geometric lengths, in balls.

    m, ``u^(1) = (c1, c1 + w1)``, G(eta1), ``t1 = eta2 w1 G(eta1)`` and ``eta2* = 2 / (eta1 m G(eta1))``
    (:eq:`eq-phase1`, :eq:`eq-phase2`, :eq:`eq-boundary`).

    Parameters
    ----------
    eta1, eta2 : int, float, Fraction or arb
        The step sizes of phases 1 and 2, > 0.
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1).
    terms : int, optional
        The lengths summed in balls for G (:func:`attention_factor_geometric`), >= 2 (1000 by default).

    Returns
    -------
    PhaseTwo
        m, c1, w1, G, t1 and eta2_star as balls.

    Raises
    ------
    ValueError
        If ``terms`` < 2.
    """
    m = mean_b_fraction_geometric(q)
    c1, w1 = phase_one_output(eta1, m)
    G = attention_factor_geometric(c1, w1, q, terms)
    return PhaseTwo(m, c1, w1, G, ball(eta2) * w1 * G, 2 / (ball(eta1) * m * G))


@_precise
def d_token_phase_two(d: int, eta1: Number, eta2: Number, q: Number, terms: int = 1000) -> PhaseTwo:
    """The constants of :prf:ref:`prop-d-tokens` (c) for d tokens, one b, geometric lengths, in balls.

    ``m`` (:eq:`eq-phase1`), ``c1 = -eta1 m / (4 (d - 1))``, ``w1 = eta1 m d / (4 (d - 1))``, ``G`` of
    :eq:`eq-phase2` at (c1, c1 + w1), ``t1 = eta2 d / (d - 1) w1 / 2 G`` and ``eta2_star``
    ``= 2 (d - 1) / (d w1 G)``, the eta2 that gives t1 = 1. For d = 2 these are :func:`phase_two`'s.

    Parameters
    ----------
    d : int
        The vocabulary size, a whole number >= 2.
    eta1, eta2 : int, float, Fraction or arb
        The step sizes of phases 1 and 2.
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean).
    terms : int, optional
        The lengths summed in balls for G (:func:`attention_factor_geometric`).

    Returns
    -------
    PhaseTwo
        m, c1, w1, G, t1 and eta2_star as balls.
    """
    if isinstance(d, bool) or not isinstance(d, int) or d < 2:
        raise ValueError(f"d must be a whole number >= 2, got {d!r}")
    m = mean_b_fraction_geometric(q)
    share = ball(eta1) * m / 4
    c1, w1 = -share / (d - 1), share * d / (d - 1)
    G = attention_factor_geometric(c1, w1, q, terms)
    factor = arb(d) / (d - 1)
    return PhaseTwo(m, c1, w1, G, ball(eta2) * factor * w1 / 2 * G, 2 / (factor * w1 * G))


@dataclass(frozen=True)
class SampledMoments:
    """The moments of :prf:ref:`prop-sampled-phases` for one b, geometric lengths, balanced classes.

    Attributes
    ----------
    sigma_u : tuple of arb
        (Sigma_aa, Sigma_ab, Sigma_bb), the covariance over one string of its loss's gradient in u at
        theta = 0, u = 0.
    v_t : arb
        V_t(u), the variance over one string of its loss's derivative in t at theta = 0.
    J : tuple of arb
        grad_u of dL/dt at theta = 0 and u.
    sd_t1 : arb
        The delta-method standard deviation ``sqrt(4 eta2^2 / B (V_t + eta1^2 J Sigma_u J^T))`` of part (c).
    """

    sigma_u: tuple[arb, arb, arb]
    v_t: arb
    J: tuple[arb, arb]
    sd_t1: arb


@_precise
def sampled_phase_moments(
    u: tuple[Number, Number], eta1: Number, eta2: Number, batch: int, q: Number, terms: int = 1000
) -> SampledMoments:
    """Sigma_u, V_t(u), J and the delta-method sd of t1 of :prf:ref:`prop-sampled-phases`, in balls.

    At theta = 0 one b gives p = 1/n (:eq:`eq-pooled-weight`); per string (:prf:ref:`lem-gradients`) the
    gradient in u is (1/2, 0) on a negative at u = 0 and (-(1 - p)/2, -p/2) on a positive, and the
    derivative in t is 0 on a negative and ``d(n) = -w sigma(-f) log(n) p (1 - p)`` on a positive,
    f = u_a + w p. J differentiates dL/dt = 1/2 E_pi[d(n)] in u_a and u_b (sigma' = sigma(f) sigma(-f)).
    Each expectation over lengths sums n <= ``terms`` in balls; its terms are bounded by 1
    (Sigma_u), ``w^2/e^2`` (d^2, as ``log(n)(n - 1)/n^2 <= 1/e``) and ``(1 + |w|/4)/e`` (J), so the
    rest is ``(1 - q)^terms`` times those bounds, added as an interval.

    Parameters
    ----------
    u : tuple
        The output layer (u_a, u_b) after phase 1 (the point of V_t and J).
    eta1, eta2 : int, float, Fraction or arb
        The step sizes of phases 1 and 2.
    batch : int
        The batch size B, a whole number >= 1.
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean).
    terms : int, optional
        The lengths summed in balls (1000 by default).

    Returns
    -------
    SampledMoments
        The balls.
    """
    if not (isinstance(batch, int) and batch >= 1 and isinstance(terms, int) and terms >= 2):
        raise ValueError(f"batch must be a whole number >= 1 and terms >= 2, got {batch!r}, {terms!r}")
    u_a, u_b = ball(u[0]), ball(u[1])
    w = u_b - u_a
    sums = [arb(0)] * 7  # E[(1-p)], E[p], E[(1-p)^2], E[p(1-p)], E[p^2], E[d], E[d^2]
    jac = [arb(0)] * 2
    for n in range(1, terms + 1):
        p = 1 / arb(n)
        f = u_a + w * p
        miss = sigmoid(-f)
        weight = arb(n).log() * p * (1 - p)
        d = -w * miss * weight
        slope = miss * sigmoid(f)
        parts = (1 - p, p, (1 - p) ** 2, p * (1 - p), p**2, d, d**2)
        mass = geometric_pmf(n, q)
        sums = [a + mass * b for a, b in zip(sums, parts, strict=True)]
        # d/du_a and d/du_b of d(n) = -w sigma(-f) weight, f = u_a (1 - p) + u_b p
        jac[0] += mass * weight * (miss + w * slope * (1 - p))
        jac[1] += mass * weight * (-miss + w * slope * p)
    tail = geometric_tail(terms, q)
    e = arb(1).exp()
    bounds = (arb(1),) * 5 + (abs(w) / e, w**2 / e**2)
    mom = [s + interval(-tail * b, tail * b) for s, b in zip(sums, bounds, strict=True)]
    jac_bound = tail * (1 + abs(w) / 4) / e
    J = tuple(j / 2 + interval(-jac_bound, jac_bound) / 2 for j in jac)
    half = arb(1) / 2
    # gradient in u per string: negative (1/2, 0), positive (-(1 - p)/2, -p/2); prior 1/2
    mean_a, mean_b = half * half - half * mom[0] / 2, -half * mom[1] / 2
    s_aa = half * half**2 + half * mom[2] / 4 - mean_a**2
    s_ab = half * mom[3] / 4 - mean_a * mean_b
    s_bb = half * mom[4] / 4 - mean_b**2
    v_t = half * mom[6] - (half * mom[5]) ** 2
    quad = J[0] ** 2 * s_aa + 2 * J[0] * J[1] * s_ab + J[1] ** 2 * s_bb
    sd = (4 * ball(eta2) ** 2 / batch * (v_t + ball(eta1) ** 2 * quad)).sqrt()
    return SampledMoments((s_aa, s_ab, s_bb), v_t, J, sd)


@dataclass(frozen=True)
class PhaseThree:
    """The phase-3 certificate of :prf:ref:`thm-three-phase` :eq:`eq-phase3-steps`, from :func:`phase_three_certificate`.

    Attributes
    ----------
    n_star : int
        n*, the length where ``p(n, 1; t1)`` is smallest (:func:`worst_one_b_length`).
    pi_star : arb
        ``pi_+(n*)``.
    eps_star : arb
        eps*, the loss below which every u recognises the language.
    R : arb
        ``log(2 / eps*)``, the scale of ``u* = R (-1, 3)``.
    distance2 : arb
        ``|u^(1) - u*|^2``.
    T_star : int
        T*: the loss after T phase-3 steps is below eps* for every T >= T*.
    """

    n_star: int
    pi_star: arb
    eps_star: arb
    R: arb
    distance2: arb
    T_star: int


@_precise
def phase_three_certificate(
    t1: Number, u1: tuple[Number, Number], eta3: Number, pi_plus: Callable[[int], arb], prior: Number = Fraction(1, 2)
) -> PhaseThree:
    """The phase-3 certificate of :prf:ref:`thm-three-phase`: n*, eps* and T* of :eq:`eq-phase3-steps`, in balls.

    n*, ``pi_+(n*)``, ``eps* = log 2 min(1 - prior, prior pi_+(n*))`` (``= 1/2 log 2 min(1, pi_+(n*))``
    for balanced classes), ``R = log(2 / eps*)``, ``|u^(1) - R(-1, 3)|^2`` and
    ``T* = floor(that / (eta3 eps*)) + 1``.

    Parameters
    ----------
    t1 : int, float, Fraction or arb
        The attention difference after phase 2; its whole ball must be > 1.
    u1 : tuple
        The output layer u^(1) = (u_a, u_b) after phase 1.
    eta3 : int, float, Fraction or arb
        The step size of phase 3, in (0, 4].
    pi_plus : callable
        ``pi_plus(n)`` = ``pi_+(n) = pi(n) kappa(1 | n)``, the mass of the positive ``a^(n-1) b`` among
        the positives, as a ball.
    prior : int, float, Fraction or arb, optional
        rho = P(y = +1), in (0, 1); 1/2 by default.

    Returns
    -------
    PhaseThree
        n*, ``pi_+(n*)``, eps*, R, the squared distance and T*.

    Raises
    ------
    ValueError
        If n* is not decided (:func:`worst_one_b_length`: t1 > 1 not proved, or a tie) or the floor in
        T* is not decided at ``PREC`` bits.
    """
    n_star = worst_one_b_length(t1)
    pi_star = pi_plus(n_star)
    prior = ball(prior)
    log2 = arb(2).log()
    eps = log2 * (1 - prior).min(prior * pi_star)
    R = (2 / eps).log()
    distance2 = (ball(u1[0]) + R) ** 2 + (ball(u1[1]) - 3 * R) ** 2
    T_star = floor_certified(distance2 / (ball(eta3) * eps), "|u1 - u*|^2 / (eta3 eps*)") + 1
    return PhaseThree(n_star, pi_star, eps, R, distance2, T_star)


# ---------------------------------------------------------------------------- one-step failure


@_precise
def gamma_geometric(q: Number, terms: int = 1000) -> arb:
    """``Gamma = E_pi[log(n) (n - 1)/n^2]`` of :prf:ref:`thm-one-step` (b), one b, geometric lengths, in balls.

    Gamma = 2 G(0) (:func:`attention_factor_geometric`), with the same tail bound.

    Parameters
    ----------
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1].
    terms : int, optional
        The lengths 2..terms summed in balls, >= 2 (1000 by default).

    Returns
    -------
    arb
        A ball containing Gamma.
    """
    total = arb(0)
    for n in range(2, terms + 1):
        total += geometric_pmf(n, q) * arb(n).log() * (n - 1) / arb(n) ** 2
    return with_tail(total, arb(terms + 1).log() / (terms + 1) * geometric_tail(terms, q))


@_precise
def saturation_factor_geometric(t: Number, q: Number, terms: int = 1000) -> arb:
    """``Lambda(t) = 1/2 E_pi[log(n) n^t / (n - 1); n >= 2]`` of :prf:ref:`thm-one-step` (c) for t <= 0, geometric lengths, in balls.

    For t <= 0, ``n^t <= 1`` and ``log(n)/(n - 1)`` decreases, so the terms n > terms sum to at most
    ``1/2 log(terms + 1)/terms (1 - q)^terms``.

    Parameters
    ----------
    t : int, float, Fraction or arb
        The attention difference; its whole ball must be <= 0.
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1].
    terms : int, optional
        The lengths 2..terms summed in balls, >= 2 (1000 by default).

    Returns
    -------
    arb
        A ball containing Lambda(t).

    Raises
    ------
    ValueError
        If t <= 0 is not decided for the ball.
    """
    t = ball(t)
    if not t <= 0:
        raise ValueError(f"t must be <= 0, got {t}")
    total = arb(0)
    for n in range(2, terms + 1):
        total += geometric_pmf(n, q) * arb(n).log() * arb(n) ** t / (n - 1)
    return with_tail(total, arb(terms + 1).log() / terms * geometric_tail(terms, q)) / 2


@_precise
def recovery_lower_bounds(t0: Number, eta: Number, lambda0: arb, W: Number | None = None) -> tuple[arb | None, arb]:
    """The two lower bounds of :prf:ref:`thm-one-step` (c) on the steps T before t first exceeds 0, in balls.

    ``(2^|t0| - 1) / (2 log 2 eta W Lambda(0))`` (when ``|w_s| <= W`` before T) and
    ``sqrt((2^|t0| - 1) / (log 2 eta^2 Lambda(0)))`` (when w_0 = 0).

    Parameters
    ----------
    t0 : int, float, Fraction or arb
        The attention difference at the start, < 0.
    eta : int, float, Fraction or arb
        The step size of joint gradient descent, > 0.
    lambda0 : arb
        Lambda(0) (:func:`saturation_factor_geometric` at t = 0 for geometric lengths), > 0.
    W : int, float, Fraction or arb, optional
        The bound on ``|w_s|``, > 0; None (default) leaves the first bound out.

    Returns
    -------
    tuple of (arb or None, arb)
        The bound with W (None when ``W`` is None) and the bound for w_0 = 0.
    """
    depth = arb(2) ** abs(ball(t0)) - 1
    eta, log2 = ball(eta), arb(2).log()
    with_w = None if W is None else depth / (2 * log2 * eta * ball(W) * lambda0)
    return with_w, (depth / (log2 * eta**2 * lambda0)).sqrt()


@_precise
def small_sigma_success(x: Number) -> arb:
    """``1 - Phi(sqrt(2)/x) = erfc(1/x)/2``, the small-sigma limit of the success probability in :prf:ref:`thm-one-step` (b), in balls.

    Parameters
    ----------
    x : int, float, Fraction or arb
        The step size in units of ``1/(sigma Gamma)`` (eta = x / (sigma Gamma)), > 0.

    Returns
    -------
    arb
        A ball containing ``erfc(1/x)/2``.
    """
    return (1 / ball(x)).erfc() / 2


# ---------------------------------------------------------------------------- several b's


def kappa_uniform(n: int, k: int) -> arb:
    """The uniform count law ``kappa(k | n) = 1/n`` (k uniform on 1..n), in balls.

    Parameters
    ----------
    n : int
        The length, >= 1.
    k : int
        The number of b's, in 1..n (the law does not depend on it).

    Returns
    -------
    arb
        A ball containing 1/n.
    """
    return 1 / arb(n)


def kappa_binomial(q: Number) -> Callable[[int, int], arb]:
    """The binomial count law ``kappa(k | n) = C(n, k) q^k (1 - q)^(n - k) / (1 - (1 - q)^n)``, Binomial(n, q) given k >= 1.

    Parameters
    ----------
    q : int, float, Fraction or arb
        The probability of b at each position, in (0, 1].

    Returns
    -------
    callable
        ``kappa(n, k)``, a ball containing ``kappa(k | n)`` for a length n >= 1 and k in 1..n.
    """
    q = ball(q)

    def kappa(n: int, k: int) -> arb:
        return arb(n).bin(k) * q**k * (1 - q) ** (n - k) / (1 - (1 - q) ** n)

    return kappa


@dataclass(frozen=True)
class SeveralBCertificate:
    """The two sides of :eq:`eq-lower-several-b` at one instance, from :func:`several_b_certificate`.

    A certified lower bound of L(0, u) (a truncated sum of its non-negative terms) and a certified
    upper bound of ``1/2 log 2 sum_{n > N} pi_+(n)``.

    Attributes
    ----------
    horizon : int
        N, at most the horizon N(0, u).
    loss_lower : arb
        An exact ball at or below L(0, u).
    bound_upper : arb
        An exact ball at or above ``1/2 log 2 sum_{n > N} pi_+(n)``.
    """

    horizon: int
    loss_lower: arb
    bound_upper: arb

    @property
    def holds(self) -> bool:
        """Whether ``loss_lower > bound_upper`` is proved, and with it :eq:`eq-lower-several-b` (strictly) at this instance."""
        return bool(self.loss_lower > self.bound_upper)


@_precise
def several_b_certificate(
    u: tuple[Number, Number],
    pmf: Callable[[int], arb],
    kappa: Callable[[int, int], arb],
    one_b_tail: Callable[[int], arb],
    horizon: int,
    loss_terms: int = 300,
    bound_terms: int = 2000,
    one_b: Callable[[int], arb] | None = None,
) -> SeveralBCertificate:
    """Certify ``L(0, u) >= 1/2 log 2 sum_{n > N(0, u)} pi(n) kappa(1 | n)``, :eq:`eq-lower-several-b` at t = 0 (p = k/n).

    ``u`` may hold balls (a box of output layers): then the lower bound holds on the box (each term
    ``sp(-(u_a (1 - k/n) + u_b k/n))`` has each argument once, so its ball is the exact range) and
    ``horizon`` must be at most N(0, u) on the box (the right side decreases in N). L is bounded below
    by its negatives and its positives with n <= ``loss_terms``; the right side is summed over
    ``horizon < n <= bound_terms`` and its rest bounded by ``one_b_tail(bound_terms)``.

    Parameters
    ----------
    u : tuple
        The output layer (u_a, u_b), numbers or balls.
    pmf : callable
        ``pmf(n)`` = pi(n) as a ball.
    kappa : callable
        ``kappa(n, k)`` = ``kappa(k | n)`` as a ball (:func:`kappa_uniform`, :func:`kappa_binomial`).
    one_b_tail : callable
        ``one_b_tail(M)`` >= ``sum_{n > M} one_b(n)``.
    horizon : int
        N, at most N(0, u) (on the whole box when ``u`` holds balls), >= 0.
    loss_terms : int, optional
        The lengths of the positives summed for the lower bound of L (300 by default).
    bound_terms : int, optional
        The lengths up to which the right side is summed term by term, >= ``horizon`` (2000 by default).
    one_b : callable or None, optional
        ``one_b(n)`` = ``pi_+(n)``; None (default) for ``pi(n) kappa(1 | n)``.

    Returns
    -------
    SeveralBCertificate
        The two bounds (:attr:`SeveralBCertificate.holds` when the inequality is proved).
    """
    if one_b is None:

        def one_b(n: int) -> arb:
            return pmf(n) * kappa(n, 1)

    u_a, u_b = ball(u[0]), ball(u[1])
    positives = arb(0)
    for n in range(1, loss_terms + 1):
        inner = arb(0)
        for k in range(1, n + 1):
            share = Fraction(k, n)
            inner += kappa(n, k) * softplus(-(u_a * ball(1 - share) + u_b * ball(share)))
        positives += pmf(n) * inner
    loss_lower = (softplus(u_a) + positives).lower() / 2
    beyond = arb(0)
    for n in range(horizon + 1, bound_terms + 1):
        beyond += one_b(n)
    bound_upper = (arb(2).log() / 2 * with_tail(beyond, one_b_tail(bound_terms))).upper()
    return SeveralBCertificate(horizon, arb(loss_lower), arb(bound_upper))


@_precise
def power_law_tail_terms(
    s: Number, counts: str, t: Number, u: tuple[Number, Number], first: int, last: int
) -> list[arb]:
    """Enclosures of the four expectations over positives of length >= ``first`` that :prf:ref:`thm-tail-expansion` expands.

    Power-law lengths ``pi(n) = n^(-s)/zeta(s)`` (:eq:`eq-power-law`), s > 2, with length scaling:
    ``E_+[Phi(n, k); n >= first]`` for ``Phi = l(f) = log(1 + e^(-f))``, ``sigma(-f)(1 - p)``,
    ``sigma(-f) p`` and ``sigma(-f) p (1 - p) log n``, with ``p = k n^t / (k n^t + n - k)`` and
    ``f = u_a + (u_b - u_a) p``. The lengths ``first`` to ``last`` are summed in balls; the rest is
    added as ``[0, bound]``: with f in ``[min u, max u]``, the first three terms are at most
    ``l(min u)``, 1, 1 and the fourth at most ``log n``, and for n > L
    ``sum n^(-s) log n <= log(L) zeta(s, L + 1) + zeta(s - 1, L + 1)/L`` (``log n <= log L + n/L``).

    Parameters
    ----------
    s : int, float, Fraction or arb
        The exponent of :eq:`eq-power-law`; its whole ball must be > 2.
    counts : {"one-b", "uniform"}
        The count law: k = 1, or k uniform on 1..n.
    t : int, float, Fraction or arb
        theta_b - theta_a.
    u : tuple
        The output layer (u_a, u_b).
    first, last : int
        The lengths summed in balls, whole numbers with 2 <= first <= last.

    Returns
    -------
    list of arb
        Balls containing the four expectations (loss, d/du_a, d/du_b and d/dt terms).

    Raises
    ------
    ValueError
        If ``counts`` is neither, ``first`` and ``last`` are not whole numbers with
        2 <= first <= last, or s > 2 is not decided for the ball.
    """
    if counts not in ("one-b", "uniform"):
        raise ValueError(f"counts must be 'one-b' or 'uniform', got {counts!r}")
    if not (isinstance(first, int) and isinstance(last, int) and 2 <= first <= last):
        raise ValueError(f"first and last must be whole numbers with 2 <= first <= last, got {first!r}, {last!r}")
    s, t, u_a, u_b = ball(s), ball(t), ball(u[0]), ball(u[1])
    if not s > 2:
        raise ValueError(f"s must exceed 2 (the log-weighted tail uses zeta(s - 1)), got {s}")
    w = u_b - u_a
    sums = [arb(0)] * 4
    for n in range(first, last + 1):
        n_ball = arb(n)
        scaled, log_n = n_ball**t, n_ball.log()
        ks = [1] if counts == "one-b" else range(1, n + 1)
        inner = [arb(0)] * 4
        for k in ks:
            weighted = k * scaled
            p = weighted / (weighted + (n - k))
            f = u_a + w * p
            miss = 1 / (1 + f.exp())
            terms = (softplus(-f), miss * (1 - p), miss * p, miss * p * (1 - p) * log_n)
            inner = [a + b for a, b in zip(inner, terms, strict=True)]
        weight = n_ball ** (-s) if counts == "one-b" else n_ball ** (-s - 1)
        sums = [a + weight * b for a, b in zip(sums, inner, strict=True)]
    zeta_s = s.zeta()
    rest = (s.zeta(arb(last + 1))) / zeta_s
    rest_log = power_law_log_tail(last, s)
    loss_bound = softplus(-(u_a.min(u_b)))
    bounds = (loss_bound * rest, rest, rest, rest_log)
    return [with_tail(total / zeta_s, bound) for total, bound in zip(sums, bounds, strict=True)]


# ---------------------------------------------------------------------------- the strip of the tail expansion


def strip_half_width(w: Number) -> arb:
    """The half-width ``r = min(pi/2, pi/|w|)`` of the strip of :prf:ref:`lem-strip` (pi/2 when w = 0).

    Parameters
    ----------
    w : int, float, Fraction or arb
        u_b - u_a.

    Returns
    -------
    arb
        A ball containing r.
    """
    w, half = ball(w), arb.pi() / 2
    return half if w == 0 else half.min(arb.pi() / abs(w))


def strip_bounds(u: tuple[Number, Number]) -> tuple[arb, arb, arb, arb]:
    """The bounds M of :prf:ref:`lem-strip`: ``(l(min(u_a, u_b)) + pi/2, 1, 1, 1)`` with
    ``l(z) = log(1 + e^(-z))`` of :prf:ref:`def-data`.

    Parameters
    ----------
    u : tuple
        The output layer (u_a, u_b).

    Returns
    -------
    tuple of arb
        The bounds on ``|Phi_l|``, ``|Phi_a|``, ``|Phi_b|``, ``|Phi_t|``.
    """
    u_a, u_b = ball(u[0]), ball(u[1])
    return softplus(-(u_a.min(u_b))) + arb.pi() / 2, arb(1), arb(1), arb(1)


@_precise
def strip_terms(z: acb, u: tuple[Number, Number]) -> tuple[acb, acb, acb, acb]:
    """The four per-string terms of :prf:ref:`lem-strip` at a complex ball ``z``, in ball arithmetic.

    With ``sigma(v) = 1 / (1 + e^(-v))`` and ``f = u_a + (u_b - u_a) sigma(z)``::

        Phi_l = log(1 + e^(-f))   (principal branch),   Phi_a = sigma(-f) sigma(-z),
        Phi_b = sigma(-f) sigma(z),                     Phi_t = sigma(-f) sigma(z) sigma(-z).

    Parameters
    ----------
    z : acb
        The point (a complex ball: every point of it is covered).
    u : tuple
        The output layer (u_a, u_b).

    Returns
    -------
    tuple of acb
        Balls containing Phi_l, Phi_a, Phi_b, Phi_t at every point of ``z``.
    """
    z = acb(z)
    u_a, u_b = acb(ball(u[0])), acb(ball(u[1]))

    def logistic(v: acb) -> acb:
        return 1 / (1 + (-v).exp())

    f = u_a + (u_b - u_a) * logistic(z)
    miss = logistic(-f)
    return (1 + (-f).exp()).log(), miss * logistic(-z), miss * logistic(z), miss * logistic(z) * logistic(-z)


# ---------------------------------------------------------------------------- ReLU readout, FIRST


def relu(x: arb) -> arb:
    """``max(x, 0)`` of a ball, a ball containing relu of every point of ``x``.

    Parameters
    ----------
    x : int, float, Fraction or arb
        The argument.

    Returns
    -------
    arb
        A ball containing ``max(y, 0)`` for every y in ``x``.
    """
    return ball(x).max(arb(0))


@dataclass(frozen=True)
class ReluCertificate:
    """The piecewise-linear certificate of recognition for a ReLU readout g(p) on h = (1 - p, p) at t > 1
    (:prf:ref:`prop-ffn-symmetric` (c)).

    Attributes
    ----------
    negative : arb
        g(0), the output of every negative.
    n_star : int
        The length of the hardest positive, :func:`worst_one_b_length` (t).
    p_min : arb
        p(n*, 1; t), the smallest weight on b of any positive.
    positive_min : arb
        A ball below which no value of g at the ends of [p(n*, 1; t), 1] and at its kinks lies.
    """

    negative: arb
    n_star: int
    p_min: arb
    positive_min: arb

    @property
    def recognises(self) -> bool:
        """g(0) < 0 < g on [p(n*, 1; t), 1], decided for the whole balls."""
        return bool(self.negative < 0 and self.positive_min > 0)


@_precise
def relu_readout_certificate(
    V: Iterable[tuple[Number, Number]], b: Iterable[Number], a: Iterable[Number], t: Number
) -> ReluCertificate:
    """Decide recognition at every length for a ReLU readout (:prf:ref:`prop-ffn-symmetric` (c)), in balls.

    For ``f = g(p) = sum_j a_j relu(V_j0 (1 - p) + V_j1 p + b_j)`` on h = (1 - p, p) and t > 1, every
    positive has p in [p(n*, 1; t), 1] (:prf:ref:`lem-pooling`, :eq:`eq-pooled-weight`, n* =
    :func:`worst_one_b_length`) and every negative p = 0; g is linear between the kinks
    ``p_j = -(V_j0 + b_j) / (V_j1 - V_j0)``, so its minimum over the interval is at an end or a kink.
    Every kink whose ball meets the interval is evaluated (a ball kink gives a ball of g that contains
    g at the exact kink), so ``g(0) < 0 < min`` decided proves recognition of every string.

    Parameters
    ----------
    V : iterable of pairs
        The first-layer weights (V_j0, V_j1) of each neuron.
    b : iterable
        The biases b_j.
    a : iterable
        The output weights a_j.
    t : int, float, Fraction or arb
        theta_b - theta_a, > 1.

    Returns
    -------
    ReluCertificate
        g(0), n*, p(n*, 1; t) and the smallest ball of g over the ends and kinks.

    Raises
    ------
    ValueError
        If the lists differ in length, t > 1 is not decided, or a neuron's slope is not decided non-zero.
    """
    rows = [(ball(v0), ball(v1)) for v0, v1 in V]
    biases, outs = [ball(x) for x in b], [ball(x) for x in a]
    if not (len(rows) == len(biases) == len(outs) >= 1):
        raise ValueError("V, b and a must have the same number >= 1 of neurons")

    def g(p: arb) -> arb:
        total = arb(0)
        for (v0, v1), bias, out in zip(rows, biases, outs, strict=True):
            total += out * relu(v0 * (1 - p) + v1 * p + bias)
        return total

    n_star = worst_one_b_length(t)
    p_min = one_b_weight(n_star, t)
    points = [p_min, arb(1)]
    for (v0, v1), bias in zip(rows, biases, strict=True):
        slope = v1 - v0
        if slope == 0:  # exactly flat: no kink
            continue
        if not slope.is_exact() and slope.contains(0):
            raise ValueError(f"the slope {slope} of a neuron is not decided non-zero")
        kink = -(v0 + bias) / slope
        if kink.upper() >= p_min.lower() and kink.lower() <= 1:
            points.append(kink)
    values = [g(p) for p in points]
    smallest = values[0]
    for value in values[1:]:
        smallest = smallest.min(value)
    return ReluCertificate(g(arb(0)), n_star, p_min, smallest)


@_precise
def first_uniform_margin(s: Number) -> tuple[int, arb]:
    """The uniform margin of FIRST at u = (-1, 1) (:prf:ref:`prop-first` (b)), over all lengths, in balls.

    ``gamma(s) = min_n (n^s - n + 1)/(n^s + n - 1) = min_n (1 - g_s(n)) / (1 + g_s(n))`` with
    ``g_s(n) = (n - 1) n^(-s)``, attained where g_s is largest, at n* = :func:`worst_one_b_length` (s);
    so ``gamma(s) = 2 p(n*, 1; s) - 1`` (:eq:`eq-pooled-weight`).

    Parameters
    ----------
    s : int, float, Fraction or arb
        The position-1 score, > 1.

    Returns
    -------
    tuple of (int, arb)
        n* and a ball containing gamma(s).
    """
    n_star = worst_one_b_length(s)
    return n_star, 2 * one_b_weight(n_star, s) - 1


@_precise
def first_marker_factor_geometric(c: Number, w: Number, q: Number, terms: int = 400) -> arb:
    """G_F of :prf:ref:`prop-first` (c) for geometric lengths :eq:`eq-geometric`, in balls::

        G_F = E_(n, j)[ log(n) (n - 1)/n^2 ( sigma(-f_+) (1 - j/(n - 1)) + sigma(f_-) j/(n - 1) ) ],

    j ~ Bin(n - 1, 1/2), ``f_+ = c + w (1 + j)/n``, ``f_- = c + w j/n`` (terms with n = 1 are 0). The
    bracket is in [0, 1], so the tail beyond ``terms`` is at most that of
    :func:`attention_factor_geometric`, ``log(terms + 1)/(terms + 1) (1 - q)^terms``.

    Parameters
    ----------
    c, w : int, float, Fraction or arb
        The output layer as (u_a, u_b - u_a).
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean).
    terms : int, optional
        The lengths summed in balls, >= 2 (400 by default).

    Returns
    -------
    arb
        A ball containing G_F.
    """
    if terms < 2:
        raise ValueError(f"terms must be >= 2, got {terms!r}")
    c, w = ball(c), ball(w)
    total = arb(0)
    for n in range(2, terms + 1):
        inner = arb(0)
        for j in range(n):
            share = Fraction(j, n - 1)
            bracket = sigmoid(-(c + w * (1 + j) / n)) * ball(1 - share) + sigmoid(c + w * j / n) * ball(share)
            inner += arb(n - 1).bin(j) * bracket
        total += geometric_pmf(n, q) * arb(n).log() * (n - 1) / arb(n) ** 2 * inner / arb(2) ** (n - 1)
    tail = arb(terms + 1).log() / (terms + 1) * geometric_tail(terms, q)
    return with_tail(total, tail)


# ---------------------------------------------------------------------------- ICL


def icl_optimal_step(dim: int, min_context: int, max_context: int) -> Fraction:
    """The optimal step ``eta* = 1 / (1 + (D + 1) E[1/m])`` for m uniform on min_context..max_context, exactly.

    The empirical ICL chapter's closed form, as a rational number: the minimiser of
    :func:`icl_mean_error` over the training sizes.

    Parameters
    ----------
    dim : int
        D, the input dimension, a whole number >= 1.
    min_context, max_context : int
        The smallest and largest context size m of training, whole numbers with
        1 <= min_context <= max_context.

    Returns
    -------
    Fraction
        eta*.

    Raises
    ------
    ValueError
        If ``dim`` or ``min_context`` is not a whole number >= 1, or ``max_context`` is not a whole
        number >= ``min_context``.
    """
    if not (isinstance(dim, int) and dim >= 1 and isinstance(min_context, int) and min_context >= 1):
        raise ValueError("dim and min_context must be whole numbers >= 1")
    if not (isinstance(max_context, int) and max_context >= min_context):
        raise ValueError(f"max_context must be a whole number >= min_context, got {max_context!r}")
    sizes = range(min_context, max_context + 1)
    mean_inverse = sum(Fraction(1, m) for m in sizes) / len(sizes)
    return 1 / (1 + (dim + 1) * mean_inverse)


def icl_mean_error(step: Fraction, dim: int, sizes: Iterable[int]) -> Fraction:
    """The mean over m uniform on ``sizes`` of ``eta^2 (1 + (D+1)/m) - 2 eta + 1``, exactly.

    The population mean squared error of the one-step gradient-descent prediction ``eta g^T x_q`` at
    context size m (the empirical ICL chapter's closed form), averaged over the sizes.

    Parameters
    ----------
    step : Fraction
        eta (an int also works).
    dim : int
        D, the input dimension, >= 1.
    sizes : iterable of int
        The context sizes m, at least one, each >= 1.

    Returns
    -------
    Fraction
        The mean error.

    Raises
    ------
    ValueError
        If ``dim`` or a size is not an integer >= 1, or ``sizes`` is empty.
    """
    dim = check_integer(dim, "dim", 1)
    sizes = [check_integer(m, "sizes", 1) for m in sizes]
    if not sizes:
        raise ValueError("sizes must hold at least one context size")
    return sum(step**2 * (1 + Fraction(dim + 1, m)) - 2 * step + 1 for m in sizes) / len(sizes)


# ---------------------------------------------------------------------------- midpoint-sum constants


def _monomial_integral(power: int, denominator: int) -> Fraction:
    """int_{-1/2}^{1/2} u^power / denominator du, exactly."""
    if power % 2:
        return Fraction(0)
    return Fraction(2, (power + 1) * denominator) * Fraction(1, 2) ** (power + 1)


def midpoint_constants() -> dict[str, Fraction]:
    """The constants of :prf:ref:`lem-midpoint-sum` and :prf:ref:`thm-tail-expansion` as exact rationals, from their
    derivation: per cell int u^4/24 = 1/1920 and (1/24) int u^2/2 = 1/576 (cell constant
    13/5760); the end term (1/24)(h^3/3 at h = 1/2) = 1/576; C_A's 13/360 = (13/5760) 2 24 / 3 and
    1/48 = (1/576) 2 6; E_out's 13/240 = 24 (13/5760) and 1/96 = 6/576."""
    fourth = _monomial_integral(4, 24)
    second = _monomial_integral(2, 2)
    cell = fourth + second * second
    difference = Fraction(1, 3) * Fraction(1, 2) ** 3  # h^3/3 at h = 1/2
    end = second * difference
    return {
        "cell_fourth": fourth,
        "cell_second": second,
        "cell": cell,
        "end": end,
        "C_A_cells": cell * 2 * 24 / 3,
        "C_A_ends": end * 2 * 6,
        "E_out_cells": 24 * cell,
        "E_out_end": 6 * end,
    }
