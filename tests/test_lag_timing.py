"""The lag measurement (lagtheory.experiments.exploratory.lag_timing): half-times against hand-counted curves,
deciding positions against the DFAs (the label changes only where a deciding position changes, checked by
brute force), the one-layer model's per-position weights against the package's pooled vector (summed per
feature) and against a hand-written softmax, the transformer's against its own attention output, and the
recorded traces against the final parameters (the engine records a vector per run before every step).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
import torch

from lagtheory.count_forward import pooled_with_prefix
from lagtheory.experiments.engine.cells import TrainingConfig
from lagtheory.experiments.exploratory import lag_timing as L
from lagtheory.experiments.exploratory.studies import LANGUAGE_SETTING
from lagtheory.experiments.tasks.languages.catalogue import TASKS
from lagtheory.experiments.tasks.languages.features import feature_counts, padded_feature_ids
from lagtheory.experiments.tasks.languages.task import LanguageRuns
from lagtheory.experiments.tasks.transformer.languages import TRANSFORMER_LANGUAGES, dfa_labels
from lagtheory.experiments.tasks.transformer.task import TransformerLanguageRuns, TransformerSetting

SMALL = TransformerSetting(
    max_train_length=6, test_lengths=(6, 12), test_per_class=4, pairs_per_class=2, width=4, heads=2, mlp_width=4
)


def test_half_times_and_shares_by_hand():
    curves = np.array([[0.0, 0.1, 0.4, 0.6, 1.0], [2.0, 2.0, 1.0, 1.5, 1.0], [1.0, 3.0, 3.0, 2.0, 2.0]])
    # first: change 1, half reached at index 3 (0.6 >= 0.5); second: no net progress; third: change 1, index 1
    assert L.half_times(curves).tolist()[0] == 3 and math.isnan(L.half_times(curves)[1])
    assert L.half_times(curves)[2] == 1
    assert np.allclose(L.shares(curves)[0], [0, 0.1, 0.4, 0.6, 1.0]) and np.isnan(L.shares(curves)[1]).all()
    assert math.isnan(L.half_times(np.array([0.0, np.nan, 1.0])))


@pytest.mark.parametrize("language", ["FIRST", "LAST_B", "TWO_B", "CONTAINS_B_NOT_C", "CONTAINS_AB", "A_STAR_B_STAR"])
def test_deciding_positions_are_where_the_label_can_change(language):
    """Every single-letter change that flips the label (all words of length 5 over up to three letters) is at a
    deciding position of the word or of the changed word."""
    dfa = TRANSFORMER_LANGUAGES[language]
    k, n = len(dfa.alphabet), 5
    words = np.array(list(itertools.product(range(min(k, 3)), repeat=n)))
    labels = dfa_labels(dfa, words)
    mask = L.deciding_positions(language, words)
    index = {tuple(w): i for i, w in enumerate(words.tolist())}
    for i, word in enumerate(words):
        for position in range(n):
            for letter in range(min(k, 3)):
                other = word.copy()
                other[position] = letter
                j = index[tuple(other)]
                if labels[j] != labels[i]:
                    assert mask[i, position] or mask[j, position], (word, other)


def test_deciding_positions_for_bigram_features():
    words = np.array([[0, 1, 1, 0, 1], [1, 0, 0, 1, 1]])
    ab = L.deciding_positions("CONTAINS_AB", words, "bigram")
    assert ab.tolist() == [[False, True, False, False, True], [False, False, False, True, False]]
    ba = L.deciding_positions("A_STAR_B_STAR", words, "bigram")
    assert ba.tolist() == [[False, False, False, True, False], [False, True, False, False, False]]
    assert L.deciding_positions("EVEN_PAIRS", words, "cyclic-bigram")[:, 0].all()
    assert L.deciding_positions("EVEN_PAIRS", words)[:, [0, -1]].all()
    with pytest.raises(ValueError, match="language"):
        L.deciding_positions("PALINDROME", words)
    with pytest.raises(ValueError, match="features"):
        L.deciding_positions("FIRST", words, "trigram")


@pytest.mark.parametrize("name", ["FIRST", "FIRST_LEARNED", "CONTAINS_AB", "EVEN_PAIRS", "CONTAINS_B_NOT_C"])
def test_one_layer_weights_sum_to_the_pooled_vector_and_follow_the_formula(name):
    task = LanguageRuns(TASKS[name], LANGUAGE_SETTING)
    generator = torch.Generator().manual_seed(3)
    shapes = task.parameter_shapes()
    params = {k: torch.randn((2, 3, *s), generator=generator, dtype=torch.float64) for k, (s, _) in shapes.items()}
    rng = np.random.default_rng(0)
    words = rng.integers(0, task.task.alphabet_size, size=(5, 9))
    weights = L.one_layer_weights(task, params, words)
    spec = task.task
    ids = padded_feature_ids(words, np.full(5, 9), spec.features, spec.alphabet_size)
    counts = torch.from_numpy(feature_counts(ids, spec.vocab_size))
    prefix = torch.from_numpy(ids[:, : spec.position_scores]) if spec.position_scores else None
    if prefix is not None:
        scores = params["s"].unsqueeze(-1) if spec.first_position_marker else params["s"]
        pooled = pooled_with_prefix(params["theta"], scores, counts, prefix, "log")
        summed = torch.zeros_like(pooled).scatter_add_(-1, torch.from_numpy(ids).expand(2, 3, 5, 9), weights)
        assert torch.allclose(summed, pooled, rtol=0, atol=1e-12)
    for r, s, w in itertools.product(range(2), range(3), range(5)):  # by hand: n^(theta + s_i) / sum
        extra = [0.0] * 9
        if spec.position_scores:
            values = np.atleast_1d(params["s"][r, s].numpy())
            extra[: len(values)] = values.tolist()
        powers = [9.0 ** (params["theta"][r, s, ids[w, i]].item() + extra[i]) for i in range(9)]
        assert np.allclose(weights[r, s, w].numpy(), np.array(powers) / sum(powers), rtol=1e-12, atol=0)


def test_transformer_weights_are_the_models_attention_on_the_letters():
    task = TransformerLanguageRuns("TWO_B", dataclasses.replace(SMALL, positions="first", scaling="log"))
    generator = torch.Generator().manual_seed(1)
    params = {
        k: torch.randn((1, 2, *s), generator=generator, dtype=torch.float64)
        for k, (s, _) in task.parameter_shapes().items()
    }
    words = np.array([[0, 1, 1, 0], [1, 1, 1, 1]])
    weights = L.transformer_weights(task, params, words)
    tokens = torch.tensor([[2, 0, 1, 1, 0], [2, 1, 1, 1, 1]])
    for s in range(2):
        one = {k: v[0, s] for k, v in params.items()}
        full = torch.func.functional_call(task.model, one, (tokens, torch.ones_like(tokens, dtype=torch.bool), True))
        assert torch.allclose(weights[0, s], full.mean(dim=1)[:, 1:], rtol=0, atol=1e-14)


def test_traces_follow_the_run_and_end_at_the_final_parameters():
    """The engine records the observed readout (a vector per run) before every step: entry 0 is the initial
    readout, and the curves' last point is computed from the trained parameters; the one-layer model's
    attention starts at 0, so its mass starts at the share of deciding positions."""
    task = L.TimedTask(LanguageRuns(TASKS["CONTAINS_B_NOT_C"], LANGUAGE_SETTING), 12)
    config = TrainingConfig(steps=20, attention_lr=0.5, output_lr=0.5, warm_steps=5, big_step=1.0, batch_size=8)
    found = L.run_timing(task, config, [400_000, 400_001])
    assert found["output"].shape == (2, 21) and found["attention"].shape == (2, 21)
    assert np.allclose(found["output"][:, -1], 1.0, rtol=0, atol=1e-12)
    assert np.allclose(found["projection"][:, -1], 1.0, rtol=0, atol=1e-12)
    assert np.all(np.abs(found["output"]) <= 1 + 1e-12)
    mask = task.mask.numpy()
    uniform = (mask.sum(axis=1) / mask.shape[1])[mask.any(axis=1)].mean()
    assert np.allclose(found["attention"][:, 0], uniform, rtol=0, atol=1e-12)
    assert np.all(np.isfinite(found["output_half"])) and np.all(found["output_half"] <= 20)
    summary = L.summary(found["output_half"], found["attention_half"])
    assert summary["seeds"] + summary["undefined"] == 2
    assert summary["lags"] + summary["leads"] + summary["ties"] == summary["seeds"]
