"""The exact verifier of the language tasks: does a trained model classify
*every* word of a given length correctly?

For a linear-readout model of a task (:mod:`lagtheory.experiments.tasks.languages.catalogue`)
and a word x of length n with label y,

    y f(x) Z(x) = sum_i y u_(v_i) n^(theta_(v_i) + s_i),   Z(x) = sum_i n^(score_i) > 0,

with v_i the feature of position i and s_i the learned score of position i
(the marker s on position 1, or the learned scores of the first P
positions; 0 elsewhere) (:eq:`eq-attention`, :eq:`eq-readout`), so every word of
length n with label y is right iff the minimum over those words of this sum
of per-position costs is > 0. The first Q = max(P, 1) positions are
enumerated; the rest of a word is a path of n - Q steps through the product
of the DFA with the previous symbol (the DFA alone for token features), so
its minimum is a shortest path, computed by min-plus matrix powers (repeated
squaring, about log2 n products), exactly as the sum would be in float64 but
without its range limits: every number is kept as a sign and the logarithm of
its magnitude ("signed log space"), so n^theta with theta log n far beyond
float64's exponent range (the three-phase schedule's attention step of 100 at
n = 1e12 gives scores near 2800) neither underflows nor overflows. Additions
are done as log-sum-exp (equal signs) or log-difference-exp (opposite signs)
of the larger magnitude, so each carries the relative rounding of one float64
addition, as in the plain sum.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from lagtheory.model import ShallowTransformer

from .catalogue import LanguageSpec
from .sampling import transition_table


@dataclass(frozen=True)
class SignedLog:
    """Numbers ``sign * exp(log_magnitude)``: ``sign`` in {-1, 0, +1} (float), ``log_magnitude``
    -inf for 0; ``sign = +1, log_magnitude = +inf`` is +infinity (no word in the class).

    Attributes
    ----------
    sign : ndarray
        float64, each -1, 0 or +1.
    log_magnitude : ndarray
        float64, the same shape; -inf for 0.
    """

    sign: NDArray[np.float64]
    log_magnitude: NDArray[np.float64]

    def value(self) -> NDArray[np.float64]:
        """The numbers as float64 (they may overflow to +-inf or underflow to 0)."""
        with np.errstate(over="ignore", under="ignore"):
            return np.where(self.sign == 0, 0.0, self.sign * np.exp(self.log_magnitude))


def _add(sa: NDArray, la: NDArray, sb: NDArray, lb: NDArray) -> tuple[NDArray, NDArray]:
    """Sum of two signed-log arrays (broadcasting); +infinity absorbs.

    With h the larger magnitude and l the smaller, the sum is sign_h e^h (1 + sign_h sign_l e^(l - h)):
    magnitude h + log1p(sign_a sign_b e^(l - h)), the sign of the larger (0 when the sum cancels
    exactly). Where both are infinite of the same kind (l - h undefined) the sum is the larger."""
    a_larger = la >= lb
    high = np.where(a_larger, la, lb)
    sign = np.where(a_larger, sa, sb)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.minimum(la, lb)
        ratio -= high
        np.exp(ratio, out=ratio)
        ratio *= sa * sb
        magnitude = np.log1p(ratio, out=ratio)
        magnitude += high
    undefined = np.isnan(magnitude)
    magnitude[undefined] = high[undefined]
    sign = np.where(magnitude == -np.inf, 0.0, sign)
    return sign, magnitude


def _minimum(sign: NDArray, log_magnitude: NDArray, axis: int) -> tuple[NDArray, NDArray]:
    """The minimum along ``axis`` of a signed-log array.

    The entries are ranked by a key that is increasing in the value: 0 for 0, ``offset +
    log_magnitude`` for a positive and ``-(offset + log_magnitude)`` for a negative number,
    with ``offset`` making every finite ``offset + log_magnitude`` >= 1 (+inf ranks last);
    the minimum is the entry of the smallest key, returned exactly as stored.
    """
    finite = np.isfinite(log_magnitude)
    offset = 1.0 - (log_magnitude[finite].min() if finite.any() else 0.0)
    with np.errstate(invalid="ignore"):
        key = np.where(sign == 0, 0.0, sign * (log_magnitude + offset))
    index = np.expand_dims(np.argmin(key, axis=axis), axis)
    return (
        np.take_along_axis(sign, index, axis=axis).squeeze(axis),
        np.take_along_axis(log_magnitude, index, axis=axis).squeeze(axis),
    )


def _product(left: tuple[NDArray, NDArray], right: tuple[NDArray, NDArray]) -> tuple[NDArray, NDArray]:
    """Min-plus product per batch entry: (left (x) right)[b, i, j] = min_k left[b, i, k] + right[b, k, j]."""
    sign, log_magnitude = _add(left[0][:, :, :, None], left[1][:, :, :, None], right[0][:, None], right[1][:, None])
    return _minimum(sign, log_magnitude, axis=2)


def _rows_of_powers(
    matrices: tuple[NDArray, NDArray], sources: list[int], exponents: NDArray[np.int64]
) -> tuple[NDArray, NDArray]:
    """For each batch entry b: the rows ``sources`` of the min-plus power matrices[b]^exponents[b],
    shape (batch, len(sources), size), by repeated squaring; the rows are multiplied by the
    squares that the exponent's binary digits select (vector-matrix products)."""
    size = matrices[0].shape[1]
    start = np.full((exponents.size, len(sources), size), np.inf)
    start_sign = np.ones_like(start)
    for row, source in enumerate(sources):
        start[:, row, source] = -np.inf  # the min-plus identity's row: 0 at the source
        start_sign[:, row, source] = 0.0
    rows = (start_sign, start)
    base = (matrices[0].copy(), matrices[1].copy())
    remaining = exponents.copy()
    while np.any(remaining > 0):
        odd = np.flatnonzero(remaining % 2 == 1)
        product = _product((rows[0][odd], rows[1][odd]), (base[0][odd], base[1][odd]))
        rows[0][odd], rows[1][odd] = product
        remaining //= 2
        active = np.flatnonzero(remaining > 0)  # square only where higher bits remain
        if active.size:
            base[0][active], base[1][active] = _product(
                (base[0][active], base[1][active]), (base[0][active], base[1][active])
            )
    return rows


def _closure(start: set[int], edges: list[tuple[int, int]]) -> set[int]:
    """The nodes reachable from ``start`` along the directed ``edges``."""
    seen, frontier = set(start), list(start)
    while frontier:
        node = frontier.pop()
        for i, j in edges:
            if i == node and j not in seen:
                seen.add(j)
                frontier.append(j)
    return seen


def _feature(features: str, alphabet_size: int, previous: int, symbol: int) -> int:
    return symbol if features == "tokens" else alphabet_size * previous + symbol


def position_scores(task: LanguageSpec, s: ArrayLike | None, models: int) -> NDArray[np.float64]:
    """The learned scores of the first Q = max(P, 1) positions of every model, shape (models, Q):
    0 without positional scores, the marker ``s`` (models,) or a number, or the P learned scores
    ``s`` (models, P) or (P,).

    Parameters
    ----------
    task : LanguageSpec
        The language task (its DFA, features and position scores).
    s : array_like or None
        The scores; required when the task has the marker or learned positions.
    models : int
        The number of models.

    Returns
    -------
    ndarray
        float64 (models, Q).

    Raises
    ------
    ValueError
        If ``s`` is missing where the task needs it, or has the wrong shape.
    """
    count = task.position_scores
    if count == 0:
        return np.zeros((models, 1))
    if s is None:
        raise ValueError("s (the position scores) is required for a task with the marker or learned positions")
    s = np.asarray(s, dtype=np.float64)
    if count == 1:
        return np.broadcast_to(s.reshape(-1) if s.ndim else s, (models,))[:, None].copy()
    if s.shape[-1:] != (count,):
        raise ValueError(f"s must have shape (models, {count}) or ({count},) for {task.name}, got {s.shape}")
    return np.broadcast_to(s, (models, count)).copy()


def _signed_sum(terms: list[tuple[NDArray, NDArray]]) -> tuple[NDArray, NDArray]:
    total = terms[0]
    for term in terms[1:]:
        total = _add(*total, *term)
    return total


def worst_case(
    task: LanguageSpec, theta: ArrayLike, u: ArrayLike, s: ArrayLike | None, lengths: Sequence[int]
) -> SignedLog:
    """For each model, length n and label y: min over the words x of length n with label y of
    y f(x) Z(x) (module docstring), shape (models, lengths, 2), columns y = +1, -1; +infinity
    where the class is empty. ``theta``, ``u`` (models, d) or (d,); ``s`` the position scores
    (:func:`position_scores`; None or ignored without them). Every word of length n with label y
    is right iff the entry is > 0.

    The first Q = max(P, 1) positions (P the task's position scores) are enumerated word by word
    (k^Q prefixes); the rest of the word is the min-plus power of the step matrix of the product of
    the DFA with the last symbol (with the DFA alone for token features, whose cost does not
    depend on the previous symbol), from the state the prefix leads to. Words shorter than Q are
    enumerated whole.

    Parameters
    ----------
    task : LanguageSpec
        The language task (its DFA, features and position scores).
    theta, u : array_like
        (models, d) or (d,), finite.
    s : array_like or None
        The position scores (:func:`position_scores`; None or ignored without them), finite.
    lengths : sequence of int
        A non-empty sequence of lengths >= 1.

    Returns
    -------
    SignedLog
        Shape (models, lengths, 2).

    Raises
    ------
    ValueError
        If the shapes do not fit the task, a parameter is not finite, or ``lengths`` is empty or holds a
        length < 1.
    """
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    u = np.atleast_2d(np.asarray(u, dtype=np.float64))
    if theta.shape != u.shape or theta.shape[1] != task.vocab_size:
        raise ValueError(f"theta and u must have shape (models, {task.vocab_size}) or ({task.vocab_size},)")
    models, d = theta.shape
    positions = position_scores(task, s, models)
    if not (np.all(np.isfinite(theta)) and np.all(np.isfinite(u)) and np.all(np.isfinite(positions))):
        raise ValueError("theta, u and s must be finite")
    lengths_array = np.asarray(lengths, dtype=np.int64)
    if lengths_array.ndim != 1 or lengths_array.size == 0 or np.any(lengths_array < 1):
        raise ValueError(f"lengths must be a non-empty sequence of whole numbers >= 1, got {lengths!r}")
    delta, start, accepting = transition_table(task.dfa)
    k, states, prefix_length = task.alphabet_size, len(task.dfa.states), positions.shape[1]
    memory = 1 if task.features == "tokens" else k  # the product state remembers the last symbol for bigrams
    cyclic = task.features == "cyclic-bigram"
    log_n = np.log(lengths_array.astype(np.float64))
    batch = models * lengths_array.size
    n_of_entry = np.tile(lengths_array, models)
    # per (model, length): log n^theta_v, and log n^(theta_v + s_i) at the prefix positions i
    log_weight = (theta[:, None, :] * log_n[None, :, None]).reshape(batch, d)
    log_prefix = ((theta[:, None, None, :] + positions[:, None, :, None]) * log_n[None, :, None, None]).reshape(
        batch, prefix_length, d
    )
    with np.errstate(divide="ignore"):
        log_u = np.repeat(np.log(np.abs(u)), lengths_array.size, axis=0)
    sign_u = np.repeat(np.sign(u), lengths_array.size, axis=0)
    exponents = np.maximum(n_of_entry - prefix_length, 0)

    def state_of(q: int, last: int) -> int:
        return q * memory + (last if memory > 1 else 0)

    def run(word: tuple[int, ...]) -> int:
        q = start
        for symbol in word:
            q = int(delta[q, symbol])
        return q

    def prefix_cost(word: tuple[int, ...], last: int, label: int, entries: NDArray) -> tuple[NDArray, NDArray]:
        """Sum over the positions i of ``word`` of y u_v n^(theta_v + s_i), for the chosen entries."""
        terms = []
        for i, symbol in enumerate(word):
            previous = (last if cyclic else word[0]) if i == 0 else word[i - 1]
            v = _feature(task.features, k, previous, symbol)
            terms.append((label * sign_u[entries, v], log_u[entries, v] + log_prefix[entries, i, v]))
        return _signed_sum(terms)

    edges = [
        (state_of(q, previous), state_of(int(delta[q, symbol]), symbol), _feature(task.features, k, previous, symbol))
        for q in range(states)
        for previous in range(memory)
        for symbol in range(k)
    ]
    prefixes = list(itertools.product(range(k), repeat=prefix_length))
    sources = sorted({state_of(run(w), w[-1]) for w in prefixes})
    reachable = _closure(set(sources), [(i, j) for i, j, _ in edges])
    long = np.flatnonzero(n_of_entry >= prefix_length)
    result_sign = np.ones((batch, 2))
    result_log = np.full((batch, 2), np.inf)
    for column, label in enumerate((1, -1)):
        target = accepting if label == 1 else ~accepting
        ends = {state_of(q, last) for q in range(states) if target[q] for last in range(memory)}
        keep = sorted(reachable & _closure(ends, [(j, i) for i, j, _ in edges]))
        best = (np.ones(long.size), np.full(long.size, np.inf))
        if keep and long.size:
            index = {state: i for i, state in enumerate(keep)}
            # one step matrix per entry: the cheapest edge between two kept states, y u_v n^theta_v
            candidates: dict[tuple[int, int], list[int]] = {}
            for i, j, v in edges:
                if i in index and j in index:
                    candidates.setdefault((index[i], index[j]), []).append(v)
            step_sign = np.ones((long.size, len(keep), len(keep)))
            step_log = np.full((long.size, len(keep), len(keep)), np.inf)
            for (i, j), features in candidates.items():
                options = sorted(set(features))
                cheapest = _minimum(
                    (label * sign_u[long][:, options]).T,
                    (log_u[long][:, options] + log_weight[long][:, options]).T,
                    axis=0,
                )
                step_sign[:, i, j], step_log[:, i, j] = cheapest
            kept_sources = [source for source in sources if source in index]
            paths = _rows_of_powers((step_sign, step_log), [index[x] for x in kept_sources], exponents[long])
            row_of = {source: row for row, source in enumerate(kept_sources)}
            for word in prefixes:
                source = state_of(run(word), word[-1])
                if source not in row_of:
                    continue
                for last in range(k) if cyclic else (None,):
                    columns = [index[e] for e in keep if e in ends and (last is None or e % memory == last)]
                    if not columns:
                        continue
                    end = _minimum(paths[0][:, row_of[source], columns], paths[1][:, row_of[source], columns], axis=1)
                    opening = prefix_cost(word, word[-1] if last is None else last, label, long)
                    total = _add(*opening, *end)
                    best = _minimum(np.stack([best[0], total[0]]), np.stack([best[1], total[1]]), axis=0)
        result_sign[long, column], result_log[long, column] = best
        for n in range(1, prefix_length):  # words shorter than the prefix: every word, whole
            entries = np.flatnonzero(n_of_entry == n)
            if entries.size == 0:
                continue
            short = (np.ones(entries.size), np.full(entries.size, np.inf))
            for word in itertools.product(range(k), repeat=n):
                if target[run(word)]:
                    total = prefix_cost(word, word[-1], label, entries)
                    short = _minimum(np.stack([short[0], total[0]]), np.stack([short[1], total[1]]), axis=0)
            result_sign[entries, column], result_log[entries, column] = short
    shape = (models, lengths_array.size, 2)
    return SignedLog(result_sign.reshape(shape), result_log.reshape(shape))


def model_parameters(model: ShallowTransformer, task: LanguageSpec) -> tuple[NDArray, NDArray, NDArray | None]:
    """(theta, u, s or None) of a linear-readout model of this task, as numpy arrays.

    Parameters
    ----------
    model : ShallowTransformer
        A linear-readout model of this task (as ``task.model()`` builds it).
    task : LanguageSpec
        The language task (its DFA, features and position scores).

    Returns
    -------
    tuple
        (theta, u, s or None), copies.

    Raises
    ------
    ValueError
        If ``model`` is not a linear-readout model of this task.
    """
    if (
        not isinstance(model, ShallowTransformer)
        or model.readout != "linear"
        or model.vocab_size != task.vocab_size
        or model.first_position_score != task.first_position_marker
    ):
        raise ValueError("model must be a linear-readout model of this task, as built by task.model()")
    s = model.s.detach().numpy().copy() if task.first_position_marker else None
    return model.theta.detach().numpy().copy(), model.u.detach().numpy().copy(), s


def worst_case_scores(model: ShallowTransformer, task: LanguageSpec, lengths: Sequence[int]) -> SignedLog:
    """:func:`worst_case` of one model, shape (lengths, 2).

    Parameters
    ----------
    model : ShallowTransformer
        A linear-readout model of this task (as ``task.model()`` builds it).
    task : LanguageSpec
        The language task (its DFA, features and position scores).
    lengths : sequence of int
        A non-empty sequence of lengths >= 1.

    Returns
    -------
    SignedLog
        Shape (lengths, 2).

    Raises
    ------
    ValueError
        As :func:`model_parameters` and :func:`worst_case` raise.
    """
    result = worst_case(task, *model_parameters(model, task), lengths)
    return SignedLog(result.sign[0], result.log_magnitude[0])


def verified_horizons(
    task: LanguageSpec, theta: ArrayLike, u: ArrayLike, s: ArrayLike | None, lengths: Sequence[int]
) -> NDArray[np.int64]:
    """For each model: the largest n in ``lengths`` (ascending) with every word of every listed
    length <= n correct; 0 if none. Shape (models,).

    Parameters
    ----------
    task : LanguageSpec
        The language task (its DFA, features and position scores).
    theta, u : array_like
        (models, d) or (d,), finite.
    s : array_like or None
        The position scores (:func:`position_scores`; None or ignored without them), finite.
    lengths : sequence of int
        Strictly increasing lengths >= 1.

    Returns
    -------
    ndarray
        int64 (models,).

    Raises
    ------
    ValueError
        If ``lengths`` is not strictly increasing, or as :func:`worst_case` raises.
    """
    lengths = [int(n) for n in lengths]
    if lengths != sorted(set(lengths)):
        raise ValueError("lengths must be strictly increasing")
    correct = np.all(worst_case(task, theta, u, s, lengths).sign > 0, axis=2)  # (models, lengths)
    failed = ~correct
    first_failure = np.where(failed.any(axis=1), failed.argmax(axis=1), len(lengths))
    grid = np.array([0, *lengths], dtype=np.int64)
    return grid[first_failure]


def verified_horizon(model: ShallowTransformer, task: LanguageSpec, lengths: Sequence[int]) -> int:
    """:func:`verified_horizons` of one model.

    Parameters
    ----------
    model : ShallowTransformer
        A linear-readout model of this task (as ``task.model()`` builds it).
    task : LanguageSpec
        The language task (its DFA, features and position scores).
    lengths : sequence of int
        Strictly increasing lengths >= 1.

    Returns
    -------
    int
        The horizon.

    Raises
    ------
    ValueError
        As :func:`model_parameters` and :func:`verified_horizons` raise.
    """
    return int(verified_horizons(task, *model_parameters(model, task), lengths)[0])
