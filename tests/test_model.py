"""Tests of lagtheory.model: the shallow transformer of ``def-model``.

Expected values are derived by hand in this file (closed forms of the pooled
weight written with math/numpy, Lemma 1's derivative, brute-force sums over
tokens); nothing is copied from the model's own output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lagtheory.model import ShallowTransformer, initialise, to_reduced

A, B = 0, 1


def set_parameters(model: ShallowTransformer, **values: object) -> ShallowTransformer:
    """Copy the given values into the named parameters."""
    with torch.no_grad():
        for name, value in values.items():
            getattr(model, name).copy_(torch.as_tensor(value, dtype=torch.float64))
    return model


def random_batch(vocab_size: int, batch: int, max_length: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random token strings of random lengths 1..max_length, right-padded with -1."""
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, vocab_size, (batch, max_length), generator=generator)
    lengths = torch.randint(1, max_length + 1, (batch,), generator=generator)
    mask = torch.arange(max_length).unsqueeze(0) < lengths.unsqueeze(1)
    return tokens.masked_fill(~mask, -1), mask


def counts_of(tokens: torch.Tensor, mask: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """Token counts of each row, by brute force over the positions."""
    counts = torch.zeros(tokens.shape[0], vocab_size, dtype=torch.float64)
    for row in range(tokens.shape[0]):
        for position in range(tokens.shape[1]):
            if mask[row, position]:
                counts[row, tokens[row, position]] += 1
    return counts


def string(n: int, b_positions: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """One string a..a with b at the given 0-based positions, as a batch of one."""
    tokens = torch.full((1, n), A, dtype=torch.long)
    tokens[0, b_positions] = B
    return tokens, torch.ones(1, n, dtype=torch.bool)


def hand_pooled_weight(n: float, k: float, t: float) -> float:
    """p(n, k; t) = k n^t / (k n^t + n - k) (book eq. eq-pooled-weight), written out."""
    return k * n**t / (k * n**t + (n - k))


# -- the closed forms of Section 1 --------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 100, 10**6])
@pytest.mark.parametrize("t", [-1.3, 0.0, 0.5, 1.0, 2.0])
def test_two_token_linear_model_equals_c_plus_w_p(n: int, t: float) -> None:
    theta_a, u_a, u_b = 0.4, -0.7, 1.9
    model = set_parameters(ShallowTransformer(), theta=[theta_a, theta_a + t], u=[u_a, u_b])
    ks = [k for k in (0, 1, 2, n // 2, n) if k <= n]
    counts = torch.tensor([[n - k, k] for k in ks], dtype=torch.float64)
    expected = [u_a + (u_b - u_a) * hand_pooled_weight(n, k, t) for k in ks]
    np.testing.assert_allclose(model.forward_counts(counts).detach().numpy(), expected, rtol=1e-12, atol=1e-14)


def test_token_path_matches_closed_form_on_explicit_strings() -> None:
    t, u_a, u_b = 0.8, -1.0, 2.5
    model = set_parameters(ShallowTransformer(), theta=[0.0, t], u=[u_a, u_b])
    for n, b_positions in [(1, [0]), (5, [2]), (9, [0, 8]), (40, [3, 4, 5])]:
        k = len(b_positions)
        f = model(*string(n, b_positions))
        assert f.item() == pytest.approx(u_a + (u_b - u_a) * hand_pooled_weight(n, k, t), rel=1e-13)


def test_d_token_pooled_vector_matches_hand_formula() -> None:
    theta = np.array([0.3, -0.5, 1.2, 0.0, 0.7])
    model = set_parameters(ShallowTransformer(vocab_size=5), theta=theta)
    counts = np.array([[3, 0, 1, 5, 2], [0, 0, 1, 0, 0], [100, 7, 0, 0, 1]], dtype=np.float64)
    n = counts.sum(axis=1, keepdims=True)
    unnormalised = counts * n**theta
    expected = unnormalised / unnormalised.sum(axis=1, keepdims=True)
    h = model.pooled_counts(torch.tensor(counts)).detach().numpy()
    np.testing.assert_allclose(h, expected, rtol=1e-13, atol=0)


def test_ffn_readout_matches_hand_evaluation() -> None:
    generator = np.random.default_rng(3)
    V, b, a = generator.normal(size=(6, 2)), generator.normal(size=6), generator.normal(size=6)
    t = 1.1
    model = set_parameters(ShallowTransformer(readout="ffn", hidden=6), theta=[0.0, t], V=V, b=b, a=a)
    for n, k in [(1, 1), (3, 0), (10, 1), (1000, 4), (10**9, 1)]:
        p = hand_pooled_weight(n, k, t)
        expected = sum(a[j] * max(0.0, V[j, 0] * (1 - p) + V[j, 1] * p + b[j]) for j in range(6))
        f = model.forward_counts(torch.tensor([[n - k, k]], dtype=torch.float64))
        assert f.item() == pytest.approx(expected, rel=1e-12, abs=1e-14)


def test_negatives_output_u_a_whatever_the_attention() -> None:
    for theta in ([0.0, 0.0], [-3.0, 5.0], [2.0, -40.0]):
        model = set_parameters(ShallowTransformer(), theta=theta, u=[-0.3, 4.0])
        counts = torch.tensor([[1.0, 0.0], [17.0, 0.0], [1e18, 0.0]], dtype=torch.float64)
        assert model.forward_counts(counts).tolist() == [-0.3, -0.3, -0.3]


@pytest.mark.parametrize("n", [1, 4, 50, 10**5, 1e18])
@pytest.mark.parametrize("t", [-2.0, 0.0, 1.0, 30.0])
def test_unscaled_softmax_weight(n: float, t: float) -> None:
    model = set_parameters(ShallowTransformer(scaling="none"), theta=[0.0, t])
    for k in {1, int(n) // 2 if n > 1 else 1}:
        p = model.pooled_counts(torch.tensor([[n - k, k]], dtype=torch.float64))[0, B].item()
        expected = k * math.exp(t) / (k * math.exp(t) + n - k)
        assert p == pytest.approx(expected, rel=1e-12)


def test_unscaled_token_path_does_not_depend_on_log_n() -> None:
    t = 0.9
    model = set_parameters(ShallowTransformer(scaling="none"), theta=[0.0, t], u=[0.0, 1.0])
    for n in (1, 2, 30):
        assert model(*string(n, [0])).item() == pytest.approx(math.exp(t) / (math.exp(t) + n - 1), rel=1e-13)


# -- agreement of the two paths and invariances ---------------------------


@pytest.mark.parametrize("vocab_size", [2, 3, 5])
@pytest.mark.parametrize("scaling", ["log", "none"])
@pytest.mark.parametrize("readout", ["linear", "ffn"])
@pytest.mark.parametrize("marker", [False, True])
def test_forward_equals_forward_counts(vocab_size: int, scaling: str, readout: str, marker: bool) -> None:
    generator = torch.Generator().manual_seed(vocab_size * 10 + len(scaling))
    model = ShallowTransformer(
        vocab_size, readout, hidden=4 if readout == "ffn" else None, scaling=scaling, first_position_score=marker
    )
    initialise(model, "random", scale=1.5, generator=generator)
    with torch.no_grad():
        model.theta.copy_(torch.randn(vocab_size, dtype=torch.float64, generator=generator))
        if marker:
            model.s.fill_(0.8)
    tokens, mask = random_batch(vocab_size, batch=64, max_length=30, seed=vocab_size)
    first = tokens[:, 0] if marker else None
    counts = counts_of(tokens, mask, vocab_size)
    torch.testing.assert_close(model(tokens, mask), model.forward_counts(counts, first), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(model.pooled(tokens, mask), model.pooled_counts(counts, first), rtol=1e-12, atol=1e-12)


def test_pooled_is_a_point_of_the_simplex_and_padding_gets_no_weight() -> None:
    model = set_parameters(ShallowTransformer(vocab_size=3), theta=[0.5, -1.0, 2.0])
    tokens, mask = random_batch(3, batch=20, max_length=15, seed=7)
    alpha = model.attention_weights(tokens, mask)
    assert bool((alpha[~mask] == 0).all())
    h = model.pooled(tokens, mask)
    assert bool((h >= 0).all())
    torch.testing.assert_close(h.sum(dim=1), torch.ones(20, dtype=torch.float64), rtol=0, atol=1e-15)


def test_permutation_invariance() -> None:
    generator = torch.Generator().manual_seed(11)
    model = initialise(ShallowTransformer(vocab_size=4, readout="ffn", hidden=6), "random", generator=generator)
    with torch.no_grad():
        model.theta.copy_(torch.tensor([0.2, 1.4, -0.6, 0.9], dtype=torch.float64))
    tokens, mask = random_batch(4, batch=30, max_length=25, seed=12)
    shuffled = tokens.clone()
    for row in range(tokens.shape[0]):
        n = int(mask[row].sum())
        shuffled[row, :n] = tokens[row, torch.randperm(n, generator=generator)]
    torch.testing.assert_close(model(shuffled, mask), model(tokens, mask), rtol=1e-13, atol=1e-14)


def test_marker_breaks_permutation_invariance_only_at_position_one() -> None:
    model = set_parameters(ShallowTransformer(first_position_score=True), s=1.5, u=[-1.0, 1.0])
    b_first, b_second, b_last = string(8, [0]), string(8, [1]), string(8, [7])
    assert model(*b_second).item() == model(*b_last).item()
    assert model(*b_first).item() > model(*b_second).item() + 0.5


@pytest.mark.parametrize("readout", ["linear", "ffn"])
def test_softmax_shift_invariance(readout: str) -> None:
    generator = torch.Generator().manual_seed(5)
    model = ShallowTransformer(3, readout, hidden=5 if readout == "ffn" else None)
    initialise(model, "random", generator=generator)
    set_parameters(model, theta=[0.3, 1.7, -0.4])
    tokens, mask = random_batch(3, batch=40, max_length=20, seed=6)
    counts = torch.tensor([[1e12, 3.0, 0.0], [5.0, 5.0, 5.0], [0.0, 1.0, 1e6]], dtype=torch.float64)
    before = model(tokens, mask), model.forward_counts(counts)
    set_parameters(model, theta=[0.3 + 2.25, 1.7 + 2.25, -0.4 + 2.25])
    after = model(tokens, mask), model.forward_counts(counts)
    torch.testing.assert_close(after[0], before[0], rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(after[1], before[1], rtol=1e-12, atol=1e-13)


# -- extreme lengths -----------------------------------------------------


def test_pooled_weight_at_n_1e18() -> None:
    n, t = 1e18, 1.5
    model = set_parameters(ShallowTransformer(), theta=[0.0, t], u=[-1.0, 3.0])
    counts = torch.tensor([[n - 1, 1.0]], dtype=torch.float64)
    h = model.pooled_counts(counts)
    assert bool(torch.isfinite(h).all())
    assert h[0, B].item() == pytest.approx(1 - n**-0.5, rel=1e-15)
    assert h[0, A].item() == pytest.approx((n - 1) / (n**1.5 + n - 1), rel=1e-12)
    f = model.forward_counts(counts)
    f.sum().backward()
    for parameter in model.parameters():
        assert bool(torch.isfinite(parameter.grad).all())


def test_gradients_finite_at_n_1e18_with_zero_counts_and_marker() -> None:
    model = set_parameters(ShallowTransformer(vocab_size=3, first_position_score=True), theta=[0.0, 2.0, -1.0])
    set_parameters(model, s=1.3, u=[0.5, -2.0, 1.0])
    counts = torch.tensor([[1e18, 0.0, 0.0], [1e18 - 1, 1.0, 0.0], [0.0, 1.0, 1e18]], dtype=torch.float64)
    first = torch.tensor([A, B, B])
    f = model.forward_counts(counts, first)
    assert bool(torch.isfinite(f).all())
    f.sum().backward()
    assert all(bool(torch.isfinite(parameter.grad).all()) for parameter in model.parameters())


# -- gradients (Lemma 1, Lemma 2, Theorem 6(a)) ---------------------------


@pytest.mark.parametrize("n", [2, 10, 1000, 10**6])
@pytest.mark.parametrize("t", [-0.7, 0.0, 0.5, 1.0, 1.8])
def test_attention_gradient_is_w_log_n_p_one_minus_p(n: int, t: float) -> None:
    u_a, u_b = -0.5, 2.0
    model = set_parameters(ShallowTransformer(), theta=[0.0, t], u=[u_a, u_b])
    model.forward_counts(torch.tensor([[n - 1, 1]], dtype=torch.float64)).sum().backward()
    p = hand_pooled_weight(n, 1, t)
    expected = (u_b - u_a) * math.log(n) * p * (1 - p)
    assert model.theta.grad[B].item() == pytest.approx(expected, rel=1e-11)
    assert model.theta.grad[A].item() == pytest.approx(-expected, rel=1e-11)


def test_attention_gradient_at_n_1e18() -> None:
    # p is within 1e-9 of 1, so autograd's 1 - p cancels: about 1e-7 relative accuracy.
    n, t, u_a, u_b = 1e18, 1.5, -1.0, 3.0
    model = set_parameters(ShallowTransformer(), theta=[0.0, t], u=[u_a, u_b])
    model.forward_counts(torch.tensor([[n - 1, 1.0]], dtype=torch.float64)).sum().backward()
    one_minus_p = (n - 1) / (n**1.5 + n - 1)
    expected = (u_b - u_a) * math.log(n) * (1 - one_minus_p) * one_minus_p
    assert model.theta.grad[B].item() == pytest.approx(expected, rel=1e-6)


def test_output_gradient_is_the_pooled_vector() -> None:
    # df/du_v = h_v (eq-readout), written by hand from p.
    n, k, t = 64, 3, 0.75
    model = set_parameters(ShallowTransformer(), theta=[0.0, t], u=[0.2, 0.9])
    model.forward_counts(torch.tensor([[n - k, k]], dtype=torch.float64)).sum().backward()
    p = hand_pooled_weight(n, k, t)
    np.testing.assert_allclose(model.u.grad.numpy(), [1 - p, p], rtol=1e-13)


def logistic_loss_attention_gradients(model: ShallowTransformer, seed: int) -> list[torch.Tensor]:
    """Gradients of a logistic loss on a random labelled batch w.r.t. the attention parameters."""
    tokens, mask = random_batch(model.vocab_size, batch=48, max_length=20, seed=seed)
    labels = torch.where(torch.arange(48) % 2 == 0, 1.0, -1.0).to(torch.float64)
    loss = torch.nn.functional.softplus(-labels * model(tokens, mask)).mean()
    counts = counts_of(tokens, mask, model.vocab_size)
    first = tokens[:, 0] if model.first_position_score else None
    loss = loss + torch.nn.functional.softplus(-labels * model.forward_counts(counts * 1e12, first)).mean()
    return list(torch.autograd.grad(loss, model.attention_parameters()))


@pytest.mark.parametrize("vocab_size", [2, 3, 5])
@pytest.mark.parametrize("marker", [False, True])
def test_symmetric_linear_initialisation_gives_exactly_zero_attention_gradient(vocab_size: int, marker: bool) -> None:
    for seed in range(5):
        model = ShallowTransformer(vocab_size, first_position_score=marker)
        initialise(model, "symmetric", scale=2.0, generator=torch.Generator().manual_seed(seed))
        assert model.u[0].item() != 0.0
        set_parameters(model, theta=torch.linspace(-1.0, 2.0, vocab_size))
        for gradient in logistic_loss_attention_gradients(model, seed):
            assert bool((gradient == 0.0).all()), gradient


@pytest.mark.parametrize("hidden", [2, 4, 10, 14, 64])
@pytest.mark.parametrize("vocab_size", [2, 5])
def test_symmetric_ffn_pairs_give_exactly_zero_attention_gradient(hidden: int, vocab_size: int) -> None:
    for seed in range(4):
        model = ShallowTransformer(vocab_size, "ffn", hidden=hidden, first_position_score=True)
        initialise(model, "symmetric", scale=1.0, generator=torch.Generator().manual_seed(seed))
        set_parameters(model, theta=torch.linspace(-1.0, 2.0, vocab_size), s=0.4)
        for gradient in logistic_loss_attention_gradients(model, seed):
            assert bool((gradient == 0.0).all()), gradient


@pytest.mark.parametrize("readout", ["linear", "ffn"])
def test_random_initialisation_gives_a_nonzero_attention_gradient(readout: str) -> None:
    model = ShallowTransformer(2, readout, hidden=4 if readout == "ffn" else None)
    initialise(model, "random", generator=torch.Generator().manual_seed(0))
    (gradient,) = logistic_loss_attention_gradients(model, seed=0)
    assert gradient.abs().max().item() > 1e-6


# -- positional marker (FIRST) --------------------------------------------


@pytest.mark.parametrize("s", [-1.0, 0.0, 0.7, 1.0, 2.5])
def test_marker_weight_on_position_one(s: float) -> None:
    model = set_parameters(ShallowTransformer(first_position_score=True), s=s, u=[0.0, 1.0])
    for n in (1, 2, 9, 100):
        expected = n**s / (n**s + n - 1)
        alpha = model.attention_weights(torch.zeros(1, n, dtype=torch.long), torch.ones(1, n, dtype=torch.bool))
        assert alpha[0, 0].item() == pytest.approx(expected, rel=1e-13)
        assert model(*string(n, [0])).item() == pytest.approx(expected, rel=1e-13)
    for n in (1e6, 1e12, 1e18):
        f = model.forward_counts(torch.tensor([[n - 1, 1.0]], dtype=torch.float64), torch.tensor([B]))
        assert f.item() == pytest.approx(1 / (1 + (n - 1) * n**-s), rel=1e-12)


def test_marker_without_first_position_b_is_the_plain_model() -> None:
    t, s = 1.2, 2.0
    model = set_parameters(ShallowTransformer(first_position_score=True), theta=[0.0, t], s=s, u=[0.0, 1.0])
    n, k = 1e9, 3.0
    f = model.forward_counts(torch.tensor([[n - k, k]], dtype=torch.float64), torch.tensor([A]))
    # position 1 holds an a with score s log n; the b's keep n^t each.
    expected = k * n**t / (k * n**t + (n - k - 1) + n**s)
    assert f.item() == pytest.approx(expected, rel=1e-12)


# -- parameters, initialisation, reduced coordinates -----------------------


def test_parameter_names_groups_and_zero_start() -> None:
    linear = ShallowTransformer(vocab_size=3, first_position_score=True)
    assert dict(linear.named_parameters()).keys() == {"theta", "s", "u"}
    assert linear.attention_parameters() == [linear.theta, linear.s]
    assert linear.output_parameters() == [linear.u]
    ffn = ShallowTransformer(vocab_size=3, readout="ffn", hidden=7)
    assert dict(ffn.named_parameters()).keys() == {"theta", "V", "b", "a"}
    assert ffn.attention_parameters() == [ffn.theta]
    assert ffn.output_parameters() == [ffn.V, ffn.b, ffn.a]
    assert (ffn.V.shape, ffn.b.shape, ffn.a.shape) == ((7, 3), (7,), (7,))
    for parameter in [*linear.parameters(), *ffn.parameters()]:
        assert parameter.dtype == torch.float64
        assert bool((parameter == 0).all())


def test_symmetric_initialisation_structure() -> None:
    linear = initialise(ShallowTransformer(vocab_size=4), "symmetric", generator=torch.Generator().manual_seed(1))
    assert len(set(linear.u.tolist())) == 1 and linear.u[0].item() != 0
    ffn = ShallowTransformer(vocab_size=3, readout="ffn", hidden=8, first_position_score=True)
    set_parameters(ffn, theta=[1.0, 2.0, 3.0], s=4.0)
    initialise(ffn, "symmetric", generator=torch.Generator().manual_seed(2))
    assert torch.equal(ffn.V[0::2], ffn.V[1::2]) and torch.equal(ffn.b[0::2], ffn.b[1::2])
    assert torch.equal(ffn.a[1::2], -ffn.a[0::2]) and bool((ffn.a != 0).all())
    assert bool((ffn.theta == 0).all()) and ffn.s.item() == 0.0


def test_random_initialisation_scale_and_reproducibility() -> None:
    def draw() -> ShallowTransformer:
        model = ShallowTransformer(readout="ffn", hidden=20000)
        set_parameters(model, theta=[0.5, -0.5])
        return initialise(model, "random", scale=0.3, generator=torch.Generator().manual_seed(9))

    first, second = draw(), draw()
    assert torch.equal(first.a, second.a) and torch.equal(first.V, second.V)
    assert bool((first.theta == 0).all())
    # sample standard deviation of 20000 N(0, 0.09) draws: 0.3 within 2%.
    for parameter in (first.V, first.b, first.a):
        assert parameter.std().item() == pytest.approx(0.3, rel=0.02)
        assert abs(parameter.mean().item()) < 0.02


def test_zero_initialisation_resets_everything() -> None:
    model = set_parameters(ShallowTransformer(first_position_score=True), theta=[1.0, 2.0], u=[3.0, 4.0], s=5.0)
    initialise(model, "zero")
    assert all(bool((parameter == 0).all()) for parameter in model.parameters())


def test_to_reduced() -> None:
    model = set_parameters(ShallowTransformer(), theta=[0.25, 1.5], u=[-0.75, 2.0])
    assert to_reduced(model) == (1.25, -0.75, 2.75)


# -- validation ------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"vocab_size": 1}, ValueError, "vocab_size"),
        ({"vocab_size": 2.0}, TypeError, "vocab_size"),
        ({"vocab_size": True}, TypeError, "vocab_size"),
        ({"readout": "mlp"}, ValueError, "readout"),
        ({"readout": "ffn"}, TypeError, "hidden"),
        ({"readout": "ffn", "hidden": 0}, ValueError, "hidden"),
        ({"readout": "linear", "hidden": 3}, ValueError, "hidden"),
        ({"scaling": "sqrt"}, ValueError, "scaling"),
        ({"first_position_score": 1}, TypeError, "first_position_score"),
    ],
)
def test_constructor_rejects_bad_arguments(kwargs: dict, error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        ShallowTransformer(**kwargs)


def test_forward_rejects_bad_tokens_and_masks() -> None:
    model = ShallowTransformer(vocab_size=3)
    ok_mask = torch.ones(2, 4, dtype=torch.bool)
    cases = [
        (torch.zeros(2, 4, dtype=torch.int32), ok_mask, TypeError, "tokens"),
        (torch.zeros(2, 4, dtype=torch.long), ok_mask.long(), TypeError, "mask"),
        (torch.zeros(4, dtype=torch.long), torch.ones(4, dtype=torch.bool), ValueError, "tokens"),
        (torch.zeros(2, 4, dtype=torch.long), torch.ones(2, 3, dtype=torch.bool), ValueError, "mask"),
        (torch.zeros(2, 4, dtype=torch.long), torch.tensor([[True] * 4, [False] * 4]), ValueError, "mask"),
        (
            torch.zeros(2, 4, dtype=torch.long),
            torch.tensor([[True] * 4, [True, False, True, True]]),
            ValueError,
            "mask",
        ),
        (torch.tensor([[0, 1, 2, 3], [0, 0, 0, 0]]), ok_mask, ValueError, "tokens"),
        (torch.tensor([[0, 1, -1, 0], [0, 0, 0, 0]]), ok_mask, ValueError, "tokens"),
    ]
    for tokens, mask, error, name in cases:
        with pytest.raises(error, match=name):
            model(tokens, mask)


def test_padding_ids_are_ignored() -> None:
    model = set_parameters(ShallowTransformer(vocab_size=3), theta=[0.0, 1.0, 2.0], u=[1.0, 2.0, 3.0])
    mask = torch.tensor([[True, True, False]])
    assert model(torch.tensor([[1, 2, 99]]), mask).item() == model(torch.tensor([[1, 2, 0]]), mask).item()


def test_forward_counts_rejects_bad_counts() -> None:
    model = ShallowTransformer()
    cases = [
        (torch.tensor([[1.0, 2.0]], dtype=torch.float32), TypeError),
        (torch.tensor([[1, 2]]), TypeError),
        (torch.tensor([1.0, 2.0], dtype=torch.float64), ValueError),
        (torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64), ValueError),
        (torch.tensor([[-1.0, 2.0]], dtype=torch.float64), ValueError),
        (torch.tensor([[0.5, 2.0]], dtype=torch.float64), ValueError),
        (torch.tensor([[math.nan, 2.0]], dtype=torch.float64), ValueError),
        (torch.tensor([[math.inf, 2.0]], dtype=torch.float64), ValueError),
        (torch.tensor([[1e308, 1e308]], dtype=torch.float64), ValueError),
        (torch.tensor([[1.0, 1.0], [0.0, 0.0]], dtype=torch.float64), ValueError),
    ]
    for counts, error in cases:
        with pytest.raises(error, match="counts"):
            model.forward_counts(counts)


def test_first_token_is_required_exactly_with_the_marker() -> None:
    counts = torch.tensor([[3.0, 1.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match="first_token"):
        ShallowTransformer().forward_counts(counts, torch.tensor([0]))
    marked = ShallowTransformer(first_position_score=True)
    cases = [
        (None, ValueError),
        (torch.tensor([0], dtype=torch.int32), TypeError),
        (torch.tensor([0, 1]), ValueError),
        (torch.tensor([2]), ValueError),
        (torch.tensor([1]), None),
    ]
    for first, error in cases:
        if error is None:
            marked.forward_counts(counts, first)
        else:
            with pytest.raises(error, match="first_token"):
                marked.forward_counts(counts, first)
    with pytest.raises(ValueError, match="first_token"):
        marked.forward_counts(torch.tensor([[3.0, 0.0]], dtype=torch.float64), torch.tensor([1]))


def test_initialise_and_to_reduced_reject_bad_arguments() -> None:
    with pytest.raises(ValueError, match="kind"):
        initialise(ShallowTransformer(), "orthogonal")
    with pytest.raises(ValueError, match="scale"):
        initialise(ShallowTransformer(), "random", scale=0.0)
    with pytest.raises(ValueError, match="hidden"):
        initialise(ShallowTransformer(readout="ffn", hidden=3), "symmetric")
    with pytest.raises(TypeError, match="generator"):
        initialise(ShallowTransformer(), "random", generator=np.random.default_rng(0))
    with pytest.raises(TypeError, match="model"):
        initialise("model")
    for model in (
        ShallowTransformer(readout="ffn", hidden=2),
        ShallowTransformer(vocab_size=3),
        ShallowTransformer(first_position_score=True),
    ):
        with pytest.raises(ValueError, match="model"):
            to_reduced(model)
