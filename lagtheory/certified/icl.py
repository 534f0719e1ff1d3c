"""The empirical ICL chapter's closed forms as exact rationals: the optimal one-step size and the
mean error of one-step gradient descent over context sizes.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from .._validation import check_integer


def icl_optimal_step(dim: int, min_context: int, max_context: int) -> Fraction:
    """The optimal step ``eta* = 1 / (1 + (D + 1) E[1/m])`` for m uniform on min_context..max_context, exactly.

    The empirical ICL chapter's closed form, as a rational number: the minimiser of
    :func:`icl_mean_error` over the training sizes.

    Parameters
    ----------
    dim : int
        D, the input dimension, a whole number >= 1.
    min_context, max_context : int
        The smallest and largest context size m of training, whole numbers with
        1 <= min_context <= max_context.

    Returns
    -------
    Fraction
        eta*.

    Raises
    ------
    ValueError
        If ``dim`` or ``min_context`` is not a whole number >= 1, or ``max_context`` is not a whole
        number >= ``min_context``.
    """
    if not (isinstance(dim, int) and dim >= 1 and isinstance(min_context, int) and min_context >= 1):
        raise ValueError("dim and min_context must be whole numbers >= 1")
    if not (isinstance(max_context, int) and max_context >= min_context):
        raise ValueError(f"max_context must be a whole number >= min_context, got {max_context!r}")
    sizes = range(min_context, max_context + 1)
    mean_inverse = sum(Fraction(1, m) for m in sizes) / len(sizes)
    return 1 / (1 + (dim + 1) * mean_inverse)


def icl_mean_error(step: Fraction, dim: int, sizes: Iterable[int]) -> Fraction:
    """The mean over m uniform on ``sizes`` of ``eta^2 (1 + (D+1)/m) - 2 eta + 1``, exactly.

    The population mean squared error of the one-step gradient-descent prediction ``eta g^T x_q`` at
    context size m (the empirical ICL chapter's closed form), averaged over the sizes.

    Parameters
    ----------
    step : Fraction
        eta (an int also works).
    dim : int
        D, the input dimension, >= 1.
    sizes : iterable of int
        The context sizes m, at least one, each >= 1.

    Returns
    -------
    Fraction
        The mean error.

    Raises
    ------
    ValueError
        If ``dim`` or a size is not an integer >= 1, or ``sizes`` is empty.
    """
    dim = check_integer(dim, "dim", 1)
    sizes = [check_integer(m, "sizes", 1) for m in sizes]
    if not sizes:
        raise ValueError("sizes must hold at least one context size")
    return sum(step**2 * (1 + Fraction(dim + 1, m)) - 2 * step + 1 for m in sizes) / len(sizes)
