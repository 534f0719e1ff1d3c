"""The logistic loss of the book (:eq:`eq-population-loss`), exact in torch.

``softplus(x) = log(1 + e^x)`` is computed as ``logaddexp(0, x)``, exact to
rounding for every x; torch's own ``softplus`` returns x itself above x = 20
(an error up to 2e-9) and is used nowhere in the package. The logistic loss of
a margin z = y f is ``softplus(-z)``.
"""

from __future__ import annotations

import torch


def softplus(x: torch.Tensor) -> torch.Tensor:
    """``log(1 + e^x)``, elementwise, exact for every x (``logaddexp(0, x)``).

    Parameters
    ----------
    x : torch.Tensor
        Any shape.

    Returns
    -------
    torch.Tensor
        The shape of ``x``.

    Examples
    --------
    >>> import torch
    >>> softplus(torch.tensor([0.0, 1000.0, -1000.0], dtype=torch.float64))
    tensor([6.9315e-01, 1.0000e+03, 0.0000e+00], dtype=torch.float64)
    """
    return torch.logaddexp(torch.zeros_like(x), x)


def logistic_loss(margins: torch.Tensor) -> torch.Tensor:
    """``l(z) = log(1 + e^(-z))`` of each margin ``z = y f``, elementwise :eq:`eq-population-loss`.

    Parameters
    ----------
    margins : torch.Tensor
        The margins ``y f``, any shape.

    Returns
    -------
    torch.Tensor
        The losses, the shape of ``margins``.
    """
    return softplus(-margins)
