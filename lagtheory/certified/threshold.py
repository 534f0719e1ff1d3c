"""The threshold chapter in balls (:prf:ref:`thm-threshold`): the odds g_t, the worst length n*,
the horizon and its certificate, and the loss bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flint import arb

from .balls import PREC, Number, _precise, ball, floor_certified, softplus, with_tail
from .boxes import Cover, cover
from .laws import geometric_pmf, geometric_tail
from .representation import one_b_weight


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

    ``L = 1/2 sp(u_a) + 1/2 sum_n pi(n) sp(-f(n))`` with ``sp(x) = log(1 + e^x)`` (:func:`~lagtheory.certified.balls.softplus`),
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
        If the ball of r/2 straddles an integer (:func:`~lagtheory.certified.balls.floor_certified`).
    """
    r = ball(r)
    return (-r).exp() + (r + arb(2).log()) / 2 * (1 - ball(q)) ** floor_certified(r / 2, "r/2")


def margin_certificate(t_low: Number, t_high: Number, max_boxes: int = 100_000) -> Cover:
    """:prf:ref:`thm-threshold` (b) on a whole interval of t: for every t in [t_low, t_high], 1 < t_low,
    every positive of ``u = s(-1, 3)`` has ``f > s``, decided in balls.

    The smallest output over the positives, divided by s, is ``4 p(n*, 1; t) - 1`` with n* the
    worst length (:func:`worst_one_b_length`; ``k`` b's only raise p), and n* is the floor or the
    ceiling of ``t/(t - 1)``, which decreases in t. On a box of t the candidates are the integers
    from the floor of the ball of ``t/(t - 1)`` over the box to its ceiling, and
    ``4 p(n, 1; t) - 2 > 0`` is decided for each over the whole box (:func:`~lagtheory.certified.representation.one_b_weight` with a
    ball of t); a box with more than 4 candidates, or one not decided, is cut in two.

    Parameters
    ----------
    t_low, t_high : int, float or Fraction
        The interval, 1 < t_low <= t_high.
    max_boxes : int, optional
        The most boxes evaluated (100000 by default).

    Returns
    -------
    Cover
        The boxes that decided it.

    Raises
    ------
    ValueError
        If 1 < t_low <= t_high does not hold, a box is proved to fail, or the interval is not
        decided within ``max_boxes``.
    """
    if not 1 < t_low <= t_high:
        raise ValueError(f"margin_certificate needs 1 < t_low <= t_high, got {t_low!r}, {t_high!r}")

    def margin_exceeds(balls: tuple[arb, ...], box) -> bool | None:
        t = balls[0]
        peak = t / (t - 1)
        lowest, highest = int(peak.lower().floor().unique_fmpz()), int(peak.upper().ceil().unique_fmpz())
        if highest - lowest > 4:
            return None
        excess = [4 * one_b_weight(n, t) - 2 for n in range(max(1, lowest), highest + 1)]
        if all(value > 0 for value in excess):
            return True
        return False if any(value < 0 for value in excess) else None

    return cover(margin_exceeds, [(t_low, t_high)], max_boxes=max_boxes)


def loss_bound_certificate(r_low: Number, r_high: Number, q: Number, max_boxes: int = 100_000) -> Cover:
    """:prf:ref:`thm-threshold` (c) on a whole interval of r: ``L(0, (-r, r^2)) < e^(-r) + (r + log 2)/2
    (1 - q)^floor(r/2)`` for every r in [r_low, r_high], one b and geometric lengths, decided in balls.

    On a box of r the loss is enclosed by :func:`loss_geometric_one_b` at the ball of r (the lengths
    up to ``30 + r_high / 2`` of the box summed in balls, the rest bounded), and the bound, which
    increases with r through ``r + log 2`` and decreases with ``floor(r/2)``, is at least its value
    with r_low in the first place and r_high in the others; a box where the loss ball is not below
    that is cut in two.

    Parameters
    ----------
    r_low, r_high : int, float or Fraction
        The interval, 0 < r_low <= r_high.
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1).
    max_boxes : int, optional
        The most boxes evaluated (100000 by default).

    Returns
    -------
    Cover
        The boxes that decided it.

    Raises
    ------
    ValueError
        If 0 < r_low <= r_high does not hold, a box is proved to fail, or the interval is not
        decided within ``max_boxes``.
    """
    if not 0 < r_low <= r_high:
        raise ValueError(f"loss_bound_certificate needs 0 < r_low <= r_high, got {r_low!r}, {r_high!r}")
    q, log2 = ball(q), arb(2).log()

    def below_bound(balls: tuple[arb, ...], box) -> bool | None:
        r = balls[0]
        ((low, high),) = box
        loss = loss_geometric_one_b(0, (-r, r * r), q, terms=30 + math.ceil(high / 2))
        bound = (-ball(high)).exp() + (ball(low) + log2) / 2 * (1 - q) ** floor_certified(ball(high) / 2, "r/2")
        return True if loss < bound else None

    return cover(below_bound, [(r_low, r_high)], max_boxes=max_boxes)
