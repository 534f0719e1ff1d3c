"""The language tasks of the empirical chapter on star-free languages: which
language, read through which features, with or without a first-position marker.

Each task pairs a regular language of :mod:`lagtheory.languages` with the
simplest input features that let the book's shallow transformer
(:class:`lagtheory.model.ShallowTransformer`, ``def-model``: one length-scaled
attention layer with a fixed query, linear readout) express it:

* ``tokens``: position i carries the one-hot symbol x_i (vocabulary {a, b});
* ``bigram``: position i carries the pair (x_(i-1), x_i), a previous-token
  feature, with x_0 := x_1 at position 1 (so position 1 is ``aa`` or ``bb``
  and never creates a spurious ``ab`` or ``ba``); vocabulary {aa, ab, ba, bb};
* ``cyclic-bigram``: the same pairs with x_0 := x_n (position 1 sees the last
  symbol), vocabulary {aa, ab, ba, bb};

optionally with the first-position marker of the model: a learnable score s
added to position 1's attention score only (``prop-first``). Positional
information thus enters through the attention scores and the features, never
by a separate output channel, so the attention has to learn to use it.
The features are computed by :mod:`lagtheory.experiments.language_features`,
words are drawn by :mod:`lagtheory.experiments.word_sampling`, and
:mod:`lagtheory.experiments.worst_case` decides exactly whether a model
classifies every word of a length correctly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from lagtheory.dfa import DFA
from lagtheory.languages import A_STAR_B_STAR, CONTAINS_AB, EVEN_PAIRS, FIRST, PARITY
from lagtheory.model import ShallowTransformer

from .language_features import FEATURE_NAMES, FEATURES


@dataclass(frozen=True)
class LanguageTask:
    """A language with the features and the positional marker the model reads it through.

    ``why`` states in one sentence which positional information the task uses
    and why it suffices for the model to recognise the language at every
    length; ``witness`` gives parameters (``theta``, ``u`` and ``s`` when the
    marker is on) that do so, checked in the tests and the chapter with
    :func:`lagtheory.experiments.worst_case.verified_horizon`. ``witness`` is None for a language the model
    cannot express (the control PARITY).
    """

    name: str
    dfa: DFA
    features: str
    first_position_marker: bool
    why: str
    witness: Mapping[str, tuple[float, ...] | float] | None

    def __post_init__(self) -> None:
        if self.features not in FEATURES:
            raise ValueError(f"features must be one of {FEATURES}, got {self.features!r}")
        if tuple(self.dfa.alphabet) != ("a", "b"):
            raise ValueError(f"dfa must have the alphabet ('a', 'b'), got {self.dfa.alphabet!r}")

    @property
    def vocab_size(self) -> int:
        """The number of feature ids."""
        return len(FEATURE_NAMES[self.features])

    def model(self) -> ShallowTransformer:
        """A fresh model (all parameters 0) for this task: length-scaled attention, linear readout."""
        return ShallowTransformer(
            vocab_size=self.vocab_size, readout="linear", scaling="log", first_position_score=self.first_position_marker
        )


TASKS: Mapping[str, LanguageTask] = MappingProxyType(
    {
        "FIRST": LanguageTask(
            "FIRST",
            FIRST,
            "tokens",
            True,
            "the first-position marker lets attention put weight n^s/(n^s+n-1) > 1/2 on x_1 once s >= 1 "
            "(prop-first), and the other tokens then cannot outweigh it",
            {"theta": (0.0, 0.0), "s": 2.0, "u": (-1.0, 1.0)},
        ),
        "EVEN_PAIRS": LanguageTask(
            "EVEN_PAIRS",
            EVEN_PAIRS,
            "cyclic-bigram",
            True,
            "a string is in EVEN_PAIRS iff x_1 = x_n, i.e. iff position 1's cyclic bigram (x_n, x_1) is aa or bb; "
            "the marker makes that bigram outweigh the n - 1 others, as for FIRST",
            {"theta": (0.0, 0.0, 0.0, 0.0), "s": 2.0, "u": (1.0, -1.0, -1.0, 1.0)},
        ),
        "CONTAINS_AB": LanguageTask(
            "CONTAINS_AB",
            CONTAINS_AB,
            "bigram",
            False,
            "a string is in CONTAINS_AB iff its bigram features contain ab: CONTAINS_B over the bigram "
            "vocabulary, which attention recognises once the score of ab exceeds the others' by 1 (thm-threshold)",
            {"theta": (0.0, 2.0, 0.0, 0.0), "u": (-1.0, 1.0, -1.0, -1.0)},
        ),
        "A_STAR_B_STAR": LanguageTask(
            "A_STAR_B_STAR",
            A_STAR_B_STAR,
            "bigram",
            False,
            "a string is outside a*b* iff its bigram features contain ba: the complement of CONTAINS_B over "
            "the bigram vocabulary, with the trigger ba",
            {"theta": (0.0, 0.0, 2.0, 0.0), "u": (1.0, 1.0, -1.0, 1.0)},
        ),
        "PARITY": LanguageTask(
            "PARITY",
            PARITY,
            "tokens",
            False,
            "no features make it expressible here: at fixed n the output is monotone in the number k of b's "
            "(lem-pooling), while the label alternates with k",
            None,
        ),
    }
)
"""The tasks of the chapter: four star-free languages and the non-star-free control PARITY."""
