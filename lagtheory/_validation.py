"""Argument checks shared by the package: each raises a ValueError that names
the argument and states the allowed range, so that bad input never turns into
a silent clamp or a NaN further down."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def as_float_array(value: Any, name: str) -> NDArray[np.float64]:
    """Return ``value`` as a float64 array, rejecting non-numeric and non-finite input.

    Parameters
    ----------
    value : object
        A number or an array of numbers.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    ndarray
        float64.

    Raises
    ------
    TypeError
        If ``value`` is a string or not numeric.
    ValueError
        If an entry is NaN or infinite.
    """
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a number or an array of numbers, got {type(value).__name__}")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}") from error
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite (no NaN or infinity), got {value!r}")
    return array


def check_lengths(n: NDArray[np.float64], name: str = "n") -> None:
    """Lengths are whole numbers n >= 1.

    Parameters
    ----------
    n : ndarray
        float64 lengths.
    name : str, optional
        The argument's name, for the error message.

    Raises
    ------
    ValueError
        If a length is < 1 or not a whole number.
    """
    if np.any(n < 1):
        raise ValueError(f"{name} must be >= 1 (a string length), got min {np.min(n)!r}")
    if np.any(n != np.floor(n)):
        raise ValueError(f"{name} must be a whole number (a string length), got {n[n != np.floor(n)].ravel()[0]!r}")


def check_counts(k: NDArray[np.float64], n: NDArray[np.float64], name: str = "k") -> None:
    """Token counts are whole numbers with 0 <= k <= n.

    Parameters
    ----------
    k : ndarray
        float64 counts.
    n : ndarray
        float64 lengths, broadcast against ``k``.
    name : str, optional
        The argument's name, for the error message.

    Raises
    ------
    ValueError
        If a count is outside [0, n] or not a whole number.
    """
    if np.any(k < 0) or np.any(k > n):
        raise ValueError(f"{name} must satisfy 0 <= {name} <= n (a count of b's in a string of length n)")
    if np.any(k != np.floor(k)):
        raise ValueError(f"{name} must be a whole number (a count of b's)")


def check_scaling(scaling: str) -> None:
    """The attention scores are scaled by log n ("log") or not ("none").

    Parameters
    ----------
    scaling : str
        "log" or "none".

    Raises
    ------
    ValueError
        If ``scaling`` is neither.
    """
    if scaling not in ("log", "none"):
        raise ValueError(f"scaling must be 'log' or 'none', got {scaling!r}")


def check_positive(value: float, name: str) -> float:
    """A strictly positive finite float (tolerances, step sizes).

    Parameters
    ----------
    value : float
        The value checked.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    TypeError
        If ``value`` is a bool or not a real number.
    ValueError
        If it is not finite and > 0.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def check_parameter_vector(value: Any, name: str, size: int = 2) -> NDArray[np.float64]:
    """A finite parameter vector of the given size, ordered (a, b).

    Parameters
    ----------
    value : object
        The vector.
    name : str
        The argument's name, for the error message.
    size : int, optional
        Its required length.

    Returns
    -------
    ndarray
        float64 (size,).

    Raises
    ------
    TypeError
        If ``value`` is not numeric.
    ValueError
        If it is not finite or not of shape (size,).
    """
    array = as_float_array(value, name)
    if array.shape != (size,):
        raise ValueError(f"{name} must be a vector of length {size} ordered (a, b), got shape {array.shape}")
    return array


def check_probability(value: float, name: str) -> float:
    """A probability strictly between 0 and 1.

    Parameters
    ----------
    value : float
        The value checked.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If it is not in (0, 1).
    """
    value = check_positive(value, name)
    if value >= 1:
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {value!r}")
    return value


def check_integer(value: Any, name: str, minimum: int) -> int:
    """A Python or numpy integer (not a bool) >= minimum, returned as int.

    Parameters
    ----------
    value : object
        The value checked.
    name : str
        The argument's name, for the error message.
    minimum : int
        The smallest allowed value.

    Returns
    -------
    int
        ``value`` as an int.

    Raises
    ------
    TypeError
        If ``value`` is not an integer (or is a bool).
    ValueError
        If it is below ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)
