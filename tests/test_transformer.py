"""Tests of the standard small transformer as an engine task.

Independent references: a from-scratch forward pass written here with explicit loops over heads
and words (plain arithmetic for the layer norm, softmax and GELU, the sinusoidal table from the
formula), unbatched ``functional_call`` for the vmapped batch, the same seeds trained one at a
time for the seed-batched engine, brute-force enumeration with ``DFA.accepts`` for the labels and
minimal pairs, Schutzenberger's test (:mod:`lagtheory.star_free`) for star-freeness, and torch's
own ``FlopCounterMode`` for the FLOP count.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from lagtheory.dfa import DFA
from lagtheory.experiments.engine.cells import initial_parameters, run_cell, standard_draws
from lagtheory.experiments.tasks.languages.catalogue import TASKS
from lagtheory.experiments.tasks.transformer.languages import (
    NEW_LANGUAGES,
    STUDY_LANGUAGES,
    TRANSFORMER_LANGUAGES,
    dfa_labels,
    hard_words,
    minimal_pairs,
    run_words,
)
from lagtheory.experiments.tasks.transformer.model import (
    SmallTransformer,
    TransformerShape,
    batched_outputs,
    forward_flops,
    parameter_groups,
    sinusoidal_positions,
)
from lagtheory.experiments.tasks.transformer.task import (
    TRANSFORMER_TRAINING,
    TransformerLanguageRuns,
    TransformerSetting,
)
from lagtheory.languages import LANGUAGES
from lagtheory.star_free import is_star_free

SMALL = TransformerSetting(max_train_length=6, test_lengths=(6, 12), test_per_class=4, pairs_per_class=2)
TINY_TRAINING = dataclasses.replace(TRANSFORMER_TRAINING, steps=8, warm_steps=3, batch_size=4)


def _word(dfa: DFA, symbols) -> list:
    return [dfa.alphabet[s] for s in symbols]


def _random_params(shape: TransformerShape, lead: tuple[int, ...], seed: int = 0) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return {
        name: 0.7 * torch.randn((*lead, *size), generator=generator, dtype=torch.float64)
        for name, (size, _) in parameter_groups(shape).items()
    }


# -- the model against a from-scratch forward -------------------------------------------------


def _reference(shape: TransformerShape, p: dict[str, torch.Tensor], word: list[int]) -> tuple[float, list]:
    """The output on one word and the last layer's attention weights of the classification token (per head),
    from the definitions: every layer at every position, position by position and head by head; the
    length-scaled weights as powers m^s / sum m^s (the book's form), the plain ones by exp."""
    d, h = shape.width, shape.heads
    e = d // h
    k = shape.alphabet_size
    tokens = [k, *word]
    n = len(tokens)
    if shape.positions == "learned":
        pos = p["positions"].tolist()
    elif shape.positions == "first":
        pos = [p["positions"][min(q, 2)].tolist() for q in range(n)]
    elif shape.positions == "none":
        pos = [[0.0] * d for _ in range(n)]
    else:
        pos = [
            [
                math.sin(q / 10000 ** (2 * (i // 2) / d)) if i % 2 == 0 else math.cos(q / 10000 ** (2 * (i // 2) / d))
                for i in range(d)
            ]
            for q in range(n)
        ]
    x = [[p["tokens"][t, i].item() + pos[q][i] for i in range(d)] for q, t in enumerate(tokens)]
    if shape.previous_token:  # position q >= 2 reads the letter at q - 1; positions 0 and 1 the row k
        for q in range(n):
            before = tokens[q - 1] if q >= 2 else k
            x[q] = [x[q][i] + p["previous"][before, i].item() for i in range(d)]

    def norm(v):
        mean = sum(v) / len(v)
        var = sum((a - mean) ** 2 for a in v) / len(v)
        return [(a - mean) / math.sqrt(var + 1e-5) for a in v]

    def gelu(a):
        return 0.5 * a * (1 + math.erf(a / math.sqrt(2)))

    cls_weights: list[list[float]] = []
    for layer in range(shape.layers):
        pre = f"blocks.{layer}."
        wq, wk, wv = (p[pre + "attention." + k].tolist() for k in ("query", "key", "value"))
        wo = p[pre + "attention.output"].tolist()
        z = [norm(v) for v in x]
        new = [list(v) for v in x]
        for head in range(h):

            def proj(w, v, head=head):
                return [sum(v[i] * w[i][head][j] for i in range(d)) / math.sqrt(d) for j in range(e)]

            q = [proj(wq, v) for v in z]
            key = [proj(wk, v) for v in z]
            val = [proj(wv, v) for v in z]
            for a in range(n):
                s = [sum(q[a][j] * key[b][j] for j in range(e)) / math.sqrt(e) for b in range(n)]
                top = max(s)
                if shape.scaling == "log":
                    w = [float(n) ** (t - top) for t in s]
                else:
                    w = [math.exp(t - top) for t in s]
                total = sum(w)
                if a == 0 and layer == shape.layers - 1:
                    cls_weights.append([v / total for v in w])
                mixed = [sum(w[b] * val[b][j] for b in range(n)) / total for j in range(e)]
                for i in range(d):
                    new[a][i] += sum(mixed[j] * wo[head][j][i] for j in range(e)) / math.sqrt(d)
        x = new
        w_in, b_in = p[pre + "mlp.w_in"].tolist(), p[pre + "mlp.b_in"].tolist()
        w_out, b_out = p[pre + "mlp.w_out"].tolist(), p[pre + "mlp.b_out"].tolist()
        m = len(b_in)
        for a in range(n):
            z = norm(x[a])
            hidden = [gelu(sum(z[i] * w_in[i][j] for i in range(d)) / math.sqrt(d) + b_in[j]) for j in range(m)]
            for i in range(d):
                x[a][i] += sum(hidden[j] * w_out[j][i] for j in range(m)) / math.sqrt(m) + b_out[i]
    cls = norm(x[0])
    output = sum(cls[i] * p["readout_weight"][i].item() for i in range(d)) / math.sqrt(d) + p["readout_bias"].item()
    return output, cls_weights


def _reference_output(shape: TransformerShape, p: dict[str, torch.Tensor], word: list[int]) -> float:
    return _reference(shape, p, word)[0]


@pytest.mark.parametrize(
    "shape",
    [
        TransformerShape(alphabet_size=2, width=4, heads=2, layers=2, mlp_width=3, max_positions=8),
        TransformerShape(
            alphabet_size=3, width=6, heads=3, layers=1, mlp_width=5, positions="sinusoidal", max_positions=8
        ),
        TransformerShape(alphabet_size=2, width=4, heads=2, layers=1, mlp_width=3, positions="first", scaling="log"),
        TransformerShape(
            alphabet_size=3,
            width=6,
            heads=2,
            layers=2,
            mlp_width=4,
            positions="first",
            scaling="log",
            previous_token=True,
        ),
        TransformerShape(alphabet_size=2, width=4, heads=1, layers=2, mlp_width=3, positions="none", scaling="log"),
        TransformerShape(
            alphabet_size=2,
            width=4,
            heads=2,
            layers=1,
            mlp_width=3,
            max_positions=8,
            scaling="log",
            previous_token=True,
        ),
    ],
)
def test_forward_matches_a_from_scratch_forward_and_ignores_padding(shape):
    p = _random_params(shape, ())
    words = [[0, 1, 1, 0, 1], [1, 0, 0], [shape.alphabet_size - 1, 0, 1, 0, 0, 1, 1]]
    width = 1 + max(len(w) for w in words)
    tokens = torch.zeros(len(words), width, dtype=torch.long)
    keep = torch.zeros(len(words), width, dtype=torch.bool)
    for r, w in enumerate(words):
        tokens[r, : len(w) + 1] = torch.tensor([shape.alphabet_size, *w])
        keep[r, : len(w) + 1] = True
    tokens[1, 4:] = 1  # padding of any id is ignored
    out = torch.func.functional_call(SmallTransformer(shape), p, (tokens, keep))
    expected = [_reference(shape, p, w) for w in words]
    assert torch.allclose(out, torch.tensor([o for o, _ in expected], dtype=torch.float64), rtol=0, atol=1e-12)
    weights = torch.func.functional_call(SmallTransformer(shape), p, (tokens, keep, True))  # (words, heads, length)
    for r, (w, (_, cls)) in enumerate(zip(words, expected, strict=True)):
        assert torch.allclose(weights[r, :, : len(w) + 1], torch.tensor(cls, dtype=torch.float64), rtol=0, atol=1e-12)
        assert torch.all(weights[r, :, len(w) + 1 :] == 0)


def test_sinusoidal_table_follows_the_formula():
    table = sinusoidal_positions(5, 6)
    for q in range(5):
        for i in range(6):
            angle = q / 10000 ** ((i - i % 2) / 6)
            assert table[q, i].item() == pytest.approx(math.sin(angle) if i % 2 == 0 else math.cos(angle), abs=1e-15)


def test_batched_forward_and_gradients_equal_each_model_alone():
    shape = TransformerShape(alphabet_size=2, width=8, heads=2, layers=2, mlp_width=6, max_positions=10)
    model = SmallTransformer(shape)
    rows, seeds = 2, 3
    params = {k: v.requires_grad_(True) for k, v in _random_params(shape, (rows, seeds), seed=1).items()}
    generator = torch.Generator().manual_seed(2)
    tokens = torch.randint(0, 2, (seeds, 5, 9), generator=generator)
    tokens[..., 0] = 2
    keep = torch.ones(seeds, 5, 9, dtype=torch.bool)
    keep[:, :2, 6:] = False
    out = batched_outputs(model, params, tokens, keep)
    weights = torch.randn(out.shape, generator=generator, dtype=torch.float64)
    grads = torch.autograd.grad((weights * out).sum(), list(params.values()))
    for r, s in itertools.product(range(rows), range(seeds)):
        one = {k: v[r, s].detach().clone().requires_grad_(True) for k, v in params.items()}
        alone = torch.func.functional_call(model, one, (tokens[s], keep[s]))
        assert torch.allclose(alone, out[r, s], rtol=0, atol=1e-13)
        single = torch.autograd.grad((weights[r, s] * alone).sum(), list(one.values()))
        for g_batch, g_one in zip(grads, single, strict=True):
            assert torch.allclose(g_batch[r, s], g_one, rtol=0, atol=1e-12)


def test_flop_count_matches_torch_flop_counter():
    shape = TransformerShape(alphabet_size=2, width=8, heads=2, layers=2, mlp_width=12, max_positions=20)
    p = _random_params(shape, ())
    tokens = torch.zeros(3, 11, dtype=torch.long)
    keep = torch.ones(3, 11, dtype=torch.bool)
    with FlopCounterMode(display=False) as counter:
        torch.func.functional_call(SmallTransformer(shape), p, (tokens, keep))
    readout = 2 * shape.width  # a matrix-vector product per word, which FlopCounterMode does not count
    assert counter.get_total_flops() == 3 * (forward_flops(shape, 11) - readout)


# -- parameter groups ----------------------------------------------------------------------------


def test_parameter_groups_are_the_stated_ones():
    shape = TransformerShape(alphabet_size=2, layers=2)
    groups = parameter_groups(shape)
    attention = {n for n, (_, g) in groups.items() if g == "attention"}
    output = {n for n, (_, g) in groups.items() if g == "output"}
    projections = {f"blocks.{i}.attention.{k}" for i in range(2) for k in ("query", "key", "value", "output")}
    mlp = {f"blocks.{i}.mlp.{k}" for i in range(2) for k in ("w_in", "b_in", "w_out", "b_out")}
    assert attention == projections | {"tokens", "positions"}
    assert output == mlp | {"readout_weight", "readout_bias"}
    swapped = parameter_groups(dataclasses.replace(shape, mlp_group="attention", embedding_group="output"))
    assert {n for n, (_, g) in swapped.items() if g == "output"} == {
        "tokens",
        "positions",
        "readout_weight",
        "readout_bias",
    }
    sinusoidal = parameter_groups(dataclasses.replace(shape, positions="sinusoidal"))
    assert "positions" not in sinusoidal and set(sinusoidal) == set(groups) - {"positions"}


def test_option_parameters_and_groups():
    first = parameter_groups(TransformerShape(alphabet_size=3, positions="first", previous_token=True))
    assert first["positions"] == ((3, 16), "attention") and first["previous"] == ((4, 16), "attention")
    none = parameter_groups(TransformerShape(alphabet_size=3, positions="none"))
    assert "positions" not in none and "previous" not in none
    swapped = parameter_groups(TransformerShape(alphabet_size=2, previous_token=True, embedding_group="output"))
    assert swapped["previous"][1] == "output"


def test_first_and_no_positions_are_defined_at_every_length():
    """No table limits them: a word of 400 letters passes with max_positions 8; with positions "none" the
    output does not change when the letters are permuted, with "first" it does when the first one moves."""
    for positions in ("first", "none"):
        shape = TransformerShape(2, width=4, heads=2, mlp_width=3, positions=positions, max_positions=8)
        p = _random_params(shape, (), seed=3)
        word = torch.tensor([[2] + [0] * 200 + [1] * 200])
        permuted = torch.cat([word[:, :1], word[:, 1:].flip(-1)], dim=-1)
        keep = torch.ones_like(word, dtype=torch.bool)
        out, flipped = (torch.func.functional_call(SmallTransformer(shape), p, (w, keep)) for w in (word, permuted))
        assert torch.isfinite(out).all()
        assert torch.allclose(out, flipped, rtol=0, atol=1e-12) == (positions == "none")


def test_standard_initialisation_starts_the_biases_at_zero_through_the_engine():
    scaled = TransformerLanguageRuns("FIRST", dataclasses.replace(SMALL, width=4, heads=1, mlp_width=4))
    standard = TransformerLanguageRuns("FIRST", dataclasses.replace(scaled.setting, initialisation="standard"))
    config = dataclasses.replace(TINY_TRAINING, output_scale=1.0, attention_scale=1.0)
    draws = standard_draws(standard, [4, 9])
    start = initial_parameters(standard, config, [4, 9])
    zero = {"blocks.0.mlp.b_in", "blocks.0.mlp.b_out", "readout_bias"}
    assert set(standard.zero_at_start()) == zero and scaled.zero_at_start() == ()
    for name, value in start.items():
        expected = torch.zeros_like(value) if name in zero else draws[name]
        assert torch.equal(value, expected), name
    assert all(torch.equal(v, draws[k]) for k, v in initial_parameters(scaled, config, [4, 9]).items())


def test_float32_arithmetic_follows_float64():
    shape = TransformerShape(alphabet_size=2, width=8, heads=2, layers=2, mlp_width=6, positions="first", scaling="log")
    params = _random_params(shape, (2, 3), seed=5)
    tokens = torch.randint(0, 2, (3, 7, 12), generator=torch.Generator().manual_seed(1))
    tokens[..., 0] = 2
    keep = torch.ones_like(tokens, dtype=torch.bool)
    model = SmallTransformer(shape)
    wide = batched_outputs(model, params, tokens, keep)
    narrow = batched_outputs(model, params, tokens, keep, torch.float32)
    assert wide.dtype == torch.float64 and narrow.dtype == torch.float32
    assert torch.allclose(narrow.double(), wide, rtol=0, atol=1e-5) and not torch.equal(narrow.double(), wide)
    task = TransformerLanguageRuns("TWO_B", dataclasses.replace(SMALL, width=4, heads=1, compute_dtype="float32"))
    margins = task.margins(_random_params(task.shape, (1, 2), seed=2))
    assert all(m.dtype == torch.float64 for m in margins)


# -- languages and test words --------------------------------------------------------------------


def test_languages_star_freeness_and_novelty():
    assert set(TRANSFORMER_LANGUAGES) == set(STUDY_LANGUAGES) | set(NEW_LANGUAGES) | {"PARITY"}
    for name in STUDY_LANGUAGES:
        assert TRANSFORMER_LANGUAGES[name] == TASKS[name].dfa
    for name, dfa in TRANSFORMER_LANGUAGES.items():
        assert bool(is_star_free(dfa)) == (name != "PARITY"), name
    used = [task.dfa for task in TASKS.values()] + list(LANGUAGES.values())
    for name in NEW_LANGUAGES:
        dfa = TRANSFORMER_LANGUAGES[name]
        assert not any(len(other.alphabet) == 2 and dfa.equivalent(other) for other in used), (
            f"{name} is a language the study or the book already uses"
        )
    for n in range(8):
        for word in itertools.product("ab", repeat=n):
            assert TRANSFORMER_LANGUAGES["LAST_B"].accepts(word) == (n > 0 and word[-1] == "b")
            assert TRANSFORMER_LANGUAGES["TWO_B"].accepts(word) == (word.count("b") >= 2)


@pytest.mark.parametrize("name", ["CONTAINS_AB", "EVEN_PAIRS", "CONTAINS_B_NOT_C", "PARITY", "TWO_B"])
def test_labels_and_minimal_pairs_against_brute_force(name):
    dfa = TRANSFORMER_LANGUAGES[name]
    k, n = len(dfa.alphabet), 5
    rng = np.random.default_rng(0)
    words = rng.integers(0, k, size=(40, n))
    labels = dfa_labels(dfa, words)
    assert [1 if dfa.accepts(_word(dfa, w)) else -1 for w in words] == labels.tolist()
    kept, partners = minimal_pairs(dfa, words, rng)
    flippable = []
    for w in words:
        own = dfa.accepts(_word(dfa, w))
        changes = set()
        for i, c in itertools.product(range(n), range(k)):
            if c != w[i]:
                v = w.copy()
                v[i] = c
                if dfa.accepts(_word(dfa, v)) != own:
                    changes.add((i, c))
        flippable.append(changes)
    expected_kept = [w for w, changes in zip(words, flippable, strict=True) if changes]
    assert np.array_equal(kept, np.array(expected_kept).reshape(-1, n))
    allowed = [changes for changes in flippable if changes]
    for w, v, changes in zip(kept, partners, allowed, strict=True):
        (i,) = np.flatnonzero(w != v)
        assert (int(i), int(v[i])) in changes


def test_run_words_and_hard_words():
    runs = run_words(2, 8)
    spelled = ["".join("ab"[s] for s in w) for w in runs]
    assert len(spelled) == len(set(spelled))
    assert set(spelled) == {  # by hand: c^8 with d at position 1, 5 or 8, and c^p d^(8-p), p = 1, 4, 7
        "baaaaaaa",
        "aaaabaaa",
        "aaaaaaab",
        "abbbbbbb",
        "aaaabbbb",
        "bbbbabbb",
        "bbbbbbba",
        "bbbbaaaa",
    }
    hard = hard_words(TRANSFORMER_LANGUAGES["PARITY"], 8, 3, np.random.default_rng(1))
    assert hard.shape == (12 + len(runs), 8)
    first, second = hard[:3], hard[3:6]
    assert np.all((first != second).sum(axis=1) == 1)
    assert np.all(dfa_labels(PARITY_DFA, first) == 1) and np.all(dfa_labels(PARITY_DFA, second) == -1)


PARITY_DFA = TRANSFORMER_LANGUAGES["PARITY"]


# -- the engine task ---------------------------------------------------------------------------


def test_every_schedule_trains_through_the_one_loop_and_freezes_the_right_group():
    task = TransformerLanguageRuns("FIRST", dataclasses.replace(SMALL, width=4, heads=1, mlp_width=4))
    schedules = ["joint", "lag", "three-phase", "lead", "two-timescale-0.1", "two-timescale-3"]
    result = run_cell(task, TINY_TRAINING, schedules, [5])
    attention = result.traces["attention_moved"][:, 0]  # (schedules, steps): distance before each step
    output = result.traces["output_moved"][:, 0]
    warm = TINY_TRAINING.warm_steps
    row = {name: result.index(name) for name in schedules}
    for name in ("joint", "two-timescale-0.1", "two-timescale-3"):
        assert np.all(attention[row[name], 1:] > 0) and np.all(output[row[name], 1:] > 0)
    assert np.all(attention[row["lag"], : warm + 1] == 0) and np.all(output[row["lag"], 1:] > 0)
    assert attention[row["lag"], warm + 1] > 0
    assert np.all(output[row["lead"], : warm + 1] == 0) and np.all(attention[row["lead"], 1:] > 0)
    assert output[row["lead"], warm + 1] > 0
    three = row["three-phase"]  # one output step, one attention step, then the output alone
    assert attention[three, 1] == 0 and output[three, 1] > 0 and attention[three, 2] > 0
    assert np.all(attention[three, 2:] == attention[three, 2]) and output[three, -1] > output[three, 2]
    assert np.all(np.isfinite(result.losses))
    assert set(result.metrics) >= {"accuracy", "hard_accuracy", "recognised_at", "recognised", "test_loss"}


def test_seeds_batched_equal_seeds_alone():
    task = TransformerLanguageRuns("PARITY", dataclasses.replace(SMALL, width=4, heads=2, layers=2, mlp_width=4))
    schedules = ["joint", "lag"]
    together = run_cell(task, TINY_TRAINING, schedules, [3, 7, 11])
    for j, seed in enumerate((3, 7, 11)):
        alone = run_cell(task, TINY_TRAINING, schedules, [seed])
        assert np.allclose(together.losses[:, j], alone.losses[:, 0], rtol=0, atol=1e-12)
        for name, value in alone.final.items():
            assert np.allclose(together.final[name][:, j], value[:, 0], rtol=0, atol=1e-12), name
        for name, value in alone.metrics.items():
            assert np.array_equal(together.metrics[name][:, j], value[:, 0]), name


def test_evaluation_matches_one_model_at_a_time_and_non_finite_recognises_nothing():
    task = TransformerLanguageRuns(
        "LAST_B", dataclasses.replace(SMALL, eval_chunk=3, width=4, heads=2, mlp_width=4, positions="sinusoidal")
    )
    params = _random_params(task.shape, (2, 2), seed=4)
    params["readout_bias"][1, 1] = math.nan
    metrics = task.evaluate(params)
    model = SmallTransformer(task.shape)
    for r, s in itertools.product(range(2), range(2)):
        one = {k: v[r, s] for k, v in params.items()}
        for j, (tokens, keep, labels, random) in enumerate(task.test_words()):
            margins = torch.func.functional_call(model, one, (tokens, keep)) * labels
            right = (margins > 0).numpy()
            assert metrics["accuracy"][r, s, j] == right[:random].mean()
            assert metrics["hard_accuracy"][r, s, j] == right[random:].mean()
            assert metrics["recognised_at"][r, s, j] == right.all()
    assert not metrics["recognised"][1, 1] and metrics["accuracy"][1, 1].max() == 0
    words, labels = task.test_words()[1][0][:, 1:].numpy(), task.test_words()[1][2].numpy()
    assert np.all(labels == np.where(words[:, -1] == 1, 1, -1))  # LAST_B: the last letter is b


def test_a_tiny_run_learns_first():
    """FIRST (the first letter is b) from lengths up to 8: the loss falls from about log 2 to below 0.05
    and every random and hard test word of length 8 is classified right, while the untrained model is
    right on about half."""
    setting = TransformerSetting(max_train_length=8, test_lengths=(8, 16), test_per_class=16, pairs_per_class=8)
    task = TransformerLanguageRuns("FIRST", dataclasses.replace(setting, width=8, heads=2, mlp_width=8))
    config = dataclasses.replace(TRANSFORMER_TRAINING, steps=150, warm_steps=30, attention_lr=0.02, output_lr=0.02)
    result = run_cell(task, config, ["joint"], [0])
    untrained = task.evaluate({k: 0.5 * v[None] for k, v in standard_draws(task, [0]).items()})
    assert result.losses[0, 0, 0] > 0.5 and result.losses[0, 0, -10:].mean() < 0.05
    assert result.metrics["accuracy"][0, 0, 0] == 1 and result.metrics["hard_accuracy"][0, 0, 0] == 1
    assert untrained["accuracy"][0, 0, 0] < 0.8


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "argument"),
    [
        (lambda: TransformerShape(alphabet_size=1), "alphabet_size"),
        (lambda: TransformerShape(2, heads=5, width=20), "heads"),
        (lambda: TransformerShape(2, heads=3, width=16), "heads"),
        (lambda: TransformerShape(2, layers=3), "layers"),
        (lambda: TransformerShape(2, positions="rotary"), "positions"),
        (lambda: TransformerShape(2, positions="sinusoidal", width=5, heads=1), "width"),
        (lambda: TransformerShape(2, mlp_group="readout"), "mlp_group"),
        (lambda: TransformerShape(2, embedding_group="neither"), "embedding_group"),
        (lambda: TransformerShape(2, scaling="sqrt"), "scaling"),
        (lambda: TransformerShape(2, initialisation="xavier"), "initialisation"),
        (lambda: TransformerShape(2, previous_token=1), "previous_token"),
        (lambda: TransformerSetting(compute_dtype="float16"), "compute_dtype"),
        (lambda: TransformerSetting(max_train_length=1), "max_train_length"),
        (lambda: TransformerSetting(test_lengths=(4, 8)), "test_lengths"),
        (lambda: TransformerSetting(test_lengths=(40, 20)), "test_lengths"),
        (lambda: TransformerSetting(pairs_per_class=0), "pairs_per_class"),
        (lambda: TransformerLanguageRuns("CONTAINS_B", SMALL), "language"),
        (lambda: TransformerSetting(heads=3), "heads"),
        (lambda: TransformerSetting(positions="rotary"), "positions"),
        (lambda: TransformerLanguageRuns("FIRST", "setting"), "setting"),
        (lambda: TransformerLanguageRuns("FIRST", SMALL).preset_attention(), "attention_init"),
    ],
)
def test_bad_input_errors_name_the_argument(build, argument):
    with pytest.raises((ValueError, TypeError), match=argument):
        build()


def test_too_long_input_names_max_positions():
    shape = TransformerShape(2, width=4, heads=1, max_positions=4)
    tokens = torch.zeros(1, 5, dtype=torch.long)
    with pytest.raises(ValueError, match="max_positions"):
        torch.func.functional_call(SmallTransformer(shape), _random_params(shape, ()), (tokens, tokens == 0))


def test_recognition_needs_every_random_and_hard_word_at_every_long_length():
    """Labels set to the model's own signs (every word right), then the hard words' flipped at the longest
    length only: recognition holds in the first case and fails in the second, where it still holds at the
    other lengths and the random words stay all right."""
    setting = dataclasses.replace(SMALL, test_lengths=(6, 12, 18), width=4, heads=2, mlp_width=4)
    task = TransformerLanguageRuns("TWO_B", setting)
    params = _random_params(task.shape, (1, 1), seed=6)
    model = SmallTransformer(task.shape)
    one = {k: v[0, 0] for k, v in params.items()}
    tests = task.test_words()
    signs = [torch.sign(torch.func.functional_call(model, one, (t, k))) for t, k, _, _ in tests]
    task._tests = [(t, k, s, r) for (t, k, _, r), s in zip(tests, signs, strict=True)]
    right = task.evaluate(params)
    assert right["recognised_at"].all() and right["recognised"].all() and right["hard_accuracy"].min() == 1
    r = tests[-1][3]
    signs[-1] = torch.cat([signs[-1][:r], -signs[-1][r:]])
    task._tests = [(t, k, s, r) for (t, k, _, r), s in zip(tests, signs, strict=True)]
    wrong = task.evaluate(params)
    assert wrong["accuracy"].min() == 1 and wrong["hard_accuracy"][0, 0].tolist() == [1, 1, 0]
    assert wrong["recognised_at"][0, 0].tolist() == [True, True, False] and not wrong["recognised"][0, 0]
