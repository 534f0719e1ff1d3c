"""The registered predictor of where lag helps: the first-step balance of joint training.

A quantity computed at step 0, before any training, from the model, the data and
the optimiser of a configuration (the task and its
:class:`~lagtheory.experiments.engine.config.TrainingConfig`), not from any run's
outcome. The mechanism of the book (:prf:ref:`lem-gradients`) is that the
attention gradient is only as informative as the readout already is: lag should
matter where joint training's first step would move the attention, in loss terms,
at least as much as the readout. The first step of joint training lowers the
training loss, to first order, by ``D_attention + D_output`` with

* SGD: ``D_group = eta_group * |g_group|^2`` (the step is ``-eta g``);
* Adam (first step, bias-corrected moments ``m = g``, ``v = g^2``, the step is
  ``-eta g / (|g| + eps)`` elementwise): ``D_group = eta_group * sum_i g_i^2 / (|g_i| + eps)``,

where ``g_group`` is the gradient of a seed's mean training loss on the batch of
step 0 with respect to the group's parameters at initialisation. The predictor
(:func:`first_step_balance`) is ``log10(mean_j D_attention,j / mean_j D_output,j)``
over the predictor seeds ``j`` (:data:`PREDICTOR_SEEDS`, used by no run); it
predicts "lag helps" when it is at least :data:`THRESHOLD`.

It is not a restatement of the design: at a fixed step-size ratio it changes with
the readout scale, the attention's initial value (zero, random, preset to a
solution), the task and the optimiser, through the gradients. The book's
registration page (``book/registration.md``) freezes this definition, the
threshold and the seeds; ``tests/test_predictor.py`` checks the gradients against
central finite differences and the first-order decreases against one real step of
torch's optimisers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from ..engine.cells import GROUPS, Task, TrainingConfig, check_seeds, initial_parameters

PREDICTOR_SEEDS: tuple[int, ...] = tuple(range(2_000_000, 2_000_032))
"""The 32 seeds the predictor is computed on; their initialisation and step-0 batch only, disjoint from the
exploratory seeds (0..59 have been used), the calibration seeds (10^6..10^6+4) and the registered confirmatory
seeds."""

THRESHOLD = 0.0
"""The frozen decision threshold on :func:`first_step_balance`; "lag helps" is predicted where the balance is
>= THRESHOLD, i.e. where joint training's first step lowers the loss at least as much through the attention as
through the readout. Chosen on the exploratory records (``lagtheory.experiments.predictor.evaluation``)."""

ADAM_EPS = 1e-8
"""Adam's eps, as the engine's optimiser uses it (:class:`lagtheory.training.TorchGroupOptimiser`)."""

VALIDATION_SCALES = (0.05, 0.5, 2.0, 10.0)
"""Readout scales of the registered validation cells of the predictor (H5); between the exploratory grid's
(0.05, 0.5, 2) and beyond it (10)."""
VALIDATION_RATIOS = (0.5, 2.0, 30.0)
"""Attention/output step-size ratios of the registered validation cells; between the grid's (0.5, 2) and beyond
it (30)."""


def first_step_decreases(
    task: Task, config: TrainingConfig, seeds: Sequence[int] = PREDICTOR_SEEDS
) -> dict[str, np.ndarray]:
    """Per seed, the first-order decrease of the training loss by the first step of joint training on each
    group alone (module docstring): group name ("attention", "output") -> array (seeds,), float64.

    The initial parameters are the engine's (:func:`lagtheory.experiments.engine.cells.initial_parameters`) and the
    batch is the one the engine would train step 0 on for these seeds.

    Parameters
    ----------
    task : Task
        An engine task with parameters in both groups.
    config : TrainingConfig
        The configuration (initialisation, step sizes, optimiser, batch size).
    seeds : sequence of int, optional
        Distinct integers >= 0 (default :data:`PREDICTOR_SEEDS`).

    Returns
    -------
    dict of str to ndarray
        ``"attention"`` and ``"output"`` -> float64 (seeds,).

    Raises
    ------
    TypeError
        If ``config`` is not a TrainingConfig or ``task`` not an engine task.
    ValueError
        If the seeds are invalid, the task lacks a group, or the initial loss or a gradient is not finite.
    """
    if not isinstance(config, TrainingConfig):
        raise TypeError(f"config must be a TrainingConfig, got {type(config).__name__}")
    for method in ("parameter_shapes", "training_stream", "losses"):
        if not callable(getattr(task, method, None)):
            raise TypeError(f"task must be an engine Task (with {method}()), got {type(task).__name__}")
    seeds = check_seeds(seeds)
    shapes = task.parameter_shapes()
    groups = {name: group for name, (_, group) in shapes.items()}
    if set(groups.values()) != set(GROUPS):
        raise ValueError(f"task must have parameters in both groups {GROUPS}, got {sorted(set(groups.values()))}")
    start = initial_parameters(task, config, seeds)
    params = {name: value.unsqueeze(0).clone().requires_grad_(True) for name, value in start.items()}
    batch = task.training_stream(seeds, 1, config.batch_size).batch(0)
    losses = task.losses(params, batch)  # (1, seeds); seed j's loss depends on seed j's parameters only
    if not bool(torch.all(torch.isfinite(losses))):
        raise ValueError("the initial training loss must be finite for every seed")
    names = list(params)
    gradients = torch.autograd.grad(losses.sum(), [params[name] for name in names], allow_unused=True)
    rates = {"attention": config.attention_lr, "output": config.output_lr}
    decreases = {group: np.zeros(len(seeds)) for group in GROUPS}
    for name, gradient in zip(names, gradients, strict=True):
        if gradient is None:
            continue
        g = gradient[0].reshape(len(seeds), -1).detach().numpy()
        if not np.all(np.isfinite(g)):
            raise ValueError(f"the initial gradient of {name!r} must be finite")
        if config.optimiser == "sgd":
            per_seed = np.sum(g * g, axis=1)
        else:
            per_seed = np.sum(g * g / (np.abs(g) + ADAM_EPS), axis=1)
        decreases[groups[name]] += rates[groups[name]] * per_seed
    return decreases


def first_step_balance(task: Task, config: TrainingConfig, seeds: Sequence[int] = PREDICTOR_SEEDS) -> float:
    """The registered predictor (module docstring): log10 of the mean over ``seeds`` of the attention's
    first-order loss decrease over the readout's, at step 0 of joint training under ``config`` on ``task``.

    -inf where the attention's gradient vanishes on every seed (as from zero initialisation in the theorem's
    setting, :prf:ref:`lem-gradients`), +inf where the readout's does. Predict "lag helps"
    where the value is >= :data:`THRESHOLD`.

    Parameters
    ----------
    task : Task
        An engine task with parameters in both groups.
    config : TrainingConfig
        The configuration.
    seeds : sequence of int, optional
        Distinct integers >= 0 (default :data:`PREDICTOR_SEEDS`).

    Returns
    -------
    float
        The balance, possibly -inf or +inf.

    Raises
    ------
    ValueError
        If both groups' gradients vanish on every seed, or as :func:`first_step_decreases` raises.
    TypeError
        As :func:`first_step_decreases` raises.
    """
    decreases = first_step_decreases(task, config, seeds)
    attention, output = float(decreases["attention"].mean()), float(decreases["output"].mean())
    if attention == 0 and output == 0:
        raise ValueError("the initial gradients of both groups vanish on every seed: the balance is undefined")
    if output == 0:
        return math.inf
    if attention == 0:
        return -math.inf
    return math.log10(attention / output)
