"""The language tasks of the empirical chapter on star-free languages: which
language, read through which features, with or without a first-position marker.

Each task pairs a regular language of :mod:`lagtheory.languages` with the
simplest input features that let the book's shallow transformer
(:class:`lagtheory.model.ShallowTransformer`, :prf:ref:`def-model`: one length-scaled
attention layer with a fixed query, linear readout) express it:

* ``tokens``: position i carries the one-hot symbol x_i (vocabulary {a, b},
  or the alphabet's letters);
* ``bigram``: position i carries the pair (x_(i-1), x_i), a previous-token
  feature, with x_0 := x_1 at position 1 (so position 1 is ``aa`` or ``bb``
  and never creates a spurious ``ab`` or ``ba``); vocabulary {aa, ab, ba, bb};
* ``cyclic-bigram``: the same pairs with x_0 := x_n (position 1 sees the last
  symbol), vocabulary {aa, ab, ba, bb};

optionally with the first-position marker of the model: a learnable score s
added to position 1's attention score only (the proposition on FIRST), or with *learned
position scores*: one learnable score for each of the first P positions
(P >= 2), so the model is told where a word begins but must learn which of
its first positions matters. Positional information thus enters through the
attention scores and the features, never by a separate output channel, so the
attention has to learn to use it.

Besides the languages over {a, b}, the catalogue holds a language over eight
letters in which six letters never matter (distractors).
The features are computed by :mod:`lagtheory.experiments.tasks.languages.features`,
words are drawn by :mod:`lagtheory.experiments.tasks.languages.sampling`, and
:mod:`lagtheory.experiments.tasks.languages.worst_case` decides exactly whether a model
classifies every word of a length correctly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from lagtheory._validation import check_integer
from lagtheory.dfa import DFA
from lagtheory.languages import A_STAR_B_STAR, CONTAINS_AB, CONTAINS_B_NOT_C, EVEN_PAIRS, FIRST, PARITY
from lagtheory.model import ShallowTransformer

from .features import FEATURES, LETTERS, feature_names


@dataclass(frozen=True)
class LanguageSpec:
    """A language's specification: the language with the features and the positional marker the model reads it
    through (the engine's task that trains on it is
    :class:`~lagtheory.experiments.tasks.languages.task.LanguageRuns`).

    ``why`` states in one sentence which positional information the task uses
    and why it suffices for the model to recognise the language at every
    length; ``witness`` gives parameters (``theta``, ``u`` and ``s`` when the
    marker is on, or the P learned position scores ``s``) that do so, checked
    in the tests and the chapter with
    :func:`lagtheory.experiments.tasks.languages.worst_case.verified_horizons`. ``witness`` is None for a language the model
    cannot express (the control PARITY). ``learned_positions`` P >= 2 gives
    the first P positions their own learned score (0: none); it excludes the
    marker, which is the case P = 1.

    Attributes
    ----------
    name : str
        The language's name.
    dfa : DFA
        The language, over the alphabet a, b, ... (at least two letters).
    features : {"tokens", "bigram", "cyclic-bigram"}
        The features the model reads.
    first_position_marker : bool
        Whether position 1 carries its own score.
    why : str
        Why the features suffice, in one sentence.
    witness : mapping or None
        Parameters that recognise the language, or None.
    learned_positions : int, optional
        P = 0 or P >= 2 learned position scores (not with the marker).

    Raises
    ------
    ValueError
        If ``features`` is unknown, the alphabet is not a, b, ..., or ``learned_positions`` is out of range.
    """

    name: str
    dfa: DFA
    features: str
    first_position_marker: bool
    why: str
    witness: Mapping[str, tuple[float, ...] | float] | None
    learned_positions: int = 0

    def __post_init__(self) -> None:
        if self.features not in FEATURES:
            raise ValueError(f"features must be one of {FEATURES}, got {self.features!r}")
        alphabet = tuple(self.dfa.alphabet)
        if not 2 <= len(alphabet) <= 8 or alphabet != tuple(LETTERS[: len(alphabet)]):
            raise ValueError(f"dfa must have the alphabet a, b, ... (two to eight letters), got {self.dfa.alphabet!r}")
        check_integer(self.learned_positions, "learned_positions", 0)
        if self.learned_positions == 1 or (self.learned_positions > 1 and self.first_position_marker):
            raise ValueError(
                "learned_positions must be 0 or >= 2 and exclude the marker (the marker is one learned position)"
            )

    @property
    def alphabet_size(self) -> int:
        """The number k of letters (symbols 0..k-1)."""
        return len(self.dfa.alphabet)

    @property
    def vocab_size(self) -> int:
        """The number of feature ids."""
        return len(feature_names(self.features, self.alphabet_size))

    @property
    def position_scores(self) -> int:
        """How many first positions carry their own learned attention score; 1 with the marker, else
        ``learned_positions``."""
        return 1 if self.first_position_marker else self.learned_positions

    def model(self) -> ShallowTransformer:
        """A fresh model (all parameters 0) for this task: length-scaled attention, linear readout
        (not for learned position scores, which the theory's model does not have)."""
        if self.learned_positions:
            raise ValueError(f"{self.name} has learned position scores, which ShallowTransformer does not model")
        return ShallowTransformer(
            vocab_size=self.vocab_size, readout="linear", scaling="log", first_position_score=self.first_position_marker
        )


TASKS: Mapping[str, LanguageSpec] = MappingProxyType(
    {
        "FIRST": LanguageSpec(
            "FIRST",
            FIRST,
            "tokens",
            True,
            "the first-position marker lets attention put weight n^s/(n^s+n-1) > 1/2 on x_1 once s >= 1 "
            "(the proposition on FIRST in the generalisations chapter), and the other tokens then cannot outweigh it",
            {"theta": (0.0, 0.0), "s": 2.0, "u": (-1.0, 1.0)},
        ),
        "EVEN_PAIRS": LanguageSpec(
            "EVEN_PAIRS",
            EVEN_PAIRS,
            "cyclic-bigram",
            True,
            "a string is in EVEN_PAIRS iff x_1 = x_n, i.e. iff position 1's cyclic bigram (x_n, x_1) is aa or bb; "
            "the marker makes that bigram outweigh the n - 1 others, as for FIRST",
            {"theta": (0.0, 0.0, 0.0, 0.0), "s": 2.0, "u": (1.0, -1.0, -1.0, 1.0)},
        ),
        "CONTAINS_AB": LanguageSpec(
            "CONTAINS_AB",
            CONTAINS_AB,
            "bigram",
            False,
            "a string is in CONTAINS_AB iff its bigram features contain ab: CONTAINS_B over the bigram "
            "vocabulary, which attention recognises once the score of ab exceeds the others' by 1 (the threshold theorem)",
            {"theta": (0.0, 2.0, 0.0, 0.0), "u": (-1.0, 1.0, -1.0, -1.0)},
        ),
        "A_STAR_B_STAR": LanguageSpec(
            "A_STAR_B_STAR",
            A_STAR_B_STAR,
            "bigram",
            False,
            "a string is outside a*b* iff its bigram features contain ba: the complement of CONTAINS_B over "
            "the bigram vocabulary, with the trigger ba",
            {"theta": (0.0, 0.0, 2.0, 0.0), "u": (1.0, 1.0, -1.0, 1.0)},
        ),
        "CONTAINS_B_NOT_C": LanguageSpec(
            "CONTAINS_B_NOT_C",
            CONTAINS_B_NOT_C,
            "tokens",
            False,
            "no positional information is needed: a c outweighs everything once its score exceeds the others' by 1, "
            "and otherwise a b does (the threshold theorem, twice); the six other letters are distractors",
            {
                "theta": (0.0, 2.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0),
                "u": (-1.0, 1.0, -3.0, -1.0, -1.0, -1.0, -1.0, -1.0),
            },
        ),
        "FIRST_LEARNED": LanguageSpec(
            "FIRST_LEARNED",
            FIRST,
            "tokens",
            False,
            "four learned position scores: once the first position's score s_1 >= 1 leads the others', position 1 "
            "outweighs the rest of the word as with the marker (the proposition on FIRST); the model is not told that it is "
            "position 1, among the first four, that matters",
            {"theta": (0.0, 0.0), "s": (2.0, 0.0, 0.0, 0.0), "u": (-1.0, 1.0)},
            learned_positions=4,
        ),
        "PARITY": LanguageSpec(
            "PARITY",
            PARITY,
            "tokens",
            False,
            "no features make it expressible here: at fixed n the output is monotone in the number k of b's "
            "(the pooling lemma), while the label alternates with k",
            None,
        ),
    }
)
"""The tasks of the chapter; six star-free language tasks (the last two add distractors, and learned
positional information) and the non-star-free control PARITY."""
