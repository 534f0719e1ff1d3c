"""How the book prints a checked number, so that its stored outputs hold on any machine.

NumPy, MKL and libm pick their floating-point kernels by CPU, so the last bits of
a float64 result differ between machines. A stored output that shows those bits
(a rounding-level gap such as ``6.7e-16``, a bare ``repr``) encodes the machine
that ran it, and nbval fails on the next one. The rules (the *Contributing* page,
"Print what a check guarantees"):

* a quantity checked against a bound is printed as the bound it meets,
  ``below("|autograd - closed form|", gap, 1e-12)`` -> ``"|autograd - closed form| < 1e-12"``;
* a computed constant is printed with the digits its error bound supports,
  ``supported(0.2558427881103, 1e-13)`` -> ``"0.25584279"`` (never more than 8);
* a statistic of random draws (a mean, a standard deviation, a rate, an interval end, a
  p-value) is printed with at most 4 significant digits, ``statistic(0.40372312)`` -> ``"0.4037"``:
  its sampling error is far larger than the digits left out;
* an exact zero that is the point of a statement stays ``0.0``;
* a float glued into the prose is glued rounded, ``glue("t1", rounded(t1, 8))``
  (myst-nb stores the value's repr).

``tests/test_stored_outputs.py`` enforces the rules on every stored output.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_float_array, check_integer, check_positive

MAX_DIGITS = 8
"""The most significant digits a stored output may show (float64 carries about 16; the
last ones vary between CPUs, and eight leave a margin of about 1e-8 relative error, far
above any difference between floating-point kernels)."""

STATISTIC_DIGITS = 4
"""The most significant digits a statistic of random draws may show."""


def below(what: str, value: ArrayLike, bound: float) -> str:
    """Assert ``max |value| < bound`` and return ``"<what> < <bound>"`` (``"< <bound>"`` if
    ``what`` is empty, for a table column).

    ``value`` is a number or an array (its largest absolute entry is tested);
    ``bound`` > 0 is printed with one significant digit (``1e-12``, ``5e-10``), so it
    must have one: ``3e-12`` is fine, ``3.5e-12`` is refused. Raises AssertionError,
    naming ``what`` and the offending value, if the bound is not met.

    Parameters
    ----------
    what : str
        The quantity's name, printed before the bound (may be empty).
    value : array_like
        A finite number or array; its largest absolute entry is tested.
    bound : float
        The bound, finite and > 0, with one significant digit.

    Returns
    -------
    str
        ``"<what> < <bound>"``.

    Raises
    ------
    AssertionError
        Naming ``what`` and the offending value, if the bound is not met.
    ValueError
        If ``bound`` is not > 0 with one significant digit, or ``value`` is not finite.
    TypeError
        If ``value`` or ``bound`` is not numeric.
    """
    bound = check_positive(bound, "bound")
    shown = f"{bound:.0e}"
    if float(shown) != bound:
        raise ValueError(f"bound must have one significant digit (such as 1e-12 or 5e-10), got {bound!r}")
    worst = float(np.max(np.abs(as_float_array(value, "value"))))
    if not worst < bound:
        raise AssertionError(f"{what}: {worst:.3e} is not below {shown}")
    return f"{what} < {shown}" if what else f"< {shown}"


def significant(value: float, digits: int) -> str:
    """``value`` rounded to ``digits`` significant digits (1 <= digits <= 8), in fixed or
    scientific notation as Python's ``g`` format chooses (``significant(0.25584, 3)`` ->
    ``"0.256"``).

    Parameters
    ----------
    value : float
        A finite number.
    digits : int
        Significant digits, an integer in 1..8.

    Returns
    -------
    str
        The rounded value.

    Raises
    ------
    ValueError
        If ``digits`` is out of range or ``value`` is not finite.
    TypeError
        If ``digits`` is not an integer or ``value`` not a number.
    """
    digits = check_integer(digits, "digits", 1)
    if digits > MAX_DIGITS:
        raise ValueError(f"digits must be an integer in 1..{MAX_DIGITS}, got {digits!r}")
    value = float(as_float_array(value, "value"))
    return f"{value:.{digits}g}"


def rounded(value: float, digits: int) -> float:
    """``value`` rounded to ``digits`` significant digits (1 <= digits <= 8), as a float whose
    repr shows no more: for ``myst_nb.glue``, which stores the repr of the value it is given.

    Parameters
    ----------
    value : float
        A finite number.
    digits : int
        Significant digits, an integer in 1..8.

    Returns
    -------
    float
        The rounded value.

    Raises
    ------
    ValueError
        If ``digits`` is out of range or ``value`` is not finite.
    TypeError
        If ``digits`` is not an integer or ``value`` not a number.
    """
    return float(significant(value, digits))


def supported(value: float, error: float) -> str:
    """``value`` with the significant digits that an absolute error bound ``error`` > 0
    supports: every digit shown is at least ten times the error, at most 8 digits, at
    least 1 (``supported(0.2558427881103, 1e-13)`` -> ``"0.25584279"``,
    ``supported(1.7606, 1e-3)`` -> ``"1.76"``).

    Parameters
    ----------
    value : float
        A finite number.
    error : float
        Its absolute error bound, finite and > 0.

    Returns
    -------
    str
        The value with the supported digits (``"0"`` for 0).

    Raises
    ------
    ValueError
        If ``error`` is not finite and > 0 or ``value`` is not finite.
    TypeError
        If ``error`` or ``value`` is not a number.
    """
    error = check_positive(error, "error")
    value = float(as_float_array(value, "value"))
    if value == 0:
        return "0"
    # the last digit shown has place value 10^(e - d + 1), e the leading exponent; keep it >= 10 error
    leading = math.floor(math.log10(abs(value)))
    digits = leading - math.ceil(math.log10(10 * error)) + 1
    return significant(value, min(MAX_DIGITS, max(1, digits)))


def statistic(value: float) -> str:
    """A statistic of random draws (mean, standard deviation, rate, interval end, p-value)
    with ``STATISTIC_DIGITS`` = 4 significant digits (``statistic(0.40372312)`` -> ``"0.4037"``);
    glue one with ``rounded(value, 4)``.

    Parameters
    ----------
    value : float
        A finite number.

    Returns
    -------
    str
        The value with 4 significant digits.

    Raises
    ------
    ValueError
        If ``value`` is not finite.
    """
    return significant(value, STATISTIC_DIGITS)
