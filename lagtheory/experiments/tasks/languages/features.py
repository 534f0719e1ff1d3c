"""The input features of the language tasks (:mod:`lagtheory.experiments.tasks.languages.catalogue`).

Words are arrays of symbols 0, ..., k - 1 (a = 0, b = 1, c = 2, ... for an
alphabet of k letters). The feature of position i is

* ``tokens``: the symbol x_i (ids a = 0, b = 1, ...);
* ``bigram``: the pair (x_(i-1), x_i) with x_0 := x_1, id k x_(i-1) + x_i
  (for k = 2: aa = 0, ab = 1, ba = 2, bb = 3);
* ``cyclic-bigram``: the same pairs with x_0 := x_n.

The model is permutation invariant in the features apart from the first
positions that carry their own attention score (the first-position marker,
or learned position scores), so a word enters training and testing through
its feature counts and the features of those first positions
(``ShallowTransformer.forward_counts``, exact at any length).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from lagtheory._validation import check_integer

FEATURES = ("tokens", "bigram", "cyclic-bigram")
FEATURE_NAMES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"tokens": ("a", "b"), "bigram": ("aa", "ab", "ba", "bb"), "cyclic-bigram": ("aa", "ab", "ba", "bb")}
)
"""The feature vocabulary of each feature kind over {a, b}, in the order of the feature ids."""
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def feature_names(features: str, alphabet_size: int = 2) -> tuple[str, ...]:
    """The feature vocabulary of a feature kind over the first ``alphabet_size`` letters, in id order.

    Parameters
    ----------
    features : {"tokens", "bigram", "cyclic-bigram"}
        The feature kind.
    alphabet_size : int, optional
        The number k of letters, >= 2.

    Returns
    -------
    tuple of str
        The feature names.

    Raises
    ------
    ValueError
        If ``features`` is unknown or ``alphabet_size`` < 2.
    TypeError
        If ``alphabet_size`` is not an integer.
    """
    _check_features(features)
    letters = LETTERS[: check_integer(alphabet_size, "alphabet_size", 2)]
    if features == "tokens":
        return tuple(letters)
    return tuple(first + second for first in letters for second in letters)


def _check_features(features: str) -> None:
    if features not in FEATURES:
        raise ValueError(f"features must be one of {FEATURES}, got {features!r}")


def padded_feature_ids(
    words: NDArray[np.int64], lengths: NDArray[np.int64], features: str, alphabet_size: int = 2
) -> NDArray[np.int64]:
    """The feature id of every position of padded words (module docstring), shape (rows, width);
    ``words`` (rows, width) holds word r in its first ``lengths[r]`` entries, with symbols
    0 to ``alphabet_size - 1``, and the ids past a word's end are -1.

    Parameters
    ----------
    words : ndarray
        int (rows, width), word r in its first ``lengths[r]`` entries, symbols 0..k-1.
    lengths : ndarray
        int (rows,), each in 1..width.
    features : {"tokens", "bigram", "cyclic-bigram"}
        The feature kind.
    alphabet_size : int, optional
        The number k of letters, >= 2.

    Returns
    -------
    ndarray
        int64 (rows, width).

    Raises
    ------
    ValueError
        If ``features`` is unknown, ``alphabet_size`` < 2, the shapes do not fit, a length is out of
        range or a symbol is not in 0..k-1.
    TypeError
        If ``alphabet_size`` is not an integer.
    """
    _check_features(features)
    k = check_integer(alphabet_size, "alphabet_size", 2)
    words = np.asarray(words)
    lengths = np.asarray(lengths)
    if words.ndim != 2 or lengths.shape != words.shape[:1]:
        raise ValueError("words must have shape (rows, width) and lengths shape (rows,)")
    if np.any(lengths < 1) or np.any(lengths > words.shape[1]):
        raise ValueError(f"lengths must lie in 1..{words.shape[1]} (the width of words)")
    inside = np.arange(words.shape[1]) < lengths[:, None]
    if not np.all((words[inside] >= 0) & (words[inside] < k)):
        raise ValueError(f"words must hold symbols 0..{k - 1} within their lengths")
    if features == "tokens":
        ids = words.astype(np.int64)
    else:
        rows = np.arange(words.shape[0])
        first_predecessor = words[:, 0] if features == "bigram" else words[rows, lengths - 1]
        previous = np.concatenate([first_predecessor[:, None], words[:, :-1]], axis=1)
        ids = (k * previous + words).astype(np.int64)
    return np.where(inside, ids, -1)


def feature_ids(words: NDArray[np.int64], features: str, alphabet_size: int = 2) -> NDArray[np.int64]:
    """The feature id of every position of every word, for words of one length.

    Parameters
    ----------
    words : ndarray
        int (batch, n), n >= 1, symbols 0..k-1.
    features : {"tokens", "bigram", "cyclic-bigram"}
        The feature kind.
    alphabet_size : int, optional
        The number k of letters, >= 2.

    Returns
    -------
    ndarray
        int64 (batch, n).

    Raises
    ------
    ValueError
        If ``words`` is not (batch, n) with n >= 1, or as :func:`padded_feature_ids` raises.
    """
    words = np.asarray(words)
    if words.ndim != 2 or words.shape[1] < 1:
        raise ValueError("words must be an array of shape (batch, n), n >= 1, with symbols 0, 1, ...")
    return padded_feature_ids(words, np.full(words.shape[0], words.shape[1]), features, alphabet_size)


def feature_counts(ids: NDArray[np.int64], vocab_size: int) -> NDArray[np.float64]:
    """How often each feature id occurs in each row (ids -1 are padding).

    Parameters
    ----------
    ids : ndarray
        int (rows, width), feature ids in 0..vocab_size-1, or -1.
    vocab_size : int
        The number of feature ids.

    Returns
    -------
    ndarray
        float64 (rows, vocab_size).
    """
    ids = np.asarray(ids)
    rows = np.broadcast_to(np.arange(ids.shape[0])[:, None], ids.shape)
    valid = ids >= 0
    flat = rows[valid] * vocab_size + ids[valid]
    return np.bincount(flat, minlength=ids.shape[0] * vocab_size).reshape(ids.shape[0], vocab_size).astype(np.float64)
