"""lagtheory: the helper package of the book *Attention learning can lag
output-layer learning*.

The public names below are the ones the book documents; each module holds one
mathematical object (see the API page of the book).
"""

from .counts import BinomialCount, CountDistribution, OneB, UniformCount
from .data import Data
from .dfa import DFA
from .exact_recognition import Recognition, recognition
from .languages import LANGUAGES
from .lengths import Geometric, LengthDistribution, PowerLaw
from .model import ShallowTransformer, initialise, to_reduced
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
