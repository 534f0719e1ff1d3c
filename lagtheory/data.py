"""The data distribution D of :prf:ref:`def-data`, as one checked value.

D draws a label y = +1 with probability ``prior`` (1/2 in the theorems), else y = -1; a
length n ~ pi (``lengths``); a negative is a^n; a positive has k ~ kappa(. | n) b's
(``positives``). The population sums of :eq:`eq-population-loss` are truncated at the smallest
length whose proven tail bound :eq:`eq-tail-bound` makes their error at most ``tol``, and the
sampler of :mod:`lagtheory.sampled` draws lengths within total variation ``tol`` of pi.

Every function that sums or samples D (:func:`lagtheory.population`,
:func:`lagtheory.population_gd.run_schedule`, :func:`lagtheory.sampled.run_sampled`,
:class:`lagtheory.sampled.DataSampler`, the closed forms of :mod:`lagtheory.attention_step`)
takes one :class:`Data`, checked once when it is built. ``prior`` and ``tol`` are
keyword-only: both are numbers in (0, 1) in practice, and a positional call could swap
them silently.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any

from ._validation import check_positive, check_probability
from .counts import CountDistribution, OneB, resolve_counts
from .lengths import LengthDistribution

_ONE_B = OneB()


@dataclass(frozen=True)
class Data:
    """The data distribution D of :prf:ref:`def-data` and the tolerance of its sums.

    Validated once, frozen and hashable; every population sum and sampler takes it.

    Parameters
    ----------
    lengths : LengthDistribution
        The length law pi (``Geometric(mean)``, ``PowerLaw(exponent)``).
    positives : CountDistribution or {"one-b", "uniform"}, optional
        The law kappa of the number of b's of a positive (a name is stored resolved).
    prior : float, optional
        P(y = +1), in (0, 1). Keyword only.
    tol : float, optional
        > 0: the bound on the truncation error of every population sum over D, and the mass a
        sampler may leave out. Keyword only.

    Raises
    ------
    TypeError, ValueError
        Naming the argument and its allowed range.

    Examples
    --------
    >>> from lagtheory import Data, Geometric
    >>> Data(Geometric(10), "uniform", prior=0.25)
    Data(lengths=Geometric(mean=10), positives=UniformCount(), prior=0.25, tol=1e-12)
    """

    lengths: LengthDistribution
    positives: CountDistribution = _ONE_B
    _: KW_ONLY
    prior: float = 0.5
    tol: float = 1e-12

    def __post_init__(self) -> None:
        if not isinstance(self.lengths, LengthDistribution):
            raise TypeError(
                "lengths must be a LengthDistribution such as Geometric(mean) or PowerLaw(exponent), "
                f"got {self.lengths!r}"
            )
        object.__setattr__(self, "positives", resolve_counts(self.positives))
        object.__setattr__(self, "prior", check_probability(self.prior, "prior"))
        object.__setattr__(self, "tol", check_positive(self.tol, "tol"))


def check_data(data: Any) -> Data:
    """``data`` itself if it is a :class:`Data` (checked when it was built), else a TypeError.

    Parameters
    ----------
    data : object
        The value passed as a data distribution.

    Returns
    -------
    Data
        ``data``.
    """
    if not isinstance(data, Data):
        raise TypeError(
            f"data must be a lagtheory.Data(lengths, positives, prior=..., tol=...), got {type(data).__name__}: {data!r}"
        )
    return data
