"""The languages and test words of the transformer task (:mod:`lagtheory.experiments.tasks.transformer.task`).

Languages (:data:`TRANSFORMER_LANGUAGES`, name -> DFA):

* the star-free languages of the language study (:data:`lagtheory.experiments.tasks.languages.catalogue.TASKS`:
  FIRST, EVEN_PAIRS, CONTAINS_AB, A_STAR_B_STAR, CONTAINS_B_NOT_C; FIRST_LEARNED is FIRST read
  through other features, and the transformer reads the letters themselves);
* two star-free languages that the study never used, not in the catalogue (whose entries carry
  the one-layer model's features and witness): :data:`lagtheory.languages.LAST_B`, the words
  that end in b (Sigma* b), and :data:`lagtheory.languages.TWO_B`, the words with at least two
  b's (Sigma* b Sigma* b Sigma*, counting to a threshold); both are certified star-free by
  :func:`lagtheory.star_free.is_star_free` in the tests;
* the non-star-free control PARITY (an even number of b's), which no schedule should generalise
  to long inputs.

Test words of a length n (:func:`hard_words`), besides uniform random words of each class:

* *minimal pairs*: a uniform word of each class and the same word with one letter changed so
  that its label flips (the change drawn uniformly among all such changes; exact, by the DFA's
  prefix states and the set of states from which each suffix is accepted), i.e. words on both
  sides of the decision boundary at Hamming distance 1;
* *long runs*: for letters c != d among the first three letters, c^n with one letter d at the
  first, middle or last position, and c^p d^(n-p) with p at 1, n/2 and n - 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from lagtheory._validation import check_integer
from lagtheory.dfa import DFA
from lagtheory.languages import LAST_B, PARITY, TWO_B

from ..languages.catalogue import TASKS
from ..languages.sampling import sample_strings, transition_table

STUDY_LANGUAGES = ("FIRST", "EVEN_PAIRS", "CONTAINS_AB", "A_STAR_B_STAR", "CONTAINS_B_NOT_C")
NEW_LANGUAGES = ("LAST_B", "TWO_B")
CONTROL_LANGUAGES = ("PARITY",)

TRANSFORMER_LANGUAGES: Mapping[str, DFA] = MappingProxyType(
    {
        **{name: TASKS[name].dfa for name in STUDY_LANGUAGES},
        "LAST_B": LAST_B,
        "TWO_B": TWO_B,
        "PARITY": PARITY,
    }
)
"""The languages of the transformer task (module docstring); the study's star-free languages, two new
star-free languages, and the non-star-free control."""


def dfa_labels(dfa: DFA, words: NDArray[np.int64]) -> NDArray[np.int64]:
    """The label (+1 in L(dfa), -1 outside) of each word of one length, ``words`` (rows, n) with
    symbols 0..k-1 in the order of ``dfa.alphabet``.

    Parameters
    ----------
    dfa : DFA
        The language.
    words : ndarray
        int64 (rows, n), symbols 0..k-1 in the order of ``dfa.alphabet``.

    Returns
    -------
    ndarray
        int64 (rows,), +1 or -1.
    """
    delta, start, accepting = transition_table(dfa)
    words = np.asarray(words, dtype=np.int64)
    state = np.full(words.shape[0], start)
    for position in range(words.shape[1]):
        state = delta[state, words[:, position]]
    return np.where(accepting[state], 1, -1)


def minimal_pairs(dfa: DFA, words: NDArray[np.int64], rng: np.random.Generator) -> tuple[NDArray, NDArray]:
    """For each word (rows, n), one word at Hamming distance 1 with the other label, the changed
    position and letter uniform among every such change. Returns (the words that have one, their
    partners); rows without a label-flipping change are dropped.

    Parameters
    ----------
    dfa : DFA
        The language.
    words : ndarray
        int64 (rows, n), symbols 0..k-1 in the order of ``dfa.alphabet``.
    rng : numpy.random.Generator
        Draws the changes.

    Returns
    -------
    words, partners : ndarray
        int64 (kept rows, n).
    """
    delta, start, accepting = transition_table(dfa)
    words = np.asarray(words, dtype=np.int64)
    rows, n = words.shape
    k = delta.shape[1]
    prefix = np.empty((rows, n), dtype=np.int64)  # state before position i
    state = np.full(rows, start)
    for i in range(n):
        prefix[:, i] = state
        state = delta[state, words[:, i]]
    label = accepting[state]
    accepted_after = np.empty((rows, n, delta.shape[0]), dtype=bool)  # from state q, is word[i+1:] accepted
    accepts = np.broadcast_to(accepting, (rows, delta.shape[0])).copy()
    for i in range(n - 1, -1, -1):
        accepted_after[:, i] = accepts
        accepts = np.take_along_axis(accepts, delta[:, words[:, i]].T, axis=1)
    # edited label at (i, c): accepted_after[r, i, delta[prefix[r, i], c]]
    targets = delta[prefix]  # (rows, n, k)
    edited = np.take_along_axis(accepted_after, targets, axis=2)
    flips = (edited != label[:, None, None]) & (np.arange(k) != words[:, :, None])
    keep = flips.reshape(rows, -1).any(axis=1)
    partners = words[keep].copy()
    for j, r in enumerate(np.flatnonzero(keep)):
        choice = rng.choice(np.flatnonzero(flips[r].reshape(-1)))
        partners[j, choice // k] = choice % k
    return words[keep], partners


def run_words(alphabet_size: int, length: int) -> NDArray[np.int64]:
    """The long-run words of the module docstring over the first min(k, 3) letters.

    Parameters
    ----------
    alphabet_size : int
        The number k of letters, >= 2.
    length : int
        The word length, >= 2.

    Returns
    -------
    ndarray
        int64 (rows, length), distinct words.

    Raises
    ------
    ValueError
        If an argument is out of range.
    TypeError
        If an argument is not an integer.
    """
    check_integer(length, "length", 2)
    letters = range(min(check_integer(alphabet_size, "alphabet_size", 2), 3))
    spots = sorted({0, length // 2, length - 1})
    cuts = sorted({1, length // 2, length - 1})
    words = []
    for c in letters:
        for d in letters:
            if c == d:
                continue
            for spot in spots:
                word = np.full(length, c)
                word[spot] = d
                words.append(word)
            for cut in cuts:
                words.append(np.concatenate([np.full(cut, c), np.full(length - cut, d)]))
    return np.unique(np.array(words, dtype=np.int64), axis=0)


def hard_words(dfa: DFA, length: int, pairs_per_class: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """The hard test words of one length: ``pairs_per_class`` minimal pairs started from each class
    (fewer where a class has too few words with a label-flipping change among 4 times as many draws)
    and the long-run words, shape (rows, length).

    Parameters
    ----------
    dfa : DFA
        The language.
    length : int
        The word length, >= 2.
    pairs_per_class : int
        Minimal pairs started from each class, >= 1.
    rng : numpy.random.Generator
        Draws the words and the changes.

    Returns
    -------
    ndarray
        int64 (rows, length).

    Raises
    ------
    ValueError
        If ``pairs_per_class`` or ``length`` is out of range.
    """
    check_integer(pairs_per_class, "pairs_per_class", 1)
    found = []
    for label in (1, -1):
        words, partners = minimal_pairs(dfa, sample_strings(dfa, length, label, 4 * pairs_per_class, rng), rng)
        found += [words[:pairs_per_class], partners[:pairs_per_class]]
    return np.concatenate([*found, run_words(len(dfa.alphabet), length)])
