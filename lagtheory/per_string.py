"""The per-string terms of the population sums as functions of the log-odds z of the
pooled weight (:eq:`eq-pooled-weight`, p = sigma(z)).

A positive string with log-odds z has output f = u_a (1 - p) + u_b p and contributes

    loss:    softplus(-f)                       :eq:`eq-population-loss`
    d/du_a:  sigma(-f) (1 - p)   (times -prior)  :eq:`eq-grad-u`
    d/du_b:  sigma(-f) p         (times -prior)  :eq:`eq-grad-u`
    d/dt:    sigma(-f) p (1 - p) (times -prior w s(n))  :eq:`eq-grad-t`

to the expectations over positives. ``z`` may be real (with z = -inf for no b and
z = +inf for all b's) or complex (the tail expansion evaluates the terms on circles in the
complex plane, book :prf:ref:`thm-tail-expansion`); every function here is analytic on the strip
``|Im z| <= min(pi/2, pi/|u_b - u_a|)`` (book :prf:ref:`lem-strip`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit


def sigmoid(z: NDArray) -> NDArray:
    """sigma(z) = 1 / (1 + e^(-z)) for real or complex z.

    Parameters
    ----------
    z : ndarray
        Real, or complex with ``|Im z| < pi/2`` (any Re z).

    Returns
    -------
    ndarray
        sigma(z), the shape and kind of ``z``.
    """
    if not np.iscomplexobj(z):
        return expit(z)
    out = np.empty_like(z)
    right = z.real >= 0
    out[right] = 1 / (1 + np.exp(-z[right]))
    e = np.exp(z[~right])
    out[~right] = e / (1 + e)
    return out


def softplus(x: NDArray) -> NDArray:
    """log(1 + e^x), stable for large ``|Re x|``.

    Parameters
    ----------
    x : ndarray
        Real, or complex with ``|Im x| < pi/2`` (principal branch).

    Returns
    -------
    ndarray
        log(1 + e^x), the shape and kind of ``x``.
    """
    if not np.iscomplexobj(x):
        return np.logaddexp(0.0, x)
    out = np.empty_like(x)
    right = x.real > 0
    out[right] = x[right] + np.log1p(np.exp(-x[right]))
    out[~right] = np.log1p(np.exp(x[~right]))
    return out


def per_string_terms(
    z: NDArray, u_a: float, u_b: float, scale: NDArray | float = 1.0
) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """The four per-string terms at log-odds ``z``: the loss and the three gradient terms.

    p and 1 - p are both formed from z so that neither cancels.

    Parameters
    ----------
    z : ndarray
        Log-odds of the pooled weight, real or complex (see the module docstring).
    u_a, u_b : float
        The output layer.
    scale : ndarray or float, optional
        s(n): log n, or 1 without length scaling.

    Returns
    -------
    tuple of ndarray
        ``(softplus(-f), sigma(-f) (1 - p), sigma(-f) p, sigma(-f) s p (1 - p))`` with
        ``f = u_a (1 - p) + u_b p``.
    """
    p, q = sigmoid(z), sigmoid(-z)
    f = u_a * q + u_b * p
    miss = sigmoid(-f)
    return softplus(-f), miss * q, miss * p, miss * (scale * p * q)
