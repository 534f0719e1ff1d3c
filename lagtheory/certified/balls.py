"""Balls: the certified layer's arithmetic helpers (python-flint's ``arb`` at ``PREC`` bits).

Exact balls of the arguments, intervals, a ball's ends and an ``mpmath`` value as exact rationals (for
comparing a ball with an independent value), a truncated tail added to a ball's radius, floors decided
for a whole ball, printing of a ball for a stored output, and the logistic function, softplus and
ReLU in balls. Importing this module sets flint's global precision to ``PREC``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction

import flint
import mpmath
from flint import arb

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


def ends(x: arb) -> tuple[Fraction, Fraction]:
    """The two ends of a ball as exact rationals (its ends are binary numbers), for comparing a ball with a
    value computed independently (``mpmath``, exact sums) without rounding either.

    Parameters
    ----------
    x : int, float, Fraction or arb
        The ball, taken by :func:`ball`; finite.

    Returns
    -------
    tuple of Fraction
        ``(low, high)``, with every point of the ball in ``[low, high]``.

    Raises
    ------
    ValueError
        If the ball is not finite.
    """
    x = ball(x)
    if not x.is_finite():
        raise ValueError(f"x must be a finite ball, got {x}")
    return _exact(x.lower()), _exact(x.upper())


def mp_fraction(value: mpmath.mpf) -> Fraction:
    """An ``mpmath`` real exactly, as a Fraction (its sign, mantissa and binary exponent), never rounded:
    the independent value of a certified check, compared with the ball's :func:`ends`.

    Parameters
    ----------
    value : mpmath.mpf
        A finite ``mpmath`` real, at any working precision (its binary digits are taken as they are).

    Returns
    -------
    Fraction
        The dyadic rational that ``value`` is, exactly.

    Raises
    ------
    TypeError
        If ``value`` is not an ``mpmath.mpf`` (an int, float or arb is refused: take its ball's :func:`ends`).
    ValueError
        If ``value`` is infinite or NaN.

    Examples
    --------
    >>> mp_fraction(mpmath.mpf(-3) / 8)
    Fraction(-3, 8)
    """
    if not isinstance(value, mpmath.mpf):
        raise TypeError(f"value must be an mpmath.mpf, got {type(value).__name__}")
    if not mpmath.isfinite(value):
        raise ValueError(f"value must be finite, got {value}")
    mantissa, exponent = value.man_exp  # the mantissa without its sign
    return (-1 if value < 0 else 1) * Fraction(int(mantissa)) * Fraction(2) ** int(exponent)


def _exact(end: arb) -> Fraction:
    """An exact ball (radius 0) as a Fraction."""
    mantissa, exponent = end.man_exp()
    return Fraction(int(mantissa)) * Fraction(2) ** int(exponent)


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

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with flint.ctx.workprec(PREC):
            return function(*args, **kwargs)

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
