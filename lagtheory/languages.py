"""The regular languages the book uses, as minimal DFAs (:prf:ref:`def-language`): the one home of every
DFA of the package, the theory's and the experiments'.

Every constant below is the minimal DFA of its language, with states listed
in breadth-first order from the start state (so ``L.minimise() == L``); all
are over Sigma = {a, b} except CONTAINS_B_NOT_C.

Star-free (aperiodic syntactic monoid)::

    CONTAINS_B     Sigma* b Sigma*, the language of the book's main theorems.
    FIRST          b Sigma*: the first symbol is b. The empty string is NOT in
                   FIRST (it has no first symbol).
    EVEN_PAIRS     strings whose number of factors ab plus ba is even, as in
                   Deletang et al. (2023) and Huang, Liang & Yang (2025).
                   Each such factor marks a change of symbol, so the count is
                   even iff the first symbol equals the last one; the empty
                   string (count 0) IS in EVEN_PAIRS, and so is every string
                   of length 1.
    AB_STAR        (ab)*, the empty string included.
    A_STAR_B_STAR  a* b*, the empty string included.
    CONTAINS_AB    Sigma* ab Sigma*.

Not star-free (controls; their syntactic monoids contain the group Z2)::

    PARITY         strings with an even number of b's (the empty string included).
    AA_STAR        (aa)* over {a, b}: any b rejects; the empty string included.

Languages of the experiments only (star-free; :data:`EXPERIMENT_LANGUAGES`)::

    CONTAINS_B_NOT_C  words over {a, ..., h} that contain b and no c; the six
                      letters a, d, ..., h are distractors (the language study).
    LAST_B            Sigma* b: the last letter is b (the transformer study).
    TWO_B             Sigma* b Sigma* b Sigma*: at least two b's (the transformer study).

Labels follow :prf:ref:`def-data`: y = +1 for a word in the language and
y = -1 otherwise (:func:`label`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from lagtheory.dfa import DFA, Word

__all__ = [
    "AA_STAR",
    "AB_STAR",
    "A_STAR_B_STAR",
    "CONTAINS_AB",
    "CONTAINS_B",
    "CONTAINS_B_NOT_C",
    "EVEN_PAIRS",
    "EXPERIMENT_LANGUAGES",
    "FIRST",
    "LANGUAGES",
    "LAST_B",
    "PARITY",
    "TWO_B",
    "label",
]

SIGMA = ("a", "b")


def _dfa(table: dict[str, tuple[str, str]], accepting: set[str]) -> DFA:
    """Build a DFA over SIGMA from rows ``state: (target on a, target on b)``; the first row is the start."""
    states = tuple(table)
    return DFA(
        states=states,
        alphabet=SIGMA,
        transitions={(state, symbol): row[i] for state, row in table.items() for i, symbol in enumerate(SIGMA)},
        start=states[0],
        accepting=accepting,
    )


CONTAINS_B = _dfa({"no_b": ("no_b", "seen_b"), "seen_b": ("seen_b", "seen_b")}, {"seen_b"})

FIRST = _dfa(
    {"start": ("first_a", "first_b"), "first_a": ("first_a", "first_a"), "first_b": ("first_b", "first_b")},
    {"first_b"},
)

# State "x..y": the first symbol read was x and the last one y.
EVEN_PAIRS = _dfa(
    {
        "empty": ("a..a", "b..b"),
        "a..a": ("a..a", "a..b"),
        "b..b": ("b..a", "b..b"),
        "a..b": ("a..a", "a..b"),
        "b..a": ("b..a", "b..b"),
    },
    {"empty", "a..a", "b..b"},
)

AB_STAR = _dfa(
    {"blocks": ("after_a", "dead"), "after_a": ("dead", "blocks"), "dead": ("dead", "dead")},
    {"blocks"},
)

A_STAR_B_STAR = _dfa(
    {"in_a": ("in_a", "in_b"), "in_b": ("dead", "in_b"), "dead": ("dead", "dead")},
    {"in_a", "in_b"},
)

CONTAINS_AB = _dfa(
    {"none": ("after_a", "none"), "after_a": ("after_a", "seen_ab"), "seen_ab": ("seen_ab", "seen_ab")},
    {"seen_ab"},
)

PARITY = _dfa({"even": ("even", "odd"), "odd": ("odd", "even")}, {"even"})

AA_STAR = _dfa({"even": ("odd", "dead"), "odd": ("even", "dead"), "dead": ("dead", "dead")}, {"even"})

LANGUAGES: Mapping[str, DFA] = MappingProxyType(
    {
        "CONTAINS_B": CONTAINS_B,
        "FIRST": FIRST,
        "EVEN_PAIRS": EVEN_PAIRS,
        "AB_STAR": AB_STAR,
        "A_STAR_B_STAR": A_STAR_B_STAR,
        "CONTAINS_AB": CONTAINS_AB,
        "PARITY": PARITY,
        "AA_STAR": AA_STAR,
    }
)
"""Read-only registry name -> DFA of the theory's languages above (over {a, b}), star-free ones first."""

EIGHT_LETTERS = tuple("abcdefgh")
"""The alphabet of CONTAINS_B_NOT_C."""

CONTAINS_B_NOT_C = DFA(
    states=("none", "seen_b", "seen_c"),
    alphabet=EIGHT_LETTERS,
    transitions={
        (state, letter): "seen_c" if state == "seen_c" or letter == "c" else "seen_b" if letter == "b" else state
        for state in ("none", "seen_b", "seen_c")
        for letter in EIGHT_LETTERS
    },
    start="none",
    accepting={"seen_b"},
)
"""Words over {a, ..., h} that contain b and no c; the six letters a, d, ..., h are distractors."""

LAST_B = _dfa({"last_a": ("last_a", "last_b"), "last_b": ("last_a", "last_b")}, {"last_b"})
"""Sigma* b; the words whose last letter is b."""

TWO_B = _dfa({"none": ("none", "one"), "one": ("one", "two"), "two": ("two", "two")}, {"two"})
"""Sigma* b Sigma* b Sigma*; the words with at least two b's."""

EXPERIMENT_LANGUAGES: Mapping[str, DFA] = MappingProxyType(
    {"CONTAINS_B_NOT_C": CONTAINS_B_NOT_C, "LAST_B": LAST_B, "TWO_B": TWO_B}
)
"""Read-only registry name -> DFA of the languages only the experiments use (all star-free)."""


def label(dfa: DFA, word: Word) -> int:
    """Return the label y(word) of :prf:ref:`def-data`: +1 if ``word`` is in L(dfa), -1 otherwise.

    Parameters
    ----------
    dfa : DFA
        The language.
    word : str or sequence of symbols
        The word.

    Returns
    -------
    int
        +1 or -1.

    Examples
    --------
    >>> label(CONTAINS_B, "aab"), label(CONTAINS_B, "aaa"), label(PARITY, "")
    (1, -1, 1)
    """
    if not isinstance(dfa, DFA):
        raise TypeError(f"dfa must be a DFA, got {type(dfa).__name__}")
    return 1 if dfa.accepts(word) else -1
