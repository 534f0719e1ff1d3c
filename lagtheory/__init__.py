"""lagtheory: the helper package of the book *Attention learning can lag
output-layer learning*.

The public names below are the ones the book documents; each module holds one
mathematical object (see the API page of the book). The modules::

    data.py               the data distribution D, one checked value
    lengths.py            length distributions on {1, 2, ...} with tail bounds
    counts.py             distributions of the number of b's in a positive string
    dfa.py                deterministic finite automata
    languages.py          the book's languages as minimal DFAs (every DFA of the package)
    star_free.py          star-freeness certificates (Schutzenberger's theorem)
    model.py              the shallow transformer, in torch
    count_forward.py      its count path as functions: score factor, pooled vector, linear readout
    pooling.py            the pooled weight of the attention layer on b
    per_string.py         the per-string terms of the population sums
    population.py         the exact population loss and its gradients
    heavy_tail.py         population sums over power-law lengths, the tail as an integral
    count_tails.py        each count law's pieces of that integral (its surrogate and bounds)
    count_table.py        the population loss of the torch model as a table of token counts
    exact_recognition.py  exact recognition of CONTAINS_B at every length
    losses.py             the logistic loss, exact in torch
    attention_step.py     closed forms of the three-phase schedule's first steps
    schedules.py          training schedules as sequences of phases
    training.py           the one training loop, and its optimisers
    population_gd.py      gradient descent on the exact population loss
    sampled.py            the schedules by mini-batch SGD on sampled strings
    symbolic.py           the sympy objects the chapters manipulate
    reporting.py          how a checked number is printed
    layout.py             how a cell's printed output is laid out
    palette.py            the colours every figure takes
    memory.py             the memory budget of the public calls: estimate before allocating, refuse with a named argument
    _validation.py        argument checks that name the argument and its range
    certified/            ball-arithmetic forms of the closed forms, one module per chapter
    experiments/          the experiments of the empirical chapters, one subpackage per job

The torch model's names (``ShallowTransformer``, ``initialise``, ``to_reduced``) are loaded on first use
(:func:`__getattr__`, PEP 562): ``from lagtheory import ShallowTransformer`` works as before, and
``import lagtheory`` with the modules that need no torch (the distributions, the population sums, the languages)
loads without it (about 1.3 s of CPU).

The package's version is written once, in ``pyproject.toml``; ``__version__`` reads it from the
installed package's metadata (``CITATION.cff`` and ``CHANGELOG.md`` quote it).
"""

from importlib import import_module, metadata
from typing import Any

from .counts import BinomialCount, CountDistribution, OneB, UniformCount
from .data import Data
from .dfa import DFA
from .exact_recognition import Recognition, recognition
from .languages import LANGUAGES
from .lengths import Geometric, LengthDistribution, PowerLaw
from .pooling import pooled_log_odds, pooled_weight, pooled_weight_dt
from .population import Population, population
from .star_free import StarFreeCertificate, is_star_free

__all__ = [
    "DFA",
    "LANGUAGES",
    "BinomialCount",
    "CountDistribution",
    "Data",
    "Geometric",
    "LengthDistribution",
    "OneB",
    "Population",
    "PowerLaw",
    "Recognition",
    "ShallowTransformer",
    "StarFreeCertificate",
    "UniformCount",
    "initialise",
    "is_star_free",
    "pooled_log_odds",
    "pooled_weight",
    "pooled_weight_dt",
    "population",
    "recognition",
    "to_reduced",
]

__version__ = metadata.version("lagtheory")

_TORCH_NAMES = {"ShallowTransformer": "model", "initialise": "model", "to_reduced": "model"}
"""Public name -> the module that holds it, for the names whose module imports torch (loaded on first use)."""


def __getattr__(name: str) -> Any:
    """The public name ``name`` of a module that imports torch, imported on first use (PEP 562).

    Parameters
    ----------
    name : str
        The attribute asked for; one of ``_TORCH_NAMES``, any other raises ``AttributeError``.
    """
    if name not in _TORCH_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_TORCH_NAMES[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the torch model's included before they are loaded."""
    return sorted(set(globals()) | set(_TORCH_NAMES))
