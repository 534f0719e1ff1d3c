"""Uniform sampling of the words of a regular language (or of its complement)
of a given length, vectorised over many words of different lengths.

A DFA over {a, b} (symbols a = 0, b = 1) is turned into its transition table,
and N_j(q), the number of words of length j that lead from state q into the
class of the label (accepting states for y = +1, rejecting for y = -1), is
tabulated in log space, N_0(q) = [q in the class] and
N_j(q) = N_(j-1)(delta(q, a)) + N_(j-1)(delta(q, b)). A word of length n is
drawn left to right: in state q with j + 1 symbols still to write, b is chosen
with probability N_j(delta(q, b)) / N_(j+1)(q), which makes every word of the
class equally likely. One uniform number per position decides each symbol,
so a block of uniforms (drawn from one seed's generator) fixes the words.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from lagtheory._validation import check_integer
from lagtheory.dfa import DFA


def transition_table(dfa: DFA) -> tuple[NDArray[np.int64], int, NDArray[np.bool_]]:
    """(delta as an int array (states, 2), start index, accepting mask) with symbols a = 0, b = 1."""
    if tuple(dfa.alphabet) != ("a", "b"):
        raise ValueError(f"dfa must have the alphabet ('a', 'b'), got {dfa.alphabet!r}")
    index = {state: i for i, state in enumerate(dfa.states)}
    delta = np.array([[index[dfa.transitions[(state, symbol)]] for symbol in ("a", "b")] for state in dfa.states])
    accepting = np.array([state in dfa.accepting for state in dfa.states])
    return delta, index[dfa.start], accepting


def check_label(label: int) -> int:
    """A label +1 (in the language) or -1 (outside)."""
    if isinstance(label, bool) or label not in (1, -1):
        raise ValueError(f"label must be +1 (in the language) or -1 (outside), got {label!r}")
    return int(label)


def log_completions(dfa: DFA, length: int, label: int) -> NDArray[np.float64]:
    """Log N_j(q) for j = 0..length (rows) and every state q (columns); -inf where N_j(q) = 0."""
    check_integer(length, "length", 0)
    check_label(label)
    delta, _, accepting = transition_table(dfa)
    target = accepting if label == 1 else ~accepting
    table = np.full((length + 1, len(dfa.states)), -np.inf)
    table[0, target] = 0.0
    for j in range(1, length + 1):
        table[j] = np.logaddexp(table[j - 1, delta[:, 0]], table[j - 1, delta[:, 1]])
    return table


def class_is_nonempty(dfa: DFA, length: int, label: int) -> bool:
    """Whether some word of this length has this label (+1 in L(dfa), -1 outside)."""
    check_integer(length, "length", 1)
    _, start, _ = transition_table(dfa)
    return bool(np.isfinite(log_completions(dfa, length, label)[length, start]))


def nonempty_lengths(dfa: DFA, max_length: int, label: int) -> NDArray[np.int64]:
    """The lengths 1..max_length at which the class of ``label`` has a word."""
    check_integer(max_length, "max_length", 1)
    _, start, _ = transition_table(dfa)
    table = log_completions(dfa, max_length, label)
    return np.flatnonzero(np.isfinite(table[1:, start])) + 1


def sample_words(
    dfa: DFA, lengths: NDArray[np.int64], labels: NDArray[np.int64], uniforms: NDArray[np.float64]
) -> NDArray[np.int64]:
    """Word r uniform among the words of length ``lengths[r]`` with label ``labels[r]``, written into
    the first ``lengths[r]`` entries of row r of the result (the rest is 0), shape of ``uniforms``
    (rows, width); symbol i of word r is decided by ``uniforms[r, i]`` (module docstring).
    ValueError if a class is empty at a requested length."""
    lengths = np.asarray(lengths, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    uniforms = np.asarray(uniforms, dtype=np.float64)
    if uniforms.ndim != 2 or lengths.shape != uniforms.shape[:1] or labels.shape != lengths.shape:
        raise ValueError("uniforms must have shape (rows, width), lengths and labels shape (rows,)")
    width = uniforms.shape[1]
    if np.any(lengths < 1) or np.any(lengths > width):
        raise ValueError(f"lengths must lie in 1..{width} (the width of uniforms)")
    if not np.all((labels == 1) | (labels == -1)):
        raise ValueError("labels must be +1 (in the language) or -1 (outside)")
    delta, start, _ = transition_table(dfa)
    tables = np.stack([log_completions(dfa, width, label) for label in (1, -1)])  # (2, width + 1, states)
    which = (labels == -1).astype(np.int64)
    empty = ~np.isfinite(tables[which, lengths, start])
    if np.any(empty):
        r = int(np.flatnonzero(empty)[0])
        raise ValueError(
            f"label {int(labels[r])} has no word of length {int(lengths[r])} in this language; choose another length"
        )
    words = np.zeros(uniforms.shape, dtype=np.int64)
    state = np.full(lengths.size, start)
    for position in range(width):
        active = position < lengths
        remaining = np.maximum(lengths - position - 1, 0)
        log_a = tables[which, remaining, delta[state, 0]]
        log_b = tables[which, remaining, delta[state, 1]]
        with np.errstate(invalid="ignore"):
            probability_b = np.exp(log_b - np.logaddexp(log_a, log_b))
        symbols = np.where(active, (uniforms[:, position] < probability_b).astype(np.int64), 0)
        words[:, position] = symbols
        state = np.where(active, delta[state, symbols], state)
    return words


def sample_strings(dfa: DFA, length: int, label: int, count: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``count`` words drawn uniformly from the words of this length with this label, shape (count, length)."""
    check_integer(length, "length", 1)
    check_label(label)
    check_integer(count, "count", 1)
    if not class_is_nonempty(dfa, length, label):
        raise ValueError(f"label {label} has no word of length {length} in this language; choose another length")
    uniforms = rng.random((count, length))
    return sample_words(dfa, np.full(count, length), np.full(count, label), uniforms)


def labelled_words(dfa: DFA, max_length: int, uniforms: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
    """The training distribution of the language chapter from a block of uniforms (rows, max_length + 2):
    the label +-1 with probability 1/2 (column 0), the length uniform on the lengths 1..max_length at
    which the label's class is non-empty (column 1), the word uniform in that class (the other columns).
    Returns (labels, lengths, padded words (rows, max_length))."""
    check_integer(max_length, "max_length", 2)
    uniforms = np.asarray(uniforms, dtype=np.float64)
    if uniforms.ndim != 2 or uniforms.shape[1] != max_length + 2:
        raise ValueError(f"uniforms must have shape (rows, {max_length + 2})")
    labels = np.where(uniforms[:, 0] < 0.5, 1, -1)
    lengths = np.empty(uniforms.shape[0], dtype=np.int64)
    for label in (1, -1):
        allowed = nonempty_lengths(dfa, max_length, label)
        rows = labels == label
        lengths[rows] = allowed[np.minimum((uniforms[rows, 1] * allowed.size).astype(np.int64), allowed.size - 1)]
    return labels, lengths, sample_words(dfa, lengths, labels, uniforms[:, 2:])
