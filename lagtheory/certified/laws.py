"""The length laws :eq:`eq-geometric`, :eq:`eq-power-law` and the count laws of :prf:ref:`def-data` in balls (the setting chapter).

Probability masses, exact tails (Hurwitz zeta for power laws) and upper bounds of the
log-weighted tails :eq:`eq-tail-bound`, which the truncated sums of the other modules add to their
radii.
"""

from __future__ import annotations

from collections.abc import Callable

from flint import arb

from .balls import Number, ball


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
