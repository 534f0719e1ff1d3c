"""The tail expansion of power-law sums in balls (the setting chapter): the expectations that
:prf:ref:`thm-tail-expansion` expands, the strip of :prf:ref:`lem-strip` and the constants of
:prf:ref:`lem-midpoint-sum`.
"""

from __future__ import annotations

from fractions import Fraction

import flint
from flint import acb, arb

from .balls import Number, _precise, ball, softplus, with_tail
from .boxes import Cover, cover
from .laws import power_law_log_tail

_SUM_PREC = 128
"""The working precision (bits) of the lengths that :func:`power_law_tail_terms` sums: their rounding (about
1e-38, relative) stays many orders below the width that the bound on the lengths left out gives each ball."""


@_precise
def power_law_tail_terms(
    s: Number, counts: str, t: Number, u: tuple[Number, Number], first: int, last: int
) -> list[arb]:
    """Enclosures of the four expectations over positives of length >= ``first`` that :prf:ref:`thm-tail-expansion` expands.

    Power-law lengths ``pi(n) = n^(-s)/zeta(s)`` (:eq:`eq-power-law`), s > 2, with length scaling:
    ``E_+[Phi(n, k); n >= first]`` for ``Phi = l(f) = log(1 + e^(-f))``, ``sigma(-f)(1 - p)``,
    ``sigma(-f) p`` and ``sigma(-f) p (1 - p) log n``, with ``p = k n^t / (k n^t + n - k)`` and
    ``f = u_a + (u_b - u_a) p``. The lengths ``first`` to ``last`` are summed in balls (at 128 bits, with
    ``sigma(-f) = e^(-f) / (1 + e^(-f))`` from the exponential of ``l(f)``); the rest is
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
    with flint.ctx.workprec(_SUM_PREC):
        for n in range(first, last + 1):
            n_ball = arb(n)
            scaled = n_ball**t
            ks = [1] if counts == "one-b" else range(1, n + 1)
            loss_sum = miss_a_sum = miss_b_sum = miss_t_sum = arb(0)
            for k in ks:
                weighted = k * scaled
                p = weighted / (weighted + (n - k))
                exp_minus_f = (-(u_a + w * p)).exp()
                miss, not_p = exp_minus_f / (1 + exp_minus_f), 1 - p  # sigma(-f), one exponential for both terms
                miss_p = miss * p
                loss_sum += exp_minus_f.log1p()
                miss_a_sum += miss * not_p
                miss_b_sum += miss_p
                miss_t_sum += miss_p * not_p
            weight = n_ball ** (-s) if counts == "one-b" else n_ball ** (-s - 1)
            per_length = (loss_sum, miss_a_sum, miss_b_sum, miss_t_sum * n_ball.log())  # log n once per length
            sums = [a + weight * b for a, b in zip(sums, per_length, strict=True)]
    zeta_s = s.zeta()
    rest = (s.zeta(arb(last + 1))) / zeta_s
    rest_log = power_law_log_tail(last, s)
    loss_bound = softplus(-(u_a.min(u_b)))
    bounds = (loss_bound * rest, rest, rest, rest_log)
    return [with_tail(total / zeta_s, bound) for total, bound in zip(sums, bounds, strict=True)]


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
    return _terms_of_weights(1 / (1 + (-z).exp()), 1 / (1 + z.exp()), u)


@_precise
def strip_end_terms(X: Number, u: tuple[Number, Number]) -> tuple[tuple[acb, ...], tuple[acb, ...]]:
    """The four terms of :func:`strip_terms` on the two ends ``Re z >= X`` and ``Re z <= -X`` of the strip of
    :prf:ref:`lem-strip`, each end in one ball.

    For ``Re z >= X``, ``v = e^(-z)`` has ``|v| <= e^(-X)``, and ``sigma(z) = 1/(1 + v)``,
    ``sigma(-z) = v/(1 + v)``; for ``Re z <= -X`` the same with ``v = e^z`` and the two weights swapped.
    A ball containing the disk ``|v| <= e^(-X)`` then covers the whole end, whatever ``Im z``.

    Parameters
    ----------
    X : int, float, Fraction or arb
        Where the ends start, >= 0.
    u : tuple
        The output layer (u_a, u_b).

    Returns
    -------
    tuple of two tuples of acb
        Balls containing Phi_l, Phi_a, Phi_b, Phi_t at every point of the right end, then of the left.
    """
    radius = (-ball(X)).exp()
    v = acb(arb(0, radius), arb(0, radius))
    near_one, near_zero = 1 / (1 + v), v / (1 + v)
    return _terms_of_weights(near_one, near_zero, u), _terms_of_weights(near_zero, near_one, u)


def strip_certificate(u: tuple[Number, Number], ends: Number = 60, max_boxes: int = 100_000) -> Cover:
    """:prf:ref:`lem-strip` on its whole strip ``|Im z| <= r`` for one output layer, decided in balls.

    ``|Phi| <= M`` (:func:`strip_bounds`) for the four terms of :func:`strip_terms` at every z of
    the strip: the two ends ``|Re z| >= ends`` each in one ball (:func:`strip_end_terms`), and
    ``[-ends, ends] x [-r, r]`` by bisection into rectangles (:func:`~lagtheory.certified.boxes.cover`),
    each decided for the whole rectangle. The imaginary side is written ``r eta`` with eta in
    [-1, 1] and r a ball, so the rectangles cover the strip of the exact r.

    Parameters
    ----------
    u : tuple
        The output layer (u_a, u_b).
    ends : int, float or Fraction, optional
        Where the two ends start (60 by default: ``e^(-60) < 1e-26``), > 0.
    max_boxes : int, optional
        The most rectangles evaluated (100000 by default).

    Returns
    -------
    Cover
        The rectangles that decided the middle.

    Raises
    ------
    ValueError
        If an end is not decided, a rectangle exceeds M (the lemma would be false), or the
        middle is not decided within ``max_boxes``.
    """
    r = strip_half_width(ball(u[1]) - ball(u[0]))
    M = strip_bounds(u)
    for end in strip_end_terms(ends, u):
        if not all(abs(term) <= bound for term, bound in zip(end, M, strict=True)):
            raise ValueError(f"|Phi| <= M is not decided on the ends |Re z| >= {ends} of the strip at u = {u}")

    def within(balls: tuple[arb, ...], box) -> bool | None:
        sizes = [abs(term) for term in strip_terms(acb(balls[0], r * balls[1]), u)]
        if all(size <= bound for size, bound in zip(sizes, M, strict=True)):
            return True
        return False if any(size > bound for size, bound in zip(sizes, M, strict=True)) else None

    return cover(within, [(-ends, ends), (-1, 1)], scale=[1, Fraction(float(r.mid()))], max_boxes=max_boxes)


def _terms_of_weights(p: acb, q: acb, u: tuple[Number, Number]) -> tuple[acb, acb, acb, acb]:
    """Phi_l, Phi_a, Phi_b, Phi_t of :func:`strip_terms` from the weights ``p = sigma(z)`` and ``q = sigma(-z)``."""
    u_a, u_b = acb(ball(u[0])), acb(ball(u[1]))
    f = u_a + (u_b - u_a) * p
    miss = 1 / (1 + f.exp())
    return (1 + (-f).exp()).log(), miss * q, miss * p, miss * p * q


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
