"""The failures chapter in balls: the constants of :prf:ref:`thm-one-step` (Gamma, Lambda(t), the
recovery bounds and the small-sigma success probability).
"""

from __future__ import annotations

from flint import arb

from .balls import Number, _precise, ball, with_tail
from .laws import geometric_pmf, geometric_tail


@_precise
def gamma_geometric(q: Number, terms: int = 1000) -> arb:
    """``Gamma = E_pi[log(n) (n - 1)/n^2]`` of :prf:ref:`thm-one-step` (b), one b, geometric lengths, in balls.

    Gamma = 2 G(0) (:func:`~lagtheory.certified.three_phase.attention_factor_geometric`), with the same tail bound.

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
