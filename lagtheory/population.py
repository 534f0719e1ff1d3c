"""The exact population loss of book eq. (eq-population-loss) and its gradients.

Data: y = +1 with probability ``prior`` (1/2 in the theorems), y = -1 otherwise;
a negative is a^n (pooled weight 0, so f = u_a whatever the length); a positive
has length n ~ pi and k ~ kappa(. | n) b's. With c = u_a, w = u_b - u_a,
t = theta_b - theta_a and p = p(n, k; t):

    L = (1 - prior) softplus(u_a) + prior E_+[softplus(-(c + w p))]
    dL/du_a = (1 - prior) sigma(u_a) - prior E_+[sigma(-f) (1 - p)]        (eq-grad-u)
    dL/du_b = - prior E_+[sigma(-f) p]                                       (eq-grad-u)
    dL/dt   = - prior w E_+[sigma(-f) s(n) p (1 - p)],  s(n) = log n        (eq-grad-t)
    dL/dtheta = (-dL/dt, dL/dt)                   (softmax shift invariance)

The expectation over positives is summed exactly over lengths n <= N, with N
the smallest length whose proven tail bound makes the truncation error of the
loss and of every gradient component at most ``tol`` (``error_bound``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from ._validation import check_parameter_vector, check_positive, check_probability, check_scaling
from .counts import CountDistribution, resolve_counts
from .lengths import LengthDistribution
from .pooling import log_odds_parts


@dataclass(frozen=True)
class Population:
    """Loss and gradients of the population objective at one (theta, u)."""

    loss: float
    grad_theta: NDArray[np.float64]
    grad_u: NDArray[np.float64]
    truncation_length: int
    error_bound: float

    @property
    def grad_t(self) -> float:
        """dL/dt, the derivative along t = theta_b - theta_a (equals grad_theta[1])."""
        return float(self.grad_theta[1])


def _softplus(x: NDArray[np.float64] | float) -> NDArray[np.float64]:
    """log(1 + e^x), stable for large |x|."""
    return np.logaddexp(0.0, x)


def truncation_for(lengths: LengthDistribution, u: NDArray[np.float64], prior: float, tol: float) -> int:
    """Truncation length N for which every truncated term of (eq-population-loss) and its
    gradients is at most ``tol`` (book eq. eq-tail-bound).

    Per positive string: the loss is at most softplus(max|u|) (|f| <= max|u| since f is a
    convex combination of u_a and u_b); each |d/du| term is at most 1; the d/dt term is
    at most |w| log(n) / 4 since p (1 - p) <= 1/4.
    """
    per_string_loss = float(_softplus(max(abs(u[0]), abs(u[1]))))
    mass_factor = prior * max(per_string_loss, 1.0)
    log_factor = prior * abs(u[1] - u[0]) / 4.0
    log_tol = tol / log_factor if log_factor > 0 else math.inf
    return lengths.truncation_length(tol / mass_factor, log_tol)


def population(
    theta: ArrayLike,
    u: ArrayLike,
    lengths: LengthDistribution,
    positives: str | CountDistribution = "one-b",
    tol: float = 1e-12,
    prior: float = 0.5,
    scaling: str = "log",
) -> Population:
    """Exact population loss and gradients in the original coordinates (theta, u).

    ``theta`` and ``u`` are length-2 vectors ordered (a, b); ``lengths`` a
    LengthDistribution (Geometric, PowerLaw); ``positives`` "one-b", "uniform" or
    a CountDistribution; ``tol`` > 0 bounds the truncation error of every output;
    ``prior`` in (0, 1) is P(y = +1); ``scaling`` "log" or "none".
    """
    theta = check_parameter_vector(theta, "theta")
    u = check_parameter_vector(u, "u")
    if not isinstance(lengths, LengthDistribution):
        raise TypeError(
            f"lengths must be a LengthDistribution such as Geometric(mean) or PowerLaw(exponent), got {lengths!r}"
        )
    counts = resolve_counts(positives)
    tol = check_positive(tol, "tol")
    prior = check_probability(prior, "prior")
    check_scaling(scaling)
    return population_trusted(theta, u, lengths, counts, tol, prior, scaling)


def population_trusted(
    theta: NDArray[np.float64],
    u: NDArray[np.float64],
    lengths: LengthDistribution,
    counts: CountDistribution,
    tol: float,
    prior: float,
    scaling: str,
) -> Population:
    """:func:`population` without argument checks: the trusted inner path of the training
    loops, which check their arguments once. ``theta`` and ``u`` are finite float64 vectors
    of length 2, the other arguments already validated and resolved."""
    N = truncation_for(lengths, u, prior, tol)
    weight, base, scale = _length_table(lengths, counts, N, scaling)

    t = theta[1] - theta[0]
    w = u[1] - u[0]
    z = base + t * scale  # log-odds of p (eq-pooled-weight)
    p, q = expit(z), expit(-z)  # h = (1 - p, p), both from the log-odds
    f = u[0] * q + u[1] * p
    miss = expit(-f)  # sigma(-f): the logistic loss derivative at a positive

    loss = (1 - prior) * float(_softplus(u[0])) + prior * float(weight @ _softplus(-f))
    grad_ua = (1 - prior) * float(expit(u[0])) - prior * float(weight @ (miss * q))
    grad_ub = -prior * float(weight @ (miss * p))
    grad_t = -prior * w * float(weight @ (miss * (scale * p * q)))  # dp/dt = s(n) p (1 - p) (eq-dp-dt)
    return Population(
        loss=loss,
        grad_theta=np.array([-grad_t, grad_t]) + 0.0,  # + 0.0: no signed zero
        grad_u=np.array([grad_ua, grad_ub]),
        truncation_length=N,
        error_bound=tol,
    )


@lru_cache(maxsize=64)
def _length_table(
    lengths: LengthDistribution, counts: CountDistribution, N: int, scaling: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per string (n, k), n <= N: the weight pi(n) kappa(k | n) and the two parts of the log-odds
    (``pooling.log_odds_parts``). Cached: a training run asks for the same table at every step."""
    n, k, kappa = counts.table(np.arange(1, N + 1, dtype=np.int64))
    base, scale = log_odds_parts(n, k, scaling)
    tables = (lengths.pmf(n) * kappa, base, scale)
    for table in tables:
        table.setflags(write=False)
    return tables
