"""The three-phase chapter in balls: the constants of :prf:ref:`thm-three-phase` (phases 1, 2 and 3)
and the moments of :prf:ref:`prop-sampled-phases`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from .balls import Number, _precise, ball, floor_certified, interval, sigmoid, with_tail
from .laws import geometric_pmf, geometric_tail
from .threshold import worst_one_b_length


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
    c, w = ball(c), ball(w)
    return _geometric_log_mean(lambda n: sigmoid(-c - w / n), q, terms)


def _geometric_log_mean(bracket: Callable[[int], arb], q: Number, terms: int) -> arb:
    """``E_pi[bracket(n) log(n) (n - 1)/n^2]`` for geometric lengths :eq:`eq-geometric` and a bracket in [0, 1],
    in balls: the lengths 2..terms summed, the rest bounded by ``log(terms + 1)/(terms + 1) (1 - q)^terms``
    (``log(n)(n-1)/n^2 <= log(n)/n``, decreasing for n >= 3); the one sum of :func:`attention_factor_geometric`
    and :func:`~lagtheory.certified.generalisations.first_marker_factor_geometric`.

    Parameters
    ----------
    bracket : callable
        n -> a ball in [0, 1].
    q : int, float, Fraction or arb
        The parameter of :eq:`eq-geometric` (1 / mean), in (0, 1].
    terms : int
        The lengths summed in balls, >= 2.

    Returns
    -------
    arb
        A ball containing the expectation.

    Raises
    ------
    ValueError
        If ``terms`` < 2.
    """
    if terms < 2:
        raise ValueError(f"terms must be >= 2, got {terms!r}")
    total = arb(0)
    for n in range(2, terms + 1):
        total += geometric_pmf(n, q) * bracket(n) * arb(n).log() * (n - 1) / arb(n) ** 2
    tail = arb(terms + 1).log() / (terms + 1) * geometric_tail(terms, q)
    return with_tail(total, tail)


# Kept apart from schedules.Phase on purpose, alike in shape only (a frozen dataclass of named numbers): this
# holds the certified constants of phases 1 and 2 in balls, Phase a training phase's steps and step sizes.
@dataclass(frozen=True)
class PhaseTwo:
    """The certified constants of :prf:ref:`thm-three-phase`, phases 1 and 2 (:eq:`eq-phase1`, :eq:`eq-phase2`, :eq:`eq-boundary`).

    From :func:`phase_two` (two tokens) or :func:`~lagtheory.certified.generalisations.d_token_phase_two` (d tokens,
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
        n*, the length where ``p(n, 1; t1)`` is smallest (:func:`~lagtheory.certified.threshold.worst_one_b_length`).
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
        If n* is not decided (:func:`~lagtheory.certified.threshold.worst_one_b_length`: t1 > 1 not proved, or a tie) or the floor in
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
