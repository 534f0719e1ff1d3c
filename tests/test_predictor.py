"""Tests of the registered predictor (lagtheory.experiments.predictor.balance) and its exploratory evaluation
(lagtheory.experiments.predictor.evaluation).

Independent paths: a quadratic toy task whose gradients are written by hand from the engine's standard normal
draws; central finite differences of the real tasks' losses (no autograd); one real step of torch's own SGD and
Adam (torch.optim, not the formula) whose measured loss decrease must approach the first-order decrease as the
step shrinks; the AUROC against the brute-force count over all positive-negative pairs; the logistic fit against
its score equations.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from lagtheory.experiments.engine import cells as E
from lagtheory.experiments.predictor import balance as P
from lagtheory.experiments.predictor import evaluation as V
from lagtheory.experiments.tasks.languages.catalogue import TASKS
from lagtheory.experiments.tasks.languages.task import LanguageRuns, LanguageSetting
from lagtheory.experiments.tasks.sequences.regression import RegressionSetting, RegressionTask

SEEDS = (3, 11, 2_000_001)
TARGET_ATTENTION, TARGET_OUTPUT = 0.7, -1.3


class QuadraticTask:
    """Toy engine task: seed j's loss is |theta_j - a|^2 / 2 + |u_j - b|^2 / 2, whatever the batch."""

    name = "quadratic"

    def parameter_shapes(self):
        return {"u": ((3,), "output"), "theta": ((2,), "attention")}

    def preset_attention(self):
        return {"theta": torch.full((2,), TARGET_ATTENTION, dtype=torch.float64)}

    def training_stream(self, seeds, steps, batch_size):
        class Stream:
            def batch(self, step):
                return None

        return Stream()

    def losses(self, params, batch):
        return 0.5 * ((params["theta"] - TARGET_ATTENTION) ** 2).sum(-1) + 0.5 * (
            (params["u"] - TARGET_OUTPUT) ** 2
        ).sum(-1)

    def observe(self, params):
        return {}

    def evaluate(self, params):
        return {}


def _config(**changes) -> E.TrainingConfig:
    base = E.TrainingConfig(
        steps=8,
        attention_lr=0.3,
        output_lr=0.05,
        warm_steps=2,
        big_step=0.6,
        batch_size=16,
        output_scale=0.5,
        attention_init="random",
        attention_scale=0.2,
    )
    return dataclasses.replace(base, **changes)


@pytest.mark.parametrize("optimiser", ["sgd", "adam"])
def test_quadratic_task_matches_the_hand_gradient(optimiser):
    config = _config(optimiser=optimiser)
    draws = E.standard_draws(QuadraticTask(), SEEDS)  # the engine's draws, scaled here by hand
    g_attention = (config.attention_scale * draws["theta"] - TARGET_ATTENTION).numpy()
    g_output = (config.output_scale * draws["u"] - TARGET_OUTPUT).numpy()

    def by_hand(g, rate):
        if optimiser == "sgd":
            return rate * np.sum(g**2, axis=1)
        return rate * np.sum(g**2 / (np.abs(g) + 1e-8), axis=1)

    found = P.first_step_decreases(QuadraticTask(), config, SEEDS)
    assert np.allclose(found["attention"], by_hand(g_attention, config.attention_lr), rtol=1e-13, atol=0)
    assert np.allclose(found["output"], by_hand(g_output, config.output_lr), rtol=1e-13, atol=0)
    expected = math.log10(by_hand(g_attention, 0.3).mean() / by_hand(g_output, 0.05).mean())
    assert P.first_step_balance(QuadraticTask(), config, SEEDS) == pytest.approx(expected, rel=1e-13)


def test_preset_attention_at_the_target_has_no_attention_gradient():
    config = _config(attention_init="preset")
    assert P.first_step_balance(QuadraticTask(), config, SEEDS) == -math.inf


def _tasks():
    language = LanguageRuns(TASKS["CONTAINS_AB"], LanguageSetting(horizon_lengths=(1, 2, 3)))
    regression = RegressionTask(
        RegressionSetting(train_min=2, train_max=12, test_sizes=(5, 20), test_size=8, test_seed=10**6)
    )
    return {"language": language, "regression": regression}


def _finite_difference_gradients(task, config, seeds, h=1e-6):
    """Per parameter, per seed: the central difference of each seed's loss (no autograd)."""
    start = E.initial_parameters(task, config, seeds)
    batch = task.training_stream(seeds, 1, config.batch_size).batch(0)
    gradients = {}
    with torch.no_grad():
        for name, value in start.items():
            flat = value.reshape(len(seeds), -1)
            g = np.zeros(flat.shape)
            for i in range(flat.shape[1]):
                losses = []
                for sign in (1.0, -1.0):
                    moved = {k: v.clone().unsqueeze(0) for k, v in start.items()}
                    moved[name].reshape(len(seeds), -1)[:, i] += sign * h
                    losses.append(task.losses(moved, batch)[0].numpy())
                g[:, i] = (losses[0] - losses[1]) / (2 * h)
            gradients[name] = g
    return gradients


@pytest.mark.parametrize("which", ["language", "regression"])
@pytest.mark.parametrize("optimiser", ["sgd", "adam"])
def test_first_order_decreases_match_finite_differences(which, optimiser):
    task = _tasks()[which]
    config = _config(optimiser=optimiser, batch_size=8)
    groups = {name: group for name, (_, group) in task.parameter_shapes().items()}
    rates = {"attention": config.attention_lr, "output": config.output_lr}
    fd = _finite_difference_gradients(task, config, SEEDS)
    expected = {"attention": np.zeros(len(SEEDS)), "output": np.zeros(len(SEEDS))}
    for name, g in fd.items():
        if optimiser == "sgd":
            expected[groups[name]] += rates[groups[name]] * np.sum(g**2, axis=1)
        else:
            expected[groups[name]] += rates[groups[name]] * np.sum(np.abs(g), axis=1)  # |g| >> eps here
    found = P.first_step_decreases(task, config, SEEDS)
    for group in ("attention", "output"):
        assert np.all(expected[group] > 0)
        assert np.allclose(found[group], expected[group], rtol=1e-6, atol=0), group


@pytest.mark.parametrize("optimiser", ["sgd", "adam"])
@pytest.mark.parametrize("group", ["attention", "output"])
def test_first_order_decrease_is_the_limit_of_one_torch_step(optimiser, group):
    task = _tasks()["regression"]
    config = _config(optimiser=optimiser, batch_size=8)
    predicted = P.first_step_decreases(task, config, SEEDS)[group]
    shapes = task.parameter_shapes()
    batch = task.training_stream(SEEDS, 1, config.batch_size).batch(0)
    rate = config.attention_lr if group == "attention" else config.output_lr
    gaps = []
    for shrink in (1e-3, 1e-4):
        params = {
            k: v.unsqueeze(0).clone().requires_grad_(True) for k, v in E.initial_parameters(task, config, SEEDS).items()
        }
        moved = [params[k] for k, (_, g) in shapes.items() if g == group]
        kind = torch.optim.SGD if optimiser == "sgd" else torch.optim.Adam
        step = kind(moved, lr=rate * shrink)
        before = task.losses(params, batch)[0]
        before.sum().backward()
        step.step()
        with torch.no_grad():
            after = task.losses(params, batch)[0]
        measured = (before - after).detach().numpy() / shrink
        gaps.append(np.max(np.abs(measured / predicted - 1)))
    assert gaps[0] < 0.05 and gaps[1] < gaps[0] / 5  # first order: the gap shrinks with the step


def test_bad_input_is_named():
    task = _tasks()["regression"]
    with pytest.raises(TypeError, match="config"):
        P.first_step_balance(task, {"optimiser": "sgd"})
    with pytest.raises(TypeError, match="task"):
        P.first_step_balance(object(), _config())
    with pytest.raises(ValueError, match="seeds"):
        P.first_step_balance(task, _config(), seeds=(1, 1))
    with pytest.raises(ValueError, match="seeds"):
        P.first_step_balance(task, _config(), seeds=())


def test_both_gradients_vanishing_is_an_error():
    class Flat(QuadraticTask):
        def losses(self, params, batch):
            return 0.0 * (params["theta"].sum(-1) + params["u"].sum(-1))

    with pytest.raises(ValueError, match="both groups"):
        P.first_step_balance(Flat(), _config())


def test_predictor_seeds_are_fresh():
    assert not set(P.PREDICTOR_SEEDS) & set(range(60))
    assert not set(P.PREDICTOR_SEEDS) & set(range(10**6, 10**6 + 5))


def test_auroc_is_the_pairwise_count():
    rng = np.random.default_rng(5)
    scores = np.round(rng.normal(size=60), 1)  # ties on purpose
    scores[:3] = [np.inf, -np.inf, np.inf]
    labels = rng.random(60) < 0.3
    positives, negatives = scores[labels], scores[~labels]
    pairs = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    assert V.auroc(scores, labels) == pytest.approx(pairs / (positives.size * negatives.size), rel=1e-14)
    with pytest.raises(ValueError, match="both classes"):
        V.auroc(scores, np.zeros(60, dtype=bool))


def test_baseline_fit_solves_the_score_equations():
    rng = np.random.default_rng(7)
    log_ratio, log_scale = rng.normal(size=200), rng.normal(size=200)
    labels = rng.random(200) < 1 / (1 + np.exp(-(0.3 + 1.2 * log_ratio - 0.8 * log_scale)))
    beta = V.fit_baseline(log_ratio, log_scale, labels)
    x = np.column_stack([np.ones(200), log_ratio, log_scale])
    residual = labels - 1 / (1 + np.exp(-(x @ beta)))
    assert np.max(np.abs(x.T @ residual)) < 1e-4


def test_cluster_bootstrap_is_reproducible_and_brackets_the_estimate():
    rng = np.random.default_rng(9)
    labels = rng.random(120) < 0.4
    scores = {"a": labels + rng.normal(size=120), "b": rng.normal(size=120)}
    clusters = [f"c{k % 12}" for k in range(120)]
    first = V.cluster_bootstrap(scores, labels, clusters, resamples=300, seed=1)
    assert first == V.cluster_bootstrap(scores, labels, clusters, resamples=300, seed=1)
    low, high = first["a"]
    assert low < V.auroc(scores["a"], labels) < high
    assert first["a - b"][0] > 0  # a separates, b is noise
