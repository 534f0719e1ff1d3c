"""Uniform sampling of the words of a regular language (or of its complement)
of a given length, vectorised over many words of different lengths.

A DFA over an alphabet of k letters (symbols 0, ..., k - 1 in the order of
``dfa.alphabet``; a = 0, b = 1 over {a, b}) is turned into its transition
table, and N_j(q), the number of words of length j that lead from state q
into the class of the label (accepting states for y = +1, rejecting for
y = -1), is tabulated in log space, N_0(q) = [q in the class] and
N_j(q) = sum_sigma N_(j-1)(delta(q, sigma)). A word of length n is drawn left
to right: in state q with j + 1 symbols still to write, sigma is chosen with
probability N_j(delta(q, sigma)) / N_(j+1)(q), which makes every word of the
class equally likely. One uniform number u per position decides each symbol:
the symbols are taken from the last to the first, and the first whose
cumulative probability exceeds u is chosen (over {a, b}: b if u < P(b)). So a
block of uniforms (drawn from one seed's generator) fixes the words.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from lagtheory._validation import check_integer
from lagtheory.dfa import DFA


def transition_table(dfa: DFA) -> tuple[NDArray[np.int64], int, NDArray[np.bool_]]:
    """(delta as an int array (states, k), start index, accepting mask), with the symbols numbered in
    the order of ``dfa.alphabet`` (which must have at least two symbols).

    Parameters
    ----------
    dfa : DFA
        The language.

    Returns
    -------
    delta : ndarray
        int64 (states, k).
    start : int
        The start state's index.
    accepting : ndarray
        bool (states,).

    Raises
    ------
    ValueError
        If ``dfa`` is not a DFA with at least 2 symbols.
    """
    if not isinstance(dfa, DFA) or len(dfa.alphabet) < 2:
        raise ValueError(f"dfa must be a DFA with an alphabet of at least 2 symbols, got {dfa!r}")
    index = {state: i for i, state in enumerate(dfa.states)}
    delta = np.array([[index[dfa.transitions[(state, symbol)]] for symbol in dfa.alphabet] for state in dfa.states])
    accepting = np.array([state in dfa.accepting for state in dfa.states])
    return delta, index[dfa.start], accepting


def check_label(label: int) -> int:
    """A label +1 (in the language) or -1 (outside), checked.

    Parameters
    ----------
    label : int
        The label.

    Returns
    -------
    int
        ``label``.

    Raises
    ------
    ValueError
        If ``label`` is not +1 or -1 (a bool is refused).
    """
    if isinstance(label, bool) or label not in (1, -1):
        raise ValueError(f"label must be +1 (in the language) or -1 (outside), got {label!r}")
    return int(label)


def log_completions(dfa: DFA, length: int, label: int) -> NDArray[np.float64]:
    """Log N_j(q) for j = 0..length (rows) and every state q (columns); -inf where N_j(q) = 0.

    Parameters
    ----------
    dfa : DFA
        The language, over an alphabet of at least 2 symbols.
    length : int
        The longest completion, >= 0.
    label : {1, -1}
        +1 (in the language) or -1 (outside).

    Returns
    -------
    ndarray
        float64 (length + 1, states).

    Raises
    ------
    ValueError
        If ``dfa`` has fewer than 2 symbols, ``label`` is not +-1, or a length is out of range.
    TypeError
        If a length is not an integer.
    """
    check_integer(length, "length", 0)
    check_label(label)
    delta, _, accepting = transition_table(dfa)
    target = accepting if label == 1 else ~accepting
    table = np.full((length + 1, len(dfa.states)), -np.inf)
    table[0, target] = 0.0
    for j in range(1, length + 1):
        table[j] = np.logaddexp.reduce(table[j - 1, delta], axis=1)
    return table


def class_is_nonempty(dfa: DFA, length: int, label: int) -> bool:
    """Whether some word of this length has this label (+1 in L(dfa), -1 outside).

    Parameters
    ----------
    dfa : DFA
        The language, over an alphabet of at least 2 symbols.
    length : int
        The length, >= 1.
    label : {1, -1}
        +1 (in the language) or -1 (outside).

    Returns
    -------
    bool
        Whether the class is non-empty.

    Raises
    ------
    ValueError
        If ``dfa`` has fewer than 2 symbols, ``label`` is not +-1, or a length is out of range.
    TypeError
        If a length is not an integer.
    """
    check_integer(length, "length", 1)
    _, start, _ = transition_table(dfa)
    return bool(np.isfinite(log_completions(dfa, length, label)[length, start]))


def nonempty_lengths(dfa: DFA, max_length: int, label: int) -> NDArray[np.int64]:
    """The lengths 1..max_length at which the class of ``label`` has a word.

    Parameters
    ----------
    dfa : DFA
        The language, over an alphabet of at least 2 symbols.
    max_length : int
        The longest length, >= 1.
    label : {1, -1}
        +1 (in the language) or -1 (outside).

    Returns
    -------
    ndarray
        int64, increasing.

    Raises
    ------
    ValueError
        If ``dfa`` has fewer than 2 symbols, ``label`` is not +-1, or a length is out of range.
    TypeError
        If a length is not an integer.
    """
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
    ValueError if a class is empty at a requested length.

    Parameters
    ----------
    dfa : DFA
        The language, over an alphabet of at least 2 symbols.
    lengths : ndarray
        int64 (rows,), each in 1..width.
    labels : ndarray
        int64 (rows,), each +1 or -1.
    uniforms : ndarray
        float64 (rows, width), uniforms on [0, 1).

    Returns
    -------
    ndarray
        int64 (rows, width).

    Raises
    ------
    ValueError
        If the shapes do not fit, a length or label is out of range, or a class is empty at a
        requested length.
    """
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
    symbols_last_first = np.arange(delta.shape[1])[::-1]
    for position in range(width):
        active = position < lengths
        remaining = np.maximum(lengths - position - 1, 0)
        log_next = tables[which[:, None], remaining[:, None], delta[state][:, ::-1]]  # (rows, k), last symbol first
        with np.errstate(invalid="ignore"):
            probability = np.exp(log_next - np.logaddexp.reduce(log_next, axis=1, keepdims=True))
        probability = np.where(active[:, None], probability, 0.0)
        below = np.cumsum(probability, axis=1) > uniforms[:, position, None]
        possible = probability > 0
        # the first symbol (last to first) whose cumulative probability exceeds u; rounding can leave
        # none, and then the last symbol of positive probability is taken
        choice = np.where(
            below.any(axis=1), below.argmax(axis=1), possible.shape[1] - 1 - possible[:, ::-1].argmax(axis=1)
        )
        symbols = np.where(active, symbols_last_first[choice], 0)
        words[:, position] = symbols
        state = np.where(active, delta[state, symbols], state)
    return words


def sample_strings(dfa: DFA, length: int, label: int, count: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``count`` words drawn uniformly from the words of this length with this label.

    Parameters
    ----------
    dfa : DFA
        The language, over an alphabet of at least 2 symbols.
    length : int
        The length, >= 1.
    label : {1, -1}
        +1 (in the language) or -1 (outside).
    count : int
        The number of words, >= 1.
    rng : numpy.random.Generator
        The source of the uniforms.

    Returns
    -------
    ndarray
        int64 (count, length).

    Raises
    ------
    ValueError
        If an argument is out of range, or the class is empty at this length.
    TypeError
        If ``length`` or ``count`` is not an integer.
    """
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
    Returns (labels, lengths, padded words (rows, max_length)).

    Parameters
    ----------
    dfa : DFA
        The language, over an alphabet of at least 2 symbols.
    max_length : int
        The longest training length, >= 2.
    uniforms : ndarray
        float64 (rows, max_length + 2), uniforms on [0, 1).

    Returns
    -------
    labels, lengths, words : ndarray
        int64 (rows,), (rows,) and (rows, max_length).

    Raises
    ------
    ValueError
        If ``max_length`` or the shape of ``uniforms`` is wrong.
    """
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
