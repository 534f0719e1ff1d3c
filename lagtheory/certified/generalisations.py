"""The generalisations chapter in balls: d tokens (:prf:ref:`prop-d-tokens`), several b's
(:eq:`eq-lower-several-b`), the ReLU readout (:prf:ref:`prop-ffn-symmetric`) and FIRST
(:prf:ref:`prop-first`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from .balls import Number, _precise, ball, relu, sigmoid, softplus, with_tail
from .representation import one_b_weight
from .three_phase import PhaseTwo, _geometric_log_mean, attention_factor_geometric, mean_b_fraction_geometric
from .threshold import worst_one_b_length


@_precise
def d_token_phase_two(d: int, eta1: Number, eta2: Number, q: Number, terms: int = 1000) -> PhaseTwo:
    """The constants of :prf:ref:`prop-d-tokens` (c) for d tokens, one b, geometric lengths, in balls.

    ``m`` (:eq:`eq-phase1`), ``c1 = -eta1 m / (4 (d - 1))``, ``w1 = eta1 m d / (4 (d - 1))``, ``G`` of
    :eq:`eq-phase2` at (c1, c1 + w1), ``t1 = eta2 d / (d - 1) w1 / 2 G`` and ``eta2_star``
    ``= 2 (d - 1) / (d w1 G)``, the eta2 that gives t1 = 1. For d = 2 these are :func:`~lagtheory.certified.three_phase.phase_two`'s.

    Parameters
    ----------
    d : int
        The vocabulary size, a whole number >= 2.
    eta1, eta2 : int, float, Fraction or arb
        The step sizes of phases 1 and 2.
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean).
    terms : int, optional
        The lengths summed in balls for G (:func:`~lagtheory.certified.three_phase.attention_factor_geometric`).

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
class SeveralBCertificate:
    """The two sides of :eq:`eq-lower-several-b` at one instance, from :func:`several_b_certificate`.

    A certified lower bound of L(0, u) (a truncated sum of its non-negative terms) and a certified
    upper bound of ``1/2 log 2 sum_{n > N} pi_+(n)``.

    Attributes
    ----------
    horizon : int
        N, at most the horizon N(0, u).
    loss_lower : arb
        An exact ball at or below L(0, u): the lower end of ``loss_ball``.
    bound_upper : arb
        An exact ball at or above ``1/2 log 2 sum_{n > N} pi_+(n)``: the upper end of ``bound_ball``.
    loss_ball : arb
        A ball containing the truncated sum of L(0, u) (its negatives and its positives with
        n <= ``loss_terms``), which is at most L(0, u): a chapter checks that it contains the same
        sum evaluated independently.
    bound_ball : arb
        A ball containing ``1/2 log 2 sum_{n > N} pi_+(n)`` (the terms up to ``bound_terms`` and
        ``[0, one_b_tail]`` for the rest).
    """

    horizon: int
    loss_lower: arb
    bound_upper: arb
    loss_ball: arb
    bound_ball: arb

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
        ``kappa(n, k)`` = ``kappa(k | n)`` as a ball (:func:`~lagtheory.certified.laws.kappa_uniform`, :func:`~lagtheory.certified.laws.kappa_binomial`).
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
    rows = _positive_rows if u_a.is_exact() and u_b.is_exact() else _positive_rows.__wrapped__
    positives = arb(0)
    for n, inner in enumerate(rows(u_a, u_b, kappa, loss_terms), start=1):
        positives += pmf(n) * inner
    loss_ball = (softplus(u_a) + positives) / 2
    loss_lower = loss_ball.lower()
    beyond = arb(0)
    for n in range(horizon + 1, bound_terms + 1):
        beyond += one_b(n)
    bound_ball = arb(2).log() / 2 * with_tail(beyond, one_b_tail(bound_terms))
    bound_upper = bound_ball.upper()
    return SeveralBCertificate(horizon, arb(loss_lower), arb(bound_upper), loss_ball, bound_ball)


@functools.lru_cache(maxsize=64)
def _positive_rows(u_a: arb, u_b: arb, kappa: Callable[[int, int], arb], loss_terms: int) -> tuple[arb, ...]:
    """``sum_k kappa(k | n) sp(-(u_a (1 - k/n) + u_b k/n))`` over 1 <= k <= n, for each n <= ``loss_terms``, in balls
    (the positives of :func:`several_b_certificate` before the length law weighs them). Cached by the exact balls'
    values and the count law, so that certificates at the same output layer and counts under several length
    laws sum the rows once; a box of output layers (inexact balls, which do not hash) calls the function itself."""
    rows = []
    for n in range(1, loss_terms + 1):
        inner = arb(0)
        for k in range(1, n + 1):
            share = Fraction(k, n)
            inner += kappa(n, k) * softplus(-(u_a * ball(1 - share) + u_b * ball(share)))
        rows.append(inner)
    return tuple(rows)


@dataclass(frozen=True)
class ReluCertificate:
    """The piecewise-linear certificate of recognition for a ReLU readout g(p) on h = (1 - p, p) at t > 1
    (:prf:ref:`prop-ffn-symmetric` (c)).

    Attributes
    ----------
    negative : arb
        g(0), the output of every negative.
    n_star : int
        The length of the hardest positive, :func:`~lagtheory.certified.threshold.worst_one_b_length` (t).
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
    :func:`~lagtheory.certified.threshold.worst_one_b_length`) and every negative p = 0; g is linear between the kinks
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
    ``g_s(n) = (n - 1) n^(-s)``, attained where g_s is largest, at n* = :func:`~lagtheory.certified.threshold.worst_one_b_length` (s);
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
    :func:`~lagtheory.certified.three_phase.attention_factor_geometric`, ``log(terms + 1)/(terms + 1) (1 - q)^terms``.

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
    c, w = ball(c), ball(w)

    def bracket(n: int) -> arb:
        inner = arb(0)
        for j in range(n):
            share = Fraction(j, n - 1)
            inner += arb(n - 1).bin(j) * (
                sigmoid(-(c + w * (1 + j) / n)) * ball(1 - share) + sigmoid(c + w * j / n) * ball(share)
            )
        return inner / arb(2) ** (n - 1)

    return _geometric_log_mean(bracket, q, terms)
