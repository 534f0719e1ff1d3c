"""The representation chapter in balls: the pooled weight (:prf:ref:`lem-pooling`), the population
loss and gradient (:prf:ref:`lem-gradients`) and unscaled softmax (:prf:ref:`prop-unscaled`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from .balls import Number, _precise, ball, floor_certified, sigmoid, softplus, with_tail


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
    return _weight_of_power(n, k, n ** (-ball(t)))


def _weight_of_power(n: arb, k: int, power: arb) -> arb:
    """:func:`pooled_weight` from ``power`` = ``n^(-t)``: ``1 / (1 + (n - k) n^(-t) / k)`` (a sum over k takes the
    power once per length)."""
    return 1 / (1 + (n - k) * power / k)


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
        ``tail_log(N)`` >= sum_{n > N} pi(n) log n (:func:`~lagtheory.certified.laws.geometric_log_tail`, :func:`~lagtheory.certified.laws.power_law_log_tail`).
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
    w, one = u_b - u_a, arb(1)
    sums = [arb(0)] * 4  # E_+[l(f)], E_+[sigma(-f)(1 - p)], E_+[sigma(-f) p], E_+[sigma(-f) log(n) p (1 - p)]
    for n in range(1, terms + 1):
        n_ball = arb(n)
        log_n, power = n_ball.log(), n_ball ** (-t)
        loss_sum = miss_a_sum = miss_b_sum = miss_t_sum = arb(0)
        for k in [1] if kappa is None else range(1, n + 1):
            p = _weight_of_power(n_ball, k, power)
            not_f = -(u_a + w * p)
            miss, not_p = sigmoid(not_f), 1 - p
            weight = one if kappa is None else kappa(n, k)
            loss_sum += weight * softplus(not_f)
            miss_a_sum += weight * (miss * not_p)
            miss_b_sum += weight * (miss * p)
            miss_t_sum += weight * (miss * log_n * p * not_p)
        mass = pmf(n)
        sums = [a + mass * b for a, b in zip(sums, (loss_sum, miss_a_sum, miss_b_sum, miss_t_sum), strict=True)]
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
