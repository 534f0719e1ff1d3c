"""The exact verifier of the language tasks: does a trained model classify
*every* word of a given length correctly?

For a linear-readout model of a task (:mod:`lagtheory.experiments.language_catalogue`)
and a word x of length n with label y,

    y f(x) Z(x) = sum_i y u_(v_i) n^(theta_(v_i) + s [i = 1]),   Z(x) = sum_i n^(score_i) > 0,

with v_i the feature of position i (``eq-attention``, ``eq-readout``), so every
word of length n with label y is right iff the minimum over those words of
this sum of per-position costs is > 0. The words of a regular class are the
paths of n steps through the product of the DFA with the previous symbol, so
the minimum is a shortest path, computed by min-plus matrix powers (repeated
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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from lagtheory.model import ShallowTransformer

from .language_catalogue import LanguageTask
from .word_sampling import transition_table


@dataclass(frozen=True)
class SignedLog:
    """Numbers ``sign * exp(log_magnitude)``: ``sign`` in {-1, 0, +1} (float), ``log_magnitude``
    -inf for 0; ``sign = +1, log_magnitude = +inf`` is +infinity (no word in the class)."""

    sign: NDArray[np.float64]
    log_magnitude: NDArray[np.float64]

    def value(self) -> NDArray[np.float64]:
        """The numbers as float64 (they may overflow to +-inf or underflow to 0)."""
        with np.errstate(over="ignore", under="ignore"):
            return np.where(self.sign == 0, 0.0, self.sign * np.exp(self.log_magnitude))


def _add(sa: NDArray, la: NDArray, sb: NDArray, lb: NDArray) -> tuple[NDArray, NDArray]:
    """Sum of two signed-log arrays (broadcasting); +infinity absorbs."""
    a_larger = la >= lb
    high = np.maximum(la, lb)
    low = np.minimum(la, lb)
    sign_high = np.where(a_larger, sa, sb)
    sign_low = np.where(a_larger, sb, sa)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.exp(low - high)
        magnitude = high + np.log1p(np.where(sign_high * sign_low >= 0, ratio, -ratio))
    infinite = np.isposinf(high)
    magnitude[np.isneginf(high)] = -np.inf  # both zero
    magnitude[infinite] = np.inf
    sign = np.where(np.isneginf(magnitude), 0.0, np.where(sign_high == 0, sign_low, sign_high))
    sign[infinite] = 1.0
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


def _feature(features: str, previous: int, symbol: int) -> int:
    return symbol if features == "tokens" else 2 * previous + symbol


def worst_case(
    task: LanguageTask, theta: ArrayLike, u: ArrayLike, s: ArrayLike | None, lengths: Sequence[int]
) -> SignedLog:
    """For each model, length n and label y: min over the words x of length n with label y of
    y f(x) Z(x) (module docstring), shape (models, lengths, 2), columns y = +1, -1; +infinity
    where the class is empty. ``theta``, ``u`` (models, d) or (d,), ``s`` (models,) or a number
    (the marker score; None or ignored without the marker). Every word of length n with label y
    is right iff the entry is > 0."""
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    u = np.atleast_2d(np.asarray(u, dtype=np.float64))
    if theta.shape != u.shape or theta.shape[1] != task.vocab_size:
        raise ValueError(f"theta and u must have shape (models, {task.vocab_size}) or ({task.vocab_size},)")
    models = theta.shape[0]
    marker = np.zeros(models)
    if task.first_position_marker:
        if s is None:
            raise ValueError("s (the first-position score) is required for a task with the marker")
        marker = np.broadcast_to(np.asarray(s, dtype=np.float64), (models,))
    if not (np.all(np.isfinite(theta)) and np.all(np.isfinite(u)) and np.all(np.isfinite(marker))):
        raise ValueError("theta, u and s must be finite")
    lengths_array = np.asarray(lengths, dtype=np.int64)
    if lengths_array.ndim != 1 or lengths_array.size == 0 or np.any(lengths_array < 1):
        raise ValueError(f"lengths must be a non-empty sequence of whole numbers >= 1, got {lengths!r}")
    delta, start, accepting = transition_table(task.dfa)
    states = len(task.dfa.states)
    log_n = np.log(lengths_array.astype(np.float64))
    # per (model, length): log n^theta_v and the first position's log n^(theta_v + s), shape (models * lengths, d)
    log_weight = (theta[:, None, :] * log_n[None, :, None]).reshape(-1, task.vocab_size)
    log_first = ((theta + marker[:, None])[:, None, :] * log_n[None, :, None]).reshape(-1, task.vocab_size)
    with np.errstate(divide="ignore"):
        log_u = np.repeat(np.log(np.abs(u)), lengths_array.size, axis=0)
    sign_u = np.repeat(np.sign(u), lengths_array.size, axis=0)
    exponents = np.tile(lengths_array - 1, models)
    batch = models * lengths_array.size
    result_sign = np.empty((batch, 2))
    result_log = np.empty((batch, 2))
    # the product of the DFA with the last symbol: state 2 q + sigma; one edge per (state, next symbol)
    edges = [
        (2 * q + previous, 2 * delta[q, symbol] + symbol, _feature(task.features, previous, symbol))
        for q in range(states)
        for previous in (0, 1)
        for symbol in (0, 1)
    ]
    sources = [2 * delta[start, first_symbol] + first_symbol for first_symbol in (0, 1)]
    reachable = _closure(set(sources), [(i, j) for i, j, _ in edges])
    for column, label in enumerate((1, -1)):
        target = accepting if label == 1 else ~accepting
        ends = {2 * q + last for q in range(states) if target[q] for last in (0, 1)}
        # keep the product states on some path from a source to an end (the others carry no word)
        keep = sorted(reachable & _closure(ends, [(j, i) for i, j, _ in edges]))
        best = (np.ones(batch), np.full(batch, np.inf))
        if keep:
            index = {state: i for i, state in enumerate(keep)}
            cost = (label * sign_u, log_u + log_weight)
            first_cost = (label * sign_u, log_u + log_first)
            # one step matrix per (model, length): the cost of a position i >= 2 with feature v is y u_v n^theta_v
            step_sign = np.ones((batch, len(keep), len(keep)))
            step_log = np.full((batch, len(keep), len(keep)), np.inf)
            for i, j, v in edges:
                if i in index and j in index:
                    step_sign[:, index[i], index[j]] = cost[0][:, v]
                    step_log[:, index[i], index[j]] = cost[1][:, v]
            kept_sources = [index.get(source, 0) for source in sources]
            paths = _rows_of_powers((step_sign, step_log), kept_sources, exponents)
            for first_symbol in (0, 1):
                if sources[first_symbol] not in index:
                    continue
                for last_symbol in (0, 1):
                    columns = [index[2 * q + last_symbol] for q in range(states) if (2 * q + last_symbol) in index]
                    columns = [c for c in columns if keep[c] in ends]
                    if not columns:
                        continue
                    predecessor = last_symbol if task.features == "cyclic-bigram" else first_symbol
                    v = _feature(task.features, predecessor, first_symbol)
                    # at n = 1 the path has no step, so it ends where it starts: last_symbol = first_symbol
                    end = _minimum(paths[0][:, first_symbol, columns], paths[1][:, first_symbol, columns], axis=1)
                    total = _add(first_cost[0][:, v], first_cost[1][:, v], *end)
                    best = _minimum(np.stack([best[0], total[0]]), np.stack([best[1], total[1]]), axis=0)
        result_sign[:, column], result_log[:, column] = best
    shape = (models, lengths_array.size, 2)
    return SignedLog(result_sign.reshape(shape), result_log.reshape(shape))


def model_parameters(model: ShallowTransformer, task: LanguageTask) -> tuple[NDArray, NDArray, NDArray | None]:
    """(theta, u, s or None) of a linear-readout model of this task, as numpy arrays."""
    if (
        not isinstance(model, ShallowTransformer)
        or model.readout != "linear"
        or model.vocab_size != task.vocab_size
        or model.first_position_score != task.first_position_marker
    ):
        raise ValueError("model must be a linear-readout model of this task, as built by task.model()")
    s = model.s.detach().numpy().copy() if task.first_position_marker else None
    return model.theta.detach().numpy().copy(), model.u.detach().numpy().copy(), s


def worst_case_scores(model: ShallowTransformer, task: LanguageTask, lengths: Sequence[int]) -> SignedLog:
    """:func:`worst_case` of one model, shape (lengths, 2)."""
    result = worst_case(task, *model_parameters(model, task), lengths)
    return SignedLog(result.sign[0], result.log_magnitude[0])


def verified_horizons(
    task: LanguageTask, theta: ArrayLike, u: ArrayLike, s: ArrayLike | None, lengths: Sequence[int]
) -> NDArray[np.int64]:
    """For each model: the largest n in ``lengths`` (ascending) with every word of every listed
    length <= n correct; 0 if none. Shape (models,)."""
    lengths = [int(n) for n in lengths]
    if lengths != sorted(set(lengths)):
        raise ValueError("lengths must be strictly increasing")
    correct = np.all(worst_case(task, theta, u, s, lengths).sign > 0, axis=2)  # (models, lengths)
    failed = ~correct
    first_failure = np.where(failed.any(axis=1), failed.argmax(axis=1), len(lengths))
    grid = np.array([0, *lengths], dtype=np.int64)
    return grid[first_failure]


def verified_horizon(model: ShallowTransformer, task: LanguageTask, lengths: Sequence[int]) -> int:
    """:func:`verified_horizons` of one model."""
    return int(verified_horizons(task, *model_parameters(model, task), lengths)[0])
