"""The language tasks of the empirical chapter on star-free languages.

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

The model is permutation invariant in the feature tokens (apart from the
marked position 1), so a string enters either as its feature tokens or,
exactly, as its feature counts; training uses the counts (cheaper), testing
up to length 1000 uses the tokens, and :func:`worst_case_scores` decides
exactly, for lengths up to 1e12 and beyond, whether *every* string of a given
length is classified correctly (a min-plus dynamic programme over the DFA,
see its docstring).

Data (``def-data``, with our choices for these languages): the label y = +1
or -1 with probability 1/2, the length n uniform on the lengths in
1..max_length at which the class of y is non-empty, and the string uniform
among the strings of length n with label y (:func:`sample_strings`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import torch
from numpy.typing import NDArray

from lagtheory._validation import check_integer
from lagtheory.dfa import DFA
from lagtheory.languages import A_STAR_B_STAR, CONTAINS_AB, EVEN_PAIRS, FIRST, PARITY
from lagtheory.model import ShallowTransformer, initialise

from .protocol import make_schedule, train

FEATURES = ("tokens", "bigram", "cyclic-bigram")
FEATURE_NAMES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"tokens": ("a", "b"), "bigram": ("aa", "ab", "ba", "bb"), "cyclic-bigram": ("aa", "ab", "ba", "bb")}
)
"""The feature vocabulary of each feature kind, in the order of the feature ids."""


@dataclass(frozen=True)
class LanguageTask:
    """A language with the features and the positional marker the model reads it through.

    ``why`` states in one sentence which positional information the task uses
    and why it suffices for the model to recognise the language at every
    length; ``witness`` gives parameters (``theta``, ``u`` and ``s`` when the
    marker is on) that do so, checked in the tests and the chapter with
    :func:`worst_case_scores`. ``witness`` is None for a language the model
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


# -- sampling -----------------------------------------------------------------


def _transition_table(dfa: DFA) -> tuple[NDArray[np.int64], int, NDArray[np.bool_]]:
    """(delta as an int array (states, 2), start index, accepting mask) with symbols a = 0, b = 1."""
    index = {state: i for i, state in enumerate(dfa.states)}
    delta = np.array([[index[dfa.transitions[(state, symbol)]] for symbol in ("a", "b")] for state in dfa.states])
    accepting = np.array([state in dfa.accepting for state in dfa.states])
    return delta, index[dfa.start], accepting


def _log_completions(dfa: DFA, length: int, label: int) -> NDArray[np.float64]:
    """Log of the number of words of each length j <= length leading from each state into the class of label.

    Row j, column q: log #{w in Sigma^j : delta*(q, w) is accepting (label +1) / rejecting (label -1)}
    (-inf where there is none).
    """
    delta, _, accepting = _transition_table(dfa)
    target = accepting if label == 1 else ~accepting
    table = np.full((length + 1, len(dfa.states)), -np.inf)
    table[0, target] = 0.0
    for j in range(1, length + 1):
        table[j] = np.logaddexp(table[j - 1, delta[:, 0]], table[j - 1, delta[:, 1]])
    return table


def class_is_nonempty(dfa: DFA, length: int, label: int) -> bool:
    """Whether some word of this length has this label (+1 in L(dfa), -1 outside)."""
    _check_length_and_label(length, label)
    _, start, _ = _transition_table(dfa)
    return bool(np.isfinite(_log_completions(dfa, length, label)[length, start]))


def sample_strings(dfa: DFA, length: int, label: int, count: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``count`` words drawn uniformly from the words of this length with this label, shape (count, length).

    Symbols are coded a = 0, b = 1. The draw goes left to right: in state q
    with j symbols still to write, symbol sigma is chosen with probability
    N_(j-1)(delta(q, sigma)) / N_j(q), N the completion counts of
    :func:`_log_completions`, which makes every word of the class equally
    likely. An empty class raises ValueError.
    """
    _check_length_and_label(length, label)
    check_integer(count, "count", 1)
    delta, start, _ = _transition_table(dfa)
    table = _log_completions(dfa, length, label)
    if not np.isfinite(table[length, start]):
        raise ValueError(f"label {label} has no word of length {length} in this language; choose another length")
    words = np.empty((count, length), dtype=np.int64)
    state = np.full(count, start)
    for position in range(length):
        remaining = table[length - position - 1]
        log_b = remaining[delta[state, 1]]
        probability_b = np.exp(log_b - np.logaddexp(remaining[delta[state, 0]], log_b))
        symbols = (rng.random(count) < probability_b).astype(np.int64)
        words[:, position] = symbols
        state = delta[state, symbols]
    return words


# -- features -----------------------------------------------------------------


def feature_ids(words: NDArray[np.int64], features: str) -> NDArray[np.int64]:
    """The feature id of every position of every word (words: (batch, n) with a = 0, b = 1)."""
    if features not in FEATURES:
        raise ValueError(f"features must be one of {FEATURES}, got {features!r}")
    words = np.asarray(words)
    if words.ndim != 2 or words.shape[1] < 1 or not np.all((words == 0) | (words == 1)):
        raise ValueError("words must be an array of shape (batch, n), n >= 1, with symbols 0 (a) and 1 (b)")
    if features == "tokens":
        return words.astype(np.int64)
    first_predecessor = words[:, :1] if features == "bigram" else words[:, -1:]
    previous = np.concatenate([first_predecessor, words[:, :-1]], axis=1)
    return (2 * previous + words).astype(np.int64)


def feature_counts(ids: NDArray[np.int64], vocab_size: int) -> NDArray[np.float64]:
    """How often each feature id occurs in each row, shape (batch, vocab_size), float64."""
    counts = np.zeros((ids.shape[0], vocab_size))
    np.add.at(counts, (np.repeat(np.arange(ids.shape[0]), ids.shape[1]), ids.ravel()), 1.0)
    return counts


@dataclass(frozen=True)
class CountBatch:
    """Strings as feature counts: ``counts`` (..., batch, d), ``first`` (..., batch) position 1's feature id,
    ``labels`` (..., batch) in {-1, +1}, as torch tensors."""

    counts: torch.Tensor
    first: torch.Tensor
    labels: torch.Tensor


def training_stream(task: LanguageTask, steps: int, batch: int, max_length: int, seed: int) -> CountBatch:
    """The training batches of all ``steps`` steps at once, shapes (steps, batch, ...), from one seed.

    Labels +-1 with probability 1/2; the length uniform on the lengths
    1..max_length where the label's class is non-empty; the word uniform in
    that class (:func:`sample_strings`). Every schedule trained with the same
    seed sees the same stream.
    """
    check_integer(steps, "steps", 1)
    check_integer(batch, "batch", 1)
    check_integer(max_length, "max_length", 2)
    rng = np.random.default_rng(seed)
    total = steps * batch
    labels = np.where(rng.random(total) < 0.5, 1, -1)
    lengths = np.empty(total, dtype=np.int64)
    for label in (1, -1):
        allowed = [n for n in range(1, max_length + 1) if class_is_nonempty(task.dfa, n, label)]
        rows = labels == label
        lengths[rows] = rng.choice(allowed, size=int(rows.sum()))
    counts = np.empty((total, task.vocab_size))
    first = np.empty(total, dtype=np.int64)
    for length in np.unique(lengths):
        for label in (1, -1):
            rows = np.flatnonzero((lengths == length) & (labels == label))
            if rows.size:
                ids = feature_ids(sample_strings(task.dfa, int(length), label, rows.size, rng), task.features)
                counts[rows] = feature_counts(ids, task.vocab_size)
                first[rows] = ids[:, 0]
    return CountBatch(
        counts=torch.from_numpy(counts.reshape(steps, batch, -1)),
        first=torch.from_numpy(first.reshape(steps, batch)),
        labels=torch.from_numpy(labels.reshape(steps, batch).astype(np.float64)),
    )


def evaluation_words(
    task: LanguageTask, lengths: Sequence[int], per_class: int, seed: int
) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
    """Balanced test words at each length: length -> (feature tokens (2 per_class, n), labels), from one seed."""
    rng = np.random.default_rng(seed)
    sets = {}
    for length in lengths:
        words = np.concatenate([sample_strings(task.dfa, int(length), label, per_class, rng) for label in (1, -1)])
        labels = np.repeat([1.0, -1.0], per_class)
        sets[int(length)] = (torch.from_numpy(feature_ids(words, task.features)), torch.from_numpy(labels))
    return sets


# -- loss and evaluation ---------------------------------------------------------


def counts_output(
    model: ShallowTransformer, task: LanguageTask, counts: torch.Tensor, first: torch.Tensor
) -> torch.Tensor:
    """The model output f on strings given as feature counts (exact; ``forward_counts``)."""
    return model.forward_counts(counts, first if task.first_position_marker else None)


def logistic_loss(model: ShallowTransformer, task: LanguageTask, batch: CountBatch, step: int) -> torch.Tensor:
    """Mean logistic loss log(1 + exp(-y f)) over the batch of ``step`` (``eq-population-loss`` on a sample)."""
    outputs = counts_output(model, task, batch.counts[step], batch.first[step])
    return torch.nn.functional.softplus(-batch.labels[step] * outputs).mean()


def token_accuracy(model: ShallowTransformer, tokens: torch.Tensor, labels: torch.Tensor) -> float:
    """Fraction of words with sign(f) = y, computed on the feature tokens (f = 0 counts as an error)."""
    with torch.no_grad():
        outputs = model(tokens, torch.ones_like(tokens, dtype=torch.bool))
    return float((labels * outputs > 0).to(torch.float64).mean())


def worst_case_scores(model: ShallowTransformer, task: LanguageTask, lengths: Sequence[int]) -> NDArray[np.float64]:
    """For each length n and label y: the minimum over all words x of that length and label of
    y f(x) Z(x), with Z(x) = sum_i exp(score_i(x) - M) > 0 (M the largest attention score at length n).

    Shape (len(lengths), 2), columns y = +1, -1; +inf where the class is empty.
    Every word of length n with label y is classified correctly iff the entry
    is > 0 (sign(y f) = sign(y f Z)). Exact for any length (tested up to 1e12):
    y f Z = sum_i c(v_i, i) is a sum of per-position costs c = y u_v
    exp(score - M), where v_i is the feature of position i and score =
    (theta_v + s [i = 1]) log n (``eq-attention``); the minimum over the words
    of a regular class is a shortest path of n steps in the product of the
    DFA with the previous symbol, computed by min-plus matrix powers
    (repeated squaring, about log2 n products).
    """
    if (
        model.readout != "linear"
        or model.vocab_size != task.vocab_size
        or model.first_position_score != task.first_position_marker
    ):
        raise ValueError("model must be a linear-readout model of this task, as built by task.model()")
    lengths_array = np.asarray(lengths, dtype=np.int64)
    if lengths_array.ndim != 1 or lengths_array.size == 0 or np.any(lengths_array < 1):
        raise ValueError(f"lengths must be a non-empty sequence of whole numbers >= 1, got {lengths!r}")
    theta = model.theta.detach().numpy().astype(np.float64)
    u = model.u.detach().numpy().astype(np.float64)
    marker = float(model.s.detach()) if task.first_position_marker else 0.0
    delta, start, accepting = _transition_table(task.dfa)
    states = len(task.dfa.states)
    # product state (q, last symbol) -> index 2 q + sigma
    feature = {
        "tokens": lambda previous, symbol: symbol,
        "bigram": lambda previous, symbol: 2 * previous + symbol,
        "cyclic-bigram": lambda previous, symbol: 2 * previous + symbol,
    }[task.features]
    result = np.empty((lengths_array.size, 2))
    log_n = np.log(lengths_array.astype(np.float64))
    top = np.max(theta) + max(marker, 0.0)
    weights = np.exp(np.outer(log_n, theta - top))  # (lengths, d): exp(theta_v log n - M)
    first_weights = np.exp(np.outer(log_n, theta + marker - top))
    if np.any(weights == 0) or np.any(first_weights == 0):
        raise ValueError(
            "model has attention scores too far apart for the float64 verifier at these lengths "
            "(a weight exp(score - max score) underflows to 0); use shorter lengths"
        )
    for column, label in enumerate((1, -1)):
        cost = label * u * weights
        first_cost = label * u * first_weights
        step = np.full((lengths_array.size, 2 * states, 2 * states), np.inf)
        for q in range(states):
            for previous in (0, 1):
                for symbol in (0, 1):
                    step[:, 2 * q + previous, 2 * delta[q, symbol] + symbol] = cost[:, feature(previous, symbol)]
        paths = _min_plus_power(step, lengths_array - 1)
        target = accepting if label == 1 else ~accepting
        best = np.full(lengths_array.size, np.inf)
        for first_symbol in (0, 1):
            source = 2 * delta[start, first_symbol] + first_symbol
            for last_symbol in (0, 1):
                predecessor = first_symbol if task.features != "cyclic-bigram" else last_symbol
                opening = first_cost[:, feature(predecessor, first_symbol)]
                ends = [2 * q + last_symbol for q in range(states) if target[q]]
                if not ends:
                    continue
                # at n = 1 the path has no step, so it ends where it starts: last_symbol = first_symbol
                best = np.minimum(best, opening + paths[:, source, ends].min(axis=1))
        result[:, column] = best
    return result


def _min_plus_power(matrices: NDArray[np.float64], exponents: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per batch entry, the min-plus power matrices[i]^exponents[i] (identity: 0 on the diagonal, inf elsewhere)."""
    size = matrices.shape[1]
    power = np.where(np.eye(size, dtype=bool), 0.0, np.inf)[None].repeat(matrices.shape[0], axis=0)
    base = matrices.copy()
    remaining = exponents.copy()
    while np.any(remaining > 0):
        odd = np.flatnonzero(remaining % 2 == 1)
        power[odd] = _min_plus_product(power[odd], base[odd])
        remaining //= 2
        active = np.flatnonzero(remaining > 0)  # square only where higher bits remain
        base[active] = _min_plus_product(base[active], base[active])
    return power


def _min_plus_product(left: NDArray[np.float64], right: NDArray[np.float64]) -> NDArray[np.float64]:
    """(left (x) right)[b, i, j] = min_k left[b, i, k] + right[b, k, j]."""
    return np.min(left[:, :, :, None] + right[:, None, :, :], axis=2)


def _check_length_and_label(length: int, label: int) -> None:
    """A string length >= 1 and a label +1 or -1."""
    check_integer(length, "length", 1)
    if label not in (1, -1):
        raise ValueError(f"label must be +1 (in the language) or -1 (outside), got {label!r}")


# -- the experiment --------------------------------------------------------------


def _default_horizon_lengths() -> tuple[int, ...]:
    """Every length 1..40, then 25 lengths spaced evenly in log from 41 to 1e12."""
    above = np.unique(np.round(np.geomspace(41, 1e12, 25)).astype(np.int64))
    return tuple(range(1, 41)) + tuple(int(n) for n in above)


@dataclass(frozen=True)
class LanguageExperiment:
    """The settings of the chapter's experiment (the same for every language and schedule).

    Training: ``steps`` SGD steps of ``batch`` strings with lengths <= ``max_train_length``,
    base step size ``lr``, ``warm_steps`` for lag and lead, ``big_step`` for
    one-step; the readout initialised i.i.d. N(0, init_scale^2), the
    attention at 0. Testing: accuracy on ``test_per_class`` strings of each
    class at each of ``test_lengths`` (tokens), and the exact worst case at
    each of ``horizon_lengths`` (:func:`worst_case_scores`).
    """

    steps: int = 150
    lr: float = 0.5
    warm_steps: int = 40
    big_step: float = 100.0
    batch: int = 32
    max_train_length: int = 40
    init_scale: float = 0.1
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    test_lengths: tuple[int, ...] = (5, 10, 20, 40, 50, 100, 200, 500, 1000)
    test_per_class: int = 32
    test_seed: int = 2023
    horizon_lengths: tuple[int, ...] = _default_horizon_lengths()


@dataclass(frozen=True)
class ScheduleRuns:
    """The runs of one schedule on one language, one row per seed.

    ``losses`` (seeds, steps) the training loss of every step;
    ``attention_moved`` and ``output_moved`` (seeds, steps) the Euclidean
    distance of each parameter group from its initial value before every
    step; ``accuracy`` (seeds, len(test_lengths)); ``horizon`` (seeds,) the
    largest of the horizon lengths up to which every string of every checked
    length is classified correctly (0 if already length 1 fails);
    ``recognised`` (seeds,) whether that is the largest checked length;
    ``attention`` (seeds, d or d + 1) the final theta (then s) and
    ``readout`` (seeds, d) the final u.
    """

    losses: NDArray[np.float64]
    attention_moved: NDArray[np.float64]
    output_moved: NDArray[np.float64]
    accuracy: NDArray[np.float64]
    horizon: NDArray[np.int64]
    recognised: NDArray[np.bool_]
    attention: NDArray[np.float64]
    readout: NDArray[np.float64]


def verified_horizon(model: ShallowTransformer, task: LanguageTask, lengths: Sequence[int]) -> int:
    """The largest n in ``lengths`` (ascending) with every word of every listed length <= n correct; 0 if none."""
    correct = np.all(worst_case_scores(model, task, lengths) > 0, axis=1)
    failures = np.flatnonzero(~correct)
    if failures.size == 0:
        return int(lengths[-1])
    return 0 if failures[0] == 0 else int(lengths[failures[0] - 1])


def _flat(parameters: list[torch.nn.Parameter]) -> torch.Tensor:
    """The parameters of a group as one detached vector."""
    return torch.cat([parameter.detach().reshape(-1) for parameter in parameters])


def run_language(
    task: LanguageTask, experiment: LanguageExperiment, schedules: Sequence[str]
) -> dict[str, ScheduleRuns]:
    """Train one model per (schedule, seed) and evaluate it; the same data and initialisation per seed.

    The seed fixes the training stream (:func:`training_stream`) and the
    readout's initialisation, so that the schedules differ only in their
    step sizes. Runs in float64 with whatever thread count torch is set to.
    """
    tests = evaluation_words(task, experiment.test_lengths, experiment.test_per_class, experiment.test_seed)
    fields = ("losses", "attention_moved", "output_moved", "accuracy", "horizon", "attention", "readout")
    rows: dict[str, dict[str, list]] = {name: {field: [] for field in fields} for name in schedules}
    for seed in experiment.seeds:
        data = training_stream(task, experiment.steps, experiment.batch, experiment.max_train_length, seed)
        for name in schedules:
            model = task.model()
            initialise(model, "random", experiment.init_scale, torch.Generator().manual_seed(seed))
            attention, output = model.attention_parameters(), model.output_parameters()
            start = (_flat(attention).clone(), _flat(output).clone())
            moved: list[tuple[float, float]] = []

            def loss_fn(step: int) -> torch.Tensor:
                moved.append((float((_flat(attention) - start[0]).norm()), float((_flat(output) - start[1]).norm())))  # noqa: B023 (called in this iteration only)
                return logistic_loss(model, task, data, step)  # noqa: B023

            phases = make_schedule(name, experiment.steps, experiment.lr, experiment.warm_steps, experiment.big_step)
            record = rows[name]
            record["losses"].append(train(attention, output, phases, loss_fn))
            record["attention_moved"].append([pair[0] for pair in moved])
            record["output_moved"].append([pair[1] for pair in moved])
            record["accuracy"].append([token_accuracy(model, *tests[n]) for n in experiment.test_lengths])
            record["horizon"].append(verified_horizon(model, task, experiment.horizon_lengths))
            record["attention"].append(_flat(attention).numpy())
            record["readout"].append(_flat(output).numpy())
    return {
        name: ScheduleRuns(
            losses=np.array(record["losses"]),
            attention_moved=np.array(record["attention_moved"]),
            output_moved=np.array(record["output_moved"]),
            accuracy=np.array(record["accuracy"]),
            horizon=np.array(record["horizon"], dtype=np.int64),
            recognised=np.array(record["horizon"]) == experiment.horizon_lengths[-1],
            attention=np.array(record["attention"]),
            readout=np.array(record["readout"]),
        )
        for name, record in rows.items()
    }
