"""The memory budget of the package's public calls.

A public call whose memory grows with its arguments (the strings a population sum visits, the
steps of a run, the size of a sample, a batch or a table, the shape that arrays broadcast to)
estimates the bytes it will allocate *before* it allocates them, and refuses with a
``ValueError`` when the estimate exceeds its ``memory_budget`` keyword (``MEMORY_BUDGET``,
1 GiB, by default). The message names the argument that drives the estimate and the range of it
in which the call fits, so that a call that would exhaust the machine's memory fails at once and
clearly instead of after minutes with a bare ``MemoryError``.

The estimates are upper bounds: bytes per element (a string, a step, a draw, a parameter) measured
at the peak of the call, rounded up (the constants beside each call say what they count), with
``tracemalloc`` for what numpy and Python allocate and, for torch's tensors (which ``tracemalloc``
does not see), with the growth of the resident set's peak over the call (``benchmarks/bench.py``'s
memory rows, ``tests/test_memory.py``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

MEMORY_BUDGET = 2**30
"""The default memory budget of a public call in bytes, 1 GiB, the default of the ``memory_budget``
keyword of every call that estimates its memory."""


def check_memory_budget(memory_budget: Any) -> int:
    """``memory_budget`` as a whole number of bytes, >= 1.

    Parameters
    ----------
    memory_budget : int or float
        The budget in bytes, finite and >= 1 (a float is rounded down).

    Returns
    -------
    int
        The budget.

    Raises
    ------
    TypeError
        If it is not a real number (or is a bool).
    ValueError
        If it is not finite and >= 1.
    """
    if isinstance(memory_budget, bool) or not isinstance(memory_budget, (int, float, np.integer, np.floating)):
        raise TypeError(f"memory_budget must be a number of bytes, got {type(memory_budget).__name__}")
    if not math.isfinite(memory_budget) or memory_budget < 1:
        raise ValueError(f"memory_budget must be a finite number of bytes >= 1, got {memory_budget!r}")
    return int(memory_budget)


def size_text(n_bytes: float) -> str:
    """A number of bytes to read: ``"3.5 GiB"``, ``"120 MiB"``, ``"512 B"``.

    Parameters
    ----------
    n_bytes : float
        The bytes, >= 0.

    Returns
    -------
    str
        Three significant digits and the largest binary unit that keeps the number >= 1.
    """
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{n_bytes:.3g} B"


def require_memory(needed: float, memory_budget: int, what: str, fits: str) -> None:
    """Refuse a call whose estimated memory exceeds its budget, before anything is allocated.

    Parameters
    ----------
    needed : float
        The estimated bytes (an upper bound).
    memory_budget : int
        The budget in bytes (checked by :func:`check_memory_budget`).
    what : str
        What would be allocated and the argument that drives it, e.g. ``"the exact sum over
        3.8e+07 strings (N = 8681 lengths, set by tol = 2e-05)"``.
    fits : str
        The range of that argument in which the call fits, e.g. ``"tol >= 0.0013"``.

    Raises
    ------
    ValueError
        If ``needed > memory_budget``, naming ``what``, the two sizes and ``fits``.
    """
    if needed > memory_budget:
        raise ValueError(
            f"{what} would need about {size_text(needed)}, more than memory_budget = {size_text(memory_budget)}: "
            f"it fits for {fits} (or pass a larger memory_budget)"
        )
