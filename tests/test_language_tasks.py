"""Tests of the language tasks (lagtheory.experiments.language_tasks).

Independent references: brute-force enumeration of all words up to length 10
(labels from the DFA's own ``accepts``, outputs from the model's token path),
hand-derived feature sequences, and closed forms of the worst case of the
witness parameters at n = 1e12.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from lagtheory.experiments.language_tasks import (
    TASKS,
    LanguageExperiment,
    class_is_nonempty,
    counts_output,
    evaluation_words,
    feature_counts,
    feature_ids,
    run_language,
    sample_strings,
    training_stream,
    verified_horizon,
    worst_case_scores,
)
from lagtheory.languages import CONTAINS_AB, EVEN_PAIRS

STAR_FREE = ("FIRST", "EVEN_PAIRS", "CONTAINS_AB", "A_STAR_B_STAR")


def _all_words(n: int) -> np.ndarray:
    return np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64)


def _labels(dfa, words: np.ndarray) -> np.ndarray:
    return np.array([1 if dfa.accepts("".join("ab"[s] for s in word)) else -1 for word in words])


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
    ],
)
def test_the_features_determine_the_label_as_the_task_claims(name, rule):
    task = TASKS[name]
    for n in range(1, 11):
        words = _all_words(n)
        ids = feature_ids(words, task.features)
        predicted = np.array([1 if rule(list(row)) else -1 for row in ids])
        assert np.array_equal(predicted, _labels(task.dfa, words)), (name, n)


def test_tokens_alone_cannot_tell_first_or_even_pairs():
    """Permutation invariance: 'aba' and 'aab' (and 'ab', 'ba') have the same token counts but different labels."""
    assert EVEN_PAIRS.accepts("aba") and not EVEN_PAIRS.accepts("aab")
    assert TASKS["FIRST"].dfa.accepts("ba") and not TASKS["FIRST"].dfa.accepts("ab")


@pytest.mark.parametrize("name", list(TASKS))
def test_class_is_nonempty_matches_enumeration(name):
    dfa = TASKS[name].dfa
    for n in range(1, 9):
        labels = set(_labels(dfa, _all_words(n)).tolist())
        for label in (1, -1):
            assert class_is_nonempty(dfa, n, label) == (label in labels), (name, n, label)


def test_sampling_is_uniform_within_the_class():
    rng = np.random.default_rng(0)
    n, draws = 5, 20000
    for dfa in (CONTAINS_AB, EVEN_PAIRS):
        for label in (1, -1):
            words = _all_words(n)
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
    task = TASKS[name]
    generator = torch.Generator().manual_seed(7)
    theta = torch.randn(task.vocab_size, dtype=torch.float64, generator=generator).tolist()
    u = torch.randn(task.vocab_size, dtype=torch.float64, generator=generator).tolist()
    s = 0.8 if task.first_position_marker else None
    model = _model_with(task, theta, u, s)
    lengths = list(range(1, 11))
    scores = worst_case_scores(model, task, lengths)
    for n in lengths:
        words = _all_words(n)
        ids = feature_ids(words, task.features)
        labels = _labels(task.dfa, words)
        outputs = _token_outputs(model, ids)
        # Z = sum_i exp(score_i - M) with M = (max theta + max(s, 0)) log n, from the definition of the scores
        raw = np.array(theta)[ids] + (np.eye(n)[0] * (s or 0.0))
        top = max(theta) + max(s or 0.0, 0.0)
        normaliser = np.exp((raw - top) * math.log(n)).sum(axis=1)
        for column, label in enumerate((1, -1)):
            chosen = labels == label
            expected = np.min(label * outputs[chosen] * normaliser[chosen]) if chosen.any() else math.inf
            assert scores[n - 1, column] == pytest.approx(expected, rel=1e-9, abs=1e-12), (n, label)


def test_worst_case_at_1e12_matches_the_closed_form_for_contains_ab():
    """Witness theta_ab = 2, u = (-1, 1, -1, -1): with k >= 1 ab's, y f Z = (k n^2 - (n - k)) / n^2,
    smallest at k = 1; negatives (no ab) give y f Z = n / n^2 = 1 / n."""
    task = TASKS["CONTAINS_AB"]
    witness = task.witness
    model = _model_with(task, witness["theta"], witness["u"])
    n = 10**12
    scores = worst_case_scores(model, task, [n])[0]
    assert scores[0] == pytest.approx((n**2 - n + 1) / n**2, rel=1e-12)
    assert scores[1] == pytest.approx(1 / n, rel=1e-9)


@pytest.mark.parametrize("name", STAR_FREE)
def test_witnesses_recognise_their_language(name):
    task = TASKS[name]
    witness = task.witness
    model = _model_with(task, witness["theta"], witness["u"], witness.get("s"))
    for n in range(1, 11):  # brute force on the token path
        words = _all_words(n)
        outputs = _token_outputs(model, feature_ids(words, task.features))
        assert np.all(_labels(task.dfa, words) * outputs > 0), n
    lengths = [*list(range(1, 41)), 10**3, 10**6, 10**9, 10**12]
    assert verified_horizon(model, task, lengths) == 10**12


def test_parity_fails_at_length_two_for_any_parameters():
    """At n = 2 the output is monotone in the number of b's (aa +, ab/ba -, bb +): no parameters get all three right."""
    task = TASKS["PARITY"]
    generator = torch.Generator().manual_seed(3)
    for _ in range(200):
        theta = (3 * torch.randn(2, dtype=torch.float64, generator=generator)).tolist()
        u = (3 * torch.randn(2, dtype=torch.float64, generator=generator)).tolist()
        model = _model_with(task, theta, u)
        assert np.any(worst_case_scores(model, task, [2])[0] <= 0)
        assert verified_horizon(model, task, [1, 2, 3]) <= 1


def test_verifier_refuses_a_model_of_another_task():
    with pytest.raises(ValueError, match="model"):
        worst_case_scores(TASKS["CONTAINS_AB"].model(), TASKS["EVEN_PAIRS"], [3])


def test_verifier_refuses_underflow():
    task = TASKS["CONTAINS_AB"]
    model = _model_with(task, [0.0, 40.0, 0.0, 0.0], [-1.0, 1.0, -1.0, -1.0])
    with pytest.raises(ValueError, match="underflow"):
        worst_case_scores(model, task, [10**12])


@pytest.mark.parametrize("name", list(TASKS))
def test_training_stream_labels_lengths_and_counts_path(name):
    task = TASKS[name]
    batch = training_stream(task, steps=3, batch=50, max_length=12, seed=5)
    again = training_stream(task, steps=3, batch=50, max_length=12, seed=5)
    assert torch.equal(batch.counts, again.counts) and torch.equal(batch.labels, again.labels)
    lengths = batch.counts.sum(-1)
    assert torch.all((lengths >= 1) & (lengths <= 12))
    assert set(batch.labels.unique().tolist()) == {-1.0, 1.0}
    if name == "CONTAINS_AB":  # independent label rule: contains ab iff the ab count is >= 1
        assert torch.equal(batch.labels > 0, batch.counts[..., 1] >= 1)
    # the counts path equals the token path on the test words
    tests = evaluation_words(task, [7, 30], per_class=5, seed=1)
    model = _model_with(
        task,
        [0.3] + [-0.2] * (task.vocab_size - 1),
        list(np.linspace(-1, 1, task.vocab_size)),
        0.5 if task.first_position_marker else None,
    )
    for tokens, _ in tests.values():
        ids = tokens.numpy()
        counts = torch.from_numpy(feature_counts(ids, task.vocab_size))
        via_counts = counts_output(model, task, counts, tokens[:, 0]).detach().numpy()
        assert np.allclose(via_counts, _token_outputs(model, ids), rtol=1e-12, atol=1e-14)


def test_run_language_shares_data_and_initialisation_across_schedules():
    experiment = LanguageExperiment(
        steps=6, warm_steps=2, seeds=(0, 1), test_lengths=(5, 50), test_per_class=4, horizon_lengths=(1, 2, 3, 100)
    )
    runs = run_language(TASKS["CONTAINS_AB"], experiment, ["joint", "lag", "lead"])
    # same init and first batch: the loss before the first step is the same for every schedule
    assert (
        runs["joint"].losses[:, 0].tolist() == runs["lag"].losses[:, 0].tolist() == runs["lead"].losses[:, 0].tolist()
    )
    # lag: the attention has not moved before step warm_steps (it is 0 at the start: initialise sets it so)
    assert np.all(runs["lag"].attention_moved[:, :3] == 0) and np.all(runs["lag"].attention_moved[:, 3] > 0)
    assert np.all(runs["lead"].output_moved[:, :3] == 0)
    assert runs["joint"].losses.shape == (2, 6) and runs["joint"].accuracy.shape == (2, 2)
    assert np.all(runs["joint"].horizon <= 100)
