"""Tests of the language tasks (catalogue, features, word sampling, the exact
worst-case verifier and the engine task).

Independent references: brute-force enumeration of all words up to length 10
(labels from the DFA's own ``accepts``, outputs from the model's token path),
hand-derived feature sequences, closed forms of the worst case of the witness
parameters at n = 1e12, and a min-plus matrix power in 60-digit mpmath
arithmetic (no signed-log numbers) for the models of the three-phase
schedule, whose scores lie beyond float64's range.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import mpmath
import numpy as np
import pytest
import torch

from lagtheory.experiments.engine.cells import run_cell
from lagtheory.experiments.exploratory.studies import LANGUAGES
from lagtheory.experiments.tasks.languages.catalogue import TASKS
from lagtheory.experiments.tasks.languages.features import feature_counts, feature_ids, padded_feature_ids
from lagtheory.experiments.tasks.languages.sampling import (
    class_is_nonempty,
    labelled_words,
    sample_strings,
    transition_table,
)
from lagtheory.experiments.tasks.languages.task import (
    LANGUAGE_TRAINING,
    LanguageRuns,
    LanguageSetting,
    default_horizon_lengths,
)
from lagtheory.experiments.tasks.languages.worst_case import (
    verified_horizon,
    verified_horizons,
    worst_case,
    worst_case_scores,
)
from lagtheory.languages import CONTAINS_AB, EVEN_PAIRS

EXPRESSIBLE = [name for name, task in TASKS.items() if task.witness is not None]
"""The catalogue's languages the one-layer model claims to express (a witness is given): the package's own list."""


def _all_words(n: int, k: int = 2) -> np.ndarray:
    return np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int64)


def _labels(dfa, words: np.ndarray) -> np.ndarray:
    return np.array([1 if dfa.accepts([dfa.alphabet[s] for s in word]) else -1 for word in words])


def _definition_scores(task, theta, u, s, words):
    """y-free quantities by the definitions, word by word: the output f (eq-readout with the weights of
    eq-attention, each position's score theta_(v_i) + s_i times log n) and Z = sum_i n^(score_i)."""
    n = words.shape[1]
    ids = feature_ids(words, task.features, task.alphabet_size)
    scores = np.array(theta)[ids]
    if task.position_scores:
        extra = np.zeros(n)
        position = np.atleast_1d(np.asarray(s, dtype=float))[:n]
        extra[: position.size] = position
        scores = scores + extra
    weights = np.exp(scores * math.log(n)) if n > 1 else np.ones_like(scores)
    normaliser = weights.sum(axis=1)
    outputs = (weights * np.array(u)[ids]).sum(axis=1) / normaliser
    return outputs, normaliser


def _model_with(task, theta, u, s=None):
    model = task.model()
    with torch.no_grad():
        model.theta.copy_(torch.tensor(theta, dtype=torch.float64))
        model.u.copy_(torch.tensor(u, dtype=torch.float64))
        if s is not None:
            model.s.fill_(s)
    return model


def _token_outputs(model, ids: np.ndarray) -> np.ndarray:
    tokens = torch.from_numpy(ids)
    with torch.no_grad():
        return model(tokens, torch.ones_like(tokens, dtype=torch.bool)).numpy()


def test_feature_ids_by_hand():
    word = np.array([[0, 1, 1]])  # "abb"
    assert feature_ids(word, "tokens").tolist() == [[0, 1, 1]]
    # bigram ids 2 prev + cur (aa 0, ab 1, ba 2, bb 3); position 1 is its own predecessor
    assert feature_ids(word, "bigram").tolist() == [[0, 1, 3]]
    # cyclic: position 1's predecessor is the last symbol b, so (b, a) = ba = 2
    assert feature_ids(word, "cyclic-bigram").tolist() == [[2, 1, 3]]
    assert feature_counts(np.array([[2, 1, 3, 3]]), 4).tolist() == [[0.0, 1.0, 1.0, 2.0]]


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("FIRST", lambda ids: ids[0] == 1),
        ("EVEN_PAIRS", lambda ids: ids[0] in (0, 3)),  # position 1's cyclic bigram is aa or bb
        ("CONTAINS_AB", lambda ids: 1 in ids),
        ("A_STAR_B_STAR", lambda ids: 2 not in ids),
        ("CONTAINS_B_NOT_C", lambda ids: 1 in ids and 2 not in ids),
        ("FIRST_LEARNED", lambda ids: ids[0] == 1),
    ],
)
def test_the_features_determine_the_label_as_the_task_claims(name, rule):
    task = TASKS[name]
    for n in range(1, 11 if task.alphabet_size == 2 else 5):
        words = _all_words(n, task.alphabet_size)
        ids = feature_ids(words, task.features, task.alphabet_size)
        predicted = np.array([1 if rule(list(row)) else -1 for row in ids])
        assert np.array_equal(predicted, _labels(task.dfa, words)), (name, n)


def test_tokens_alone_cannot_tell_first_or_even_pairs():
    """Permutation invariance: 'aba' and 'aab' (and 'ab', 'ba') have the same token counts but different labels."""
    assert EVEN_PAIRS.accepts("aba") and not EVEN_PAIRS.accepts("aab")
    assert TASKS["FIRST"].dfa.accepts("ba") and not TASKS["FIRST"].dfa.accepts("ab")


@pytest.mark.parametrize("name", list(TASKS))
def test_class_is_nonempty_matches_enumeration(name):
    dfa = TASKS[name].dfa
    for n in range(1, 9 if len(dfa.alphabet) == 2 else 4):
        labels = set(_labels(dfa, _all_words(n, len(dfa.alphabet))).tolist())
        for label in (1, -1):
            assert class_is_nonempty(dfa, n, label) == (label in labels), (name, n, label)


def test_sampling_is_uniform_within_the_class():
    rng = np.random.default_rng(0)
    draws = 20000
    for dfa, n in ((CONTAINS_AB, 5), (EVEN_PAIRS, 5), (TASKS["CONTAINS_B_NOT_C"].dfa, 2)):
        for label in (1, -1):
            words = _all_words(n, len(dfa.alphabet))
            members = {tuple(w) for w, y in zip(words, _labels(dfa, words), strict=False) if y == label}
            sample = sample_strings(dfa, n, label, draws, rng)
            assert all(tuple(w) in members for w in sample)
            counts = np.array([sum(1 for w in sample if tuple(w) == m) for m in sorted(members)])
            expected = draws / len(members)
            # every member within 5 binomial standard deviations of draws / |class|
            sd = math.sqrt(draws * (1 / len(members)) * (1 - 1 / len(members)))
            assert np.all(np.abs(counts - expected) < 5 * sd), (label, counts, expected)


def test_sampling_rejects_an_empty_class_and_bad_labels():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="label"):
        sample_strings(CONTAINS_AB, 1, 1, 3, rng)  # no word of length 1 contains ab
    with pytest.raises(ValueError, match="label"):
        sample_strings(CONTAINS_AB, 3, 0, 3, rng)
    with pytest.raises(ValueError, match="length"):
        sample_strings(CONTAINS_AB, 0, 1, 3, rng)
    with pytest.raises(ValueError, match="features"):
        feature_ids(np.zeros((1, 2), dtype=np.int64), "trigram")


@pytest.mark.parametrize("name", list(TASKS))
def test_worst_case_scores_match_brute_force(name):
    """The verifier against every word up to length 10 (length 4 over eight letters), with y f Z computed
    from the definitions word by word (:func:`_definition_scores`), at random parameters."""
    task = TASKS[name]
    rng = np.random.default_rng(7)
    theta, u = rng.normal(size=task.vocab_size), rng.normal(size=task.vocab_size)
    s = 0.8 if task.first_position_marker else rng.normal(size=task.position_scores) if task.position_scores else None
    lengths = list(range(1, 11 if task.alphabet_size == 2 else 5))
    scores = worst_case(task, theta, u, s, lengths).value()[0]
    for n in lengths:
        words = _all_words(n, task.alphabet_size)
        labels = _labels(task.dfa, words)
        outputs, normaliser = _definition_scores(task, theta, u, s, words)
        for column, label in enumerate((1, -1)):
            chosen = labels == label
            expected = np.min(label * outputs[chosen] * normaliser[chosen]) if chosen.any() else math.inf
            assert scores[n - 1, column] == pytest.approx(expected, rel=1e-9, abs=1e-12), (n, label)


def test_token_path_model_agrees_with_the_definitions():
    """The brute-force reference itself, against the model's token path (a second implementation)."""
    for name in ("FIRST", "EVEN_PAIRS", "CONTAINS_AB"):
        task = TASKS[name]
        rng = np.random.default_rng(3)
        theta, u = rng.normal(size=task.vocab_size), rng.normal(size=task.vocab_size)
        s = 0.7 if task.first_position_marker else None
        model = _model_with(task, theta.tolist(), u.tolist(), s)
        for n in (1, 2, 5):
            words = _all_words(n)
            outputs, _ = _definition_scores(task, theta, u, s, words)
            np.testing.assert_allclose(outputs, _token_outputs(model, feature_ids(words, task.features)), rtol=1e-12)


def test_worst_case_at_1e12_matches_the_closed_form_for_contains_ab():
    """Witness theta_ab = 2, u = (-1, 1, -1, -1): with k >= 1 ab's, y f Z = k n^2 - (n - k),
    smallest at k = 1; negatives (no ab) give y f Z = n (every position costs +1)."""
    task = TASKS["CONTAINS_AB"]
    witness = task.witness
    model = _model_with(task, witness["theta"], witness["u"])
    n = 10**12
    scores = worst_case_scores(model, task, [n]).value()[0]
    assert scores[0] == pytest.approx(n**2 - n + 1, rel=1e-12)
    assert scores[1] == pytest.approx(n, rel=1e-12)


def test_worst_case_beyond_float_range_matches_the_closed_form():
    """theta_ab = 40 at n = 1e12: n^40 = 1e480 overflows float64 and the negatives' weights relative to
    it (1e-468) underflow; by hand the positives' minimum is n^40 - n + 1 (one ab) and the negatives'
    is n, so log |.| = 40 log n (to 1e-400) and log n."""
    task = TASKS["CONTAINS_AB"]
    model = _model_with(task, [0.0, 40.0, 0.0, 0.0], [-1.0, 1.0, -1.0, -1.0])
    n = 10**12
    result = worst_case_scores(model, task, [n])
    assert result.sign[0].tolist() == [1.0, 1.0]
    assert result.log_magnitude[0, 0] == pytest.approx(40 * math.log(n), rel=1e-15)
    assert result.log_magnitude[0, 1] == pytest.approx(math.log(n), rel=1e-15)
    assert verified_horizon(model, task, [1, 2, 10**6, n]) == n


def test_every_language_the_study_trains_has_a_witness():
    """The expressibility gate on the package's own list: a language the one-layer model cannot express
    (no witness, as the control PARITY) is not one of the languages study's tasks."""
    trained = [design.name for design in LANGUAGES.tasks]
    assert trained and [name for name in trained if TASKS[name].witness is None] == []
    assert set(trained) <= set(EXPRESSIBLE)


@pytest.mark.parametrize("name", EXPRESSIBLE)
def test_witnesses_recognise_their_language(name):
    task = TASKS[name]
    witness = task.witness
    for n in range(1, 11 if task.alphabet_size == 2 else 5):  # brute force by the definitions
        words = _all_words(n, task.alphabet_size)
        outputs, _ = _definition_scores(task, witness["theta"], witness["u"], witness.get("s"), words)
        assert np.all(_labels(task.dfa, words) * outputs > 0), n
    lengths = [*list(range(1, 41)), 10**3, 10**6, 10**9, 10**12]
    horizon = verified_horizons(task, witness["theta"], witness["u"], witness.get("s"), lengths)
    assert horizon.tolist() == [10**12]


def test_learned_position_scores_reduce_to_the_marker():
    """FIRST with four learned position scores (s, 0, 0, 0) is FIRST with the marker s."""
    rng = np.random.default_rng(5)
    theta, u = rng.normal(size=(6, 2)), rng.normal(size=(6, 2))
    s = rng.normal(size=6) * 2
    learned = np.stack([s, np.zeros(6), np.zeros(6), np.zeros(6)], axis=1)
    lengths = [1, 2, 3, 4, 5, 9, 100, 10**9]
    ours = worst_case(TASKS["FIRST_LEARNED"], theta, u, learned, lengths)
    marker = worst_case(TASKS["FIRST"], theta, u, s, lengths)
    np.testing.assert_array_equal(ours.sign, marker.sign)
    np.testing.assert_allclose(ours.log_magnitude, marker.log_magnitude, rtol=1e-13)


def test_parity_fails_at_length_two_for_any_parameters():
    """At n = 2 the output is monotone in the number of b's (aa +, ab/ba -, bb +): no parameters get all three right."""
    task = TASKS["PARITY"]
    generator = torch.Generator().manual_seed(3)
    for _ in range(200):
        theta = (3 * torch.randn(2, dtype=torch.float64, generator=generator)).tolist()
        u = (3 * torch.randn(2, dtype=torch.float64, generator=generator)).tolist()
        model = _model_with(task, theta, u)
        assert np.any(worst_case_scores(model, task, [2]).sign[0] <= 0)
        assert verified_horizon(model, task, [1, 2, 3]) <= 1


def test_verifier_refuses_a_model_of_another_task():
    with pytest.raises(ValueError, match="model"):
        worst_case_scores(TASKS["CONTAINS_AB"].model(), TASKS["EVEN_PAIRS"], [3])


def _mpmath_worst_case(task, theta, u, s, n):
    """min over the words of length n with each label of sum_i y u_(v_i) n^(score_i), by a min-plus matrix
    power over the product of the DFA with the previous symbol in 60-digit mpmath numbers (plain values,
    no signed logs): an implementation independent of lagtheory.experiments.tasks.languages.worst_case."""
    mpmath.mp.dps = 60
    delta, start, accepting = transition_table(task.dfa)
    states = 2 * len(task.dfa.states)
    big = mpmath.mpf(10) ** 100000

    def feature(previous, symbol):
        return symbol if task.features == "tokens" else 2 * previous + symbol

    def product(left, right):
        return [[min(left[i][k] + right[k][j] for k in range(states)) for j in range(states)] for i in range(states)]

    result = []
    for label in (1, -1):
        cost = [label * mpmath.mpf(u[v]) * mpmath.power(n, mpmath.mpf(theta[v])) for v in range(task.vocab_size)]
        step = [[big] * states for _ in range(states)]
        for q in range(len(task.dfa.states)):
            for previous in (0, 1):
                for symbol in (0, 1):
                    step[2 * q + previous][2 * delta[q, symbol] + symbol] = cost[feature(previous, symbol)]
        power = [[mpmath.mpf(0) if i == j else big for j in range(states)] for i in range(states)]
        base, exponent = step, n - 1
        while exponent:
            if exponent % 2:
                power = product(power, base)
            base = product(base, base)
            exponent //= 2
        target = accepting if label == 1 else ~accepting
        best = big
        for first in (0, 1):
            for last in (0, 1):
                predecessor = last if task.features == "cyclic-bigram" else first
                v = feature(predecessor, first)
                opening = label * mpmath.mpf(u[v]) * mpmath.power(n, mpmath.mpf(theta[v]) + mpmath.mpf(s or 0.0))
                for q in range(len(task.dfa.states)):
                    if target[q]:
                        best = min(best, opening + power[2 * delta[start, first] + first][2 * q + last])
        result.append(best)
    return result


@pytest.mark.parametrize("name", ["CONTAINS_AB", "A_STAR_B_STAR"])
def test_the_verifier_decides_three_phase_with_attention_step_100(name):
    """The case that made the float64 verifier raise: three-phase with an attention step of 100 on the
    bigram languages (here with a first output step of 20, which makes the readout, and so the attention step,
    large). The signed-log verifier returns a verdict, and its worst case agrees with 60-digit mpmath."""
    runs = LanguageRuns(TASKS[name], LanguageSetting())
    config = dataclasses.replace(LANGUAGE_TRAINING, first_output_step=20.0)
    result = run_cell(runs, config, ["three-phase"], (0, 1, 2, 3))
    theta, u = result.final["theta"][0], result.final["u"][0]
    assert config.big_step == 100.0
    spread = (theta.max(axis=1) - theta.min(axis=1)) * math.log(1e12)
    assert np.any(spread > 745)  # beyond exp's float64 range: the old verifier raised here
    horizons = verified_horizons(TASKS[name], theta, u, None, default_horizon_lengths())
    np.testing.assert_array_equal(horizons, result.metrics["horizon"][0])
    lengths = [2, 7, 1000, 10**12]
    ours = worst_case(TASKS[name], theta, u, None, lengths)
    for model in range(len(theta)):
        for i, n in enumerate(lengths):
            reference = _mpmath_worst_case(TASKS[name], theta[model], u[model], None, n)
            for column in range(2):
                value = reference[column]
                assert ours.sign[model, i, column] == float(mpmath.sign(value)), (model, n, column)
                if value != 0:
                    assert ours.log_magnitude[model, i, column] == pytest.approx(
                        float(mpmath.log(abs(value))), rel=1e-12
                    )


@pytest.mark.parametrize("name", list(TASKS))
def test_training_stream_labels_lengths_and_counts_path(name):
    task = TASKS[name]
    runs = LanguageRuns(task, LanguageSetting(max_train_length=12, test_lengths=(7, 30), test_per_class=5))
    stream = runs.training_stream((5, 6), steps=3, batch_size=50)
    again = runs.training_stream((5,), steps=3, batch_size=50)
    assert torch.equal(stream.counts[0], again.counts[0]) and torch.equal(stream.labels[0], again.labels[0])
    lengths = stream.counts.sum(-1)
    assert torch.all((lengths >= 1) & (lengths <= 12))
    assert set(stream.labels.unique().tolist()) == {-1.0, 1.0}
    if name == "CONTAINS_AB":  # independent label rule: contains ab iff the ab count is >= 1
        assert torch.equal(stream.labels > 0, stream.counts[..., 1] >= 1)
    # the counts path equals the definitions on words of the test lengths
    counts, _, _ = runs.test_words()
    rng = np.random.default_rng(1)
    theta = np.array([0.3] + [-0.2] * (task.vocab_size - 1))
    u = np.linspace(-1, 1, task.vocab_size)
    s = (
        0.5
        if task.first_position_marker
        else np.linspace(0.6, -0.3, task.position_scores)
        if task.position_scores
        else None
    )
    params = {"theta": torch.from_numpy(theta), "u": torch.from_numpy(u)}
    if s is not None:
        params["s"] = torch.tensor(s, dtype=torch.float64)
    for index, n in enumerate((7, 30)):
        words = np.concatenate([sample_strings(task.dfa, n, label, 5, rng) for label in (1, -1)])
        word_counts, prefix = runs.words_to_counts(words, np.full(len(words), n))
        via_counts = runs.outputs(params, torch.from_numpy(word_counts), torch.from_numpy(prefix))
        expected, _ = _definition_scores(task, theta, u, s, words)
        assert np.allclose(via_counts.numpy(), expected, rtol=1e-12, atol=1e-14)
        assert counts.shape[:2] == (2, 10) and torch.all(counts[index].sum(-1) == n)


def test_labelled_words_follow_the_training_distribution():
    """Labels +-1 with probability 1/2; the length uniform over the lengths where the class is non-empty;
    each word in its class. CONTAINS_AB has positives from length 2 on, negatives at every length."""
    uniforms = np.random.default_rng(3).random((40000, 10 + 2))
    labels, lengths, words = labelled_words(CONTAINS_AB, 10, uniforms)
    assert abs(np.mean(labels == 1) - 0.5) < 5 * 0.5 / math.sqrt(40000)
    for label, allowed in ((1, range(2, 11)), (-1, range(1, 11))):
        chosen = lengths[labels == label]
        frequencies = np.array([np.mean(chosen == n) for n in allowed])
        p = 1 / len(allowed)
        assert np.all(np.abs(frequencies - p) < 5 * math.sqrt(p * (1 - p) / chosen.size)), label
    for word, n, label in zip(words[:300], lengths[:300], labels[:300], strict=True):
        assert CONTAINS_AB.accepts("".join("ab"[c] for c in word[:n])) == (label == 1)


def test_padded_features_by_hand():
    words = np.array([[0, 1, 1, 0], [1, 0, 0, 0]])  # "abb" (+ padding) and "ba"
    lengths = np.array([3, 2])
    assert padded_feature_ids(words, lengths, "bigram").tolist() == [[0, 1, 3, -1], [3, 2, -1, -1]]
    assert padded_feature_ids(words, lengths, "cyclic-bigram").tolist() == [[2, 1, 3, -1], [1, 2, -1, -1]]
    ids = padded_feature_ids(words, lengths, "bigram")
    assert feature_counts(ids, 4).tolist() == [[1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]]
