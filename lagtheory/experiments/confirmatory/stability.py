"""An exploratory successor to the registered predictor (H5): how close a cell's base rate sits to joint
training's step-size stability edge, computed before any run of the cell.

The confirmatory study's data point to step-size robustness rather than to "who moves first": lag's
benefit shrinks when each schedule is tuned to its best rate, and lag helps most where the shared rate
sits near joint's edge. The *step-size margin* (:func:`step_size_margin`, the primary definition, fixed
before it was scored) says how far the base rate ``eta`` is from the largest rate at which joint's first
step is stable on the local quadratic model of the loss:

* ``H_j`` is the Hessian of seed j's mean training loss on the batch of step 0 at initialisation (the
  engine's initial parameters and batch, :func:`lagtheory.experiments.engine.cells.initial_parameters`), with
  respect to every parameter of both groups;
* ``P_j`` is the diagonal of joint's first step per coordinate: SGD ``eta_group`` (attention
  ``eta*sqrt(r)``, output ``eta/sqrt(r)``); Adam ``eta_group / (|g_i| + eps)``, its first,
  bias-corrected step ``-eta_group g_i / (|g_i| + eps)`` (:data:`lagtheory.experiments.predictor.balance.ADAM_EPS`);
* the step's sharpness is ``lambda_j``, the largest eigenvalue of ``P_j^(1/2) H_j P_j^(1/2)``; gradient
  descent on a quadratic is stable while it is below 2, Adam with momentum ``beta1`` (its linearised
  update with a frozen preconditioner) while it is below ``(2 + 2 beta1) / (1 - beta1)``, 38 at the
  engine's 0.9 (:data:`STABILITY_LIMITS`; Cohen et al., "Adaptive gradient methods at the edge of
  stability");
* the margin is ``log10(mean_j lambda_j / limit)`` over the predictor seeds
  (:data:`lagtheory.experiments.predictor.balance.PREDICTOR_SEEDS`): the log10 of the base rate over joint's
  largest stable base rate at step 0. At 0 the base rate sits on the edge; above it joint's first step
  overshoots along the sharpest direction.

The base rate of a validation cell is the one its calibration chose (on the calibration seeds, before the
cell's runs), so the margin, like the registered balance, is known before the cell is trained. A second,
coarser reading (:func:`calibration_margin`) takes the edge from the calibration runs themselves: the
smallest grid rate at which any calibration run (joint or lag: the calibration stores them together)
diverged.

Both are exploratory. They are scored (:func:`score`) on the registered validation cells against the
frozen design-only baseline, with the registered label and the registered cluster bootstrap; those labels
had been seen when this successor was proposed, so the result is a reason to register it for a held-out
test, not a confirmation.

The command::

    python -m lagtheory.experiments.run successor

computes both margins for every validation cell from the committed validation record, scores them, and writes
:data:`~lagtheory.experiments.paths.PREDICTOR_SUCCESSOR` (never into ``book/data/confirmatory``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from ..engine.cells import GROUPS, Task, TrainingConfig, check_seeds, initial_parameters
from ..exploratory.records import config_from_dict
from ..exploratory.studies import study
from ..paths import CONFIRMATORY_RECORDS, PREDICTOR_SUCCESSOR
from ..predictor.balance import ADAM_EPS, PREDICTOR_SEEDS
from ..predictor.evaluation import RESAMPLES, auroc, cluster_bootstrap
from .records import load_stage, stage_path

ADAM_BETA1 = 0.9
"""Adam's first-moment coefficient, as the engine's optimiser uses it (:class:`lagtheory.training.TorchGroupOptimiser`'s
default)."""
STABILITY_LIMITS: Mapping[str, float] = {"sgd": 2.0, "adam": (2 + 2 * ADAM_BETA1) / (1 - ADAM_BETA1)}
"""The largest stable sharpness of a step on a quadratic, per optimiser (2 for gradient descent, and
``(2 + 2 beta1) / (1 - beta1)`` for Adam with momentum ``beta1`` and a frozen preconditioner)."""
HALF_DECADE = 0.5
"""The spacing of the calibration grid in decades."""
SCORES = ("step_size_margin", "calibration_margin")
"""The successor's primary definition, then its coarse reading from the calibration."""


def step_hessians(task: Task, config: TrainingConfig, seeds: Sequence[int] = PREDICTOR_SEEDS) -> dict[str, Any]:
    """Per seed, the gradient and the Hessian of the mean training loss on the batch of step 0 at the engine's
    initial parameters, over every parameter flattened (in the task's order), and each coordinate's group.

    Parameters
    ----------
    task : Task
        An engine task with parameters in both groups.
    config : TrainingConfig
        The configuration (initialisation, batch size).
    seeds : sequence of int, optional
        Distinct integers >= 0 (default :data:`~lagtheory.experiments.predictor.balance.PREDICTOR_SEEDS`).

    Returns
    -------
    dict
        ``gradient`` float64 (seeds, n), ``hessian`` float64 (seeds, n, n) and ``groups`` (n,) of str.

    Raises
    ------
    ValueError
        If the seeds are invalid, the task lacks a group, or the loss, a gradient or the Hessian is not finite.
    """
    seeds = check_seeds(seeds)
    shapes = task.parameter_shapes()
    if {group for _, group in shapes.values()} != set(GROUPS):
        raise ValueError(f"task must have parameters in both groups {GROUPS}")
    start = initial_parameters(task, config, seeds)
    names = list(shapes)
    sizes = [int(np.prod(shapes[name][0], dtype=np.int64)) for name in names]
    flat = torch.cat([start[name].reshape(len(seeds), -1) for name in names], dim=1).requires_grad_(True)
    pieces = torch.split(flat, sizes, dim=1)
    params = {
        name: piece.reshape(len(seeds), *shapes[name][0]).unsqueeze(0)
        for name, piece in zip(names, pieces, strict=True)
    }
    batch = task.training_stream(seeds, 1, config.batch_size).batch(0)
    losses = task.losses(params, batch)  # (1, seeds): seed j's loss depends on seed j's parameters only
    if not bool(torch.all(torch.isfinite(losses))):
        raise ValueError("the initial training loss must be finite for every seed")
    (gradient,) = torch.autograd.grad(losses.sum(), flat, create_graph=True)
    rows = [torch.autograd.grad(gradient[:, k].sum(), flat, retain_graph=True)[0] for k in range(flat.shape[1])]
    hessian = torch.stack(rows, dim=1).detach().numpy()  # (seeds, n, n)
    g = gradient.detach().numpy()
    if not (np.all(np.isfinite(g)) and np.all(np.isfinite(hessian))):
        raise ValueError("the initial gradient and Hessian must be finite")
    groups = np.array([shapes[name][1] for name, size in zip(names, sizes, strict=True) for _ in range(size)])
    return {"gradient": g, "hessian": (hessian + hessian.transpose(0, 2, 1)) / 2, "groups": groups}


def first_step_sharpness(
    task: Task, config: TrainingConfig, seeds: Sequence[int] = PREDICTOR_SEEDS
) -> NDArray[np.float64]:
    """Per seed, the sharpness of joint's first step (module docstring): the largest eigenvalue of
    ``P^(1/2) H P^(1/2)``, ``P`` the diagonal of the first step per coordinate under ``config``.

    Parameters
    ----------
    task : Task
        An engine task with parameters in both groups.
    config : TrainingConfig
        The configuration: its step sizes, optimiser and initialisation.
    seeds : sequence of int, optional
        Distinct integers >= 0 (default :data:`~lagtheory.experiments.predictor.balance.PREDICTOR_SEEDS`).

    Returns
    -------
    ndarray
        float64 (seeds,).

    Raises
    ------
    ValueError
        As :func:`step_hessians` raises it.
    """
    found = step_hessians(task, config, seeds)
    rates = np.where(found["groups"] == "attention", config.attention_lr, config.output_lr)
    steps = np.broadcast_to(rates, found["gradient"].shape)
    if config.optimiser == "adam":
        steps = steps / (np.abs(found["gradient"]) + ADAM_EPS)
    root = np.sqrt(steps)
    scaled = root[:, :, None] * found["hessian"] * root[:, None, :]
    return np.linalg.eigvalsh(scaled)[:, -1]


def step_size_margin(task: Task, config: TrainingConfig, seeds: Sequence[int] = PREDICTOR_SEEDS) -> float:
    """The successor predictor (module docstring): ``log10(mean_j lambda_j / limit)``, the base rate of
    ``config`` over joint's largest stable base rate at step 0, in decades; -inf where the mean sharpness is not
    positive (no direction of ascent curvature: no edge).

    Parameters
    ----------
    task : Task
        An engine task with parameters in both groups.
    config : TrainingConfig
        The configuration at the cell's base rate.
    seeds : sequence of int, optional
        Distinct integers >= 0 (default :data:`~lagtheory.experiments.predictor.balance.PREDICTOR_SEEDS`).

    Returns
    -------
    float
        The margin in decades, possibly -inf.

    Raises
    ------
    ValueError
        As :func:`step_hessians` raises it.
    """
    sharpness = float(first_step_sharpness(task, config, seeds).mean())
    limit = STABILITY_LIMITS[config.optimiser]
    return math.log10(sharpness / limit) if sharpness > 0 else -math.inf


def calibration_margin(calibration: Mapping[str, Any], level: str, rate: float) -> float:
    """The coarse reading from a calibration (:func:`lagtheory.experiments.exploratory.calibration.calibrate`'s result):
    log10 of ``rate`` over the smallest grid rate at which some calibration run of ``level`` diverged, that
    rate taken half a decade above the grid's top where none did.

    Parameters
    ----------
    calibration : mapping
        A calibration: its ``grid``, ``levels`` and ``diverged_runs`` (per rate and level).
    level : str
        One of its levels.
    rate : float
        The base rate, > 0.

    Returns
    -------
    float
        The margin in decades.

    Raises
    ------
    ValueError
        If ``level`` is not a level of the calibration or ``rate`` is not positive.
    """
    if level not in calibration["levels"]:
        raise ValueError(f"level must be one of {calibration['levels']}, got {level!r}")
    if not rate > 0:
        raise ValueError(f"rate must be positive, got {rate!r}")
    column = calibration["levels"].index(level)
    grid = calibration["grid"]
    diverging = [r for r, row in zip(grid, calibration["diverged_runs"], strict=True) if row[column] > 0]
    edge = min(diverging) if diverging else max(grid) * 10**HALF_DECADE
    return math.log10(rate / edge)


def score(
    rows: Sequence[Mapping[str, Any]], names: Sequence[str], resamples: int = RESAMPLES
) -> dict[str, dict[str, Any]]:
    """AUROC for the label ``lag_helps`` of each score in ``names`` (row fields) and of the frozen baseline
    (``baseline_log_odds``), with the registered cluster bootstrap's 95% intervals (task-optimiser clusters,
    ``resamples`` draws from ``default_rng(0)``) of each and of its difference with the baseline; the same per
    optimiser (clusters within it).

    Parameters
    ----------
    rows : sequence of mapping
        One row per cell: ``lag_helps``, ``cluster``, ``optimiser``, ``baseline_log_odds`` and each of ``names``.
    names : sequence of str
        The scores to evaluate, at least one.
    resamples : int, optional
        Bootstrap draws, an integer >= 100 (default the registered 4000).

    Returns
    -------
    dict of str to dict
        "all", "sgd", "adam" -> ``cells``, ``positives``, ``auroc`` (name -> value, "baseline" included) and
        ``interval`` (name, "baseline" and "<name> - baseline" -> [low, high]).

    Raises
    ------
    ValueError
        If ``names`` is empty or a subset lacks one of the two labels.
    """
    if not names:
        raise ValueError("names must hold at least one score")
    out = {}
    for subset in ("all", "sgd", "adam"):
        kept = [row for row in rows if subset in ("all", row["optimiser"])]
        labels = np.array([row["lag_helps"] for row in kept], dtype=bool)
        scores = {name: np.array([row[name] for row in kept], dtype=np.float64) for name in names}
        scores["baseline"] = np.array([row["baseline_log_odds"] for row in kept], dtype=np.float64)
        intervals: dict[str, list[float]] = {}
        for name in names:
            found = cluster_bootstrap(
                {name: scores[name], "baseline": scores["baseline"]},
                labels,
                [row["cluster"] for row in kept],
                resamples,
            )
            intervals.update({key: list(value) for key, value in found.items()})
        out[subset] = {
            "cells": len(kept),
            "positives": int(labels.sum()),
            "auroc": {name: auroc(value, labels) for name, value in scores.items()},
            "interval": intervals,
        }
    return out


def validation_margins(validation: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each registered validation row (the ``cells`` of ``book/data/confirmatory/predictor.json``: label, cluster,
    frozen baseline) with the cell's calibrated ``base_rate`` and both margins of :data:`SCORES`, computed from the
    validation record's configuration of joint's run and its calibration.

    Parameters
    ----------
    validation : mapping
        The validation stage's record (its ``cells`` and ``calibration``).
    rows : sequence of mapping
        The registered rows, one per validation cell that ran.

    Returns
    -------
    list of dict
        The rows in their order, each extended.

    Raises
    ------
    KeyError
        If a row's cell is not in the record.
    """
    built: dict[tuple[str, str], Task] = {}
    out = []
    for row in rows:
        entry = validation["cells"][row["cell"]]
        configuration = entry["configuration"]
        the_study = study(configuration["study"])
        key = (configuration["study"], configuration["task"])
        if key not in built:
            setting = config_from_dict(the_study.setting_types[configuration["task"]], configuration["setting"])
            built[key] = the_study.build(configuration["task"], setting)
        joint = next(run for run in entry["runs"].values() if run["schedule"] == "joint")
        config = config_from_dict(TrainingConfig, joint["training"])
        calibration = validation["calibration"][configuration["task"]][configuration["optimiser"]]
        level = configuration["exploratory"].partition("/")[2]
        rate = entry["calibrated_rate"]
        out.append(
            {
                **row,
                "base_rate": rate,
                "step_size_margin": step_size_margin(built[key], config),
                "calibration_margin": calibration_margin(calibration, level, rate),
            }
        )
    return out


def main(folder: Path = CONFIRMATORY_RECORDS, output: Path = PREDICTOR_SUCCESSOR) -> Path:
    """The command of the module docstring; returns the path written.

    Parameters
    ----------
    folder : pathlib.Path, optional
        Where the committed confirmatory records are read (default ``book/data/confirmatory``).
    output : pathlib.Path, optional
        The file written (default :data:`~lagtheory.experiments.paths.PREDICTOR_SUCCESSOR`).

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    validation = load_stage(stage_path("validation", folder))
    registered = json.loads((folder / "predictor.json").read_text())
    rows = validation_margins(validation, registered["cells"])
    result = {
        "definition": "log10(base rate * mean over the predictor seeds of the step-0 sharpness / stability limit)",
        "stability_limits": dict(STABILITY_LIMITS),
        "records_registration": validation["registration"],
        "score": score(rows, SCORES),
        "cells": [{key: row[key] for key in ("cell", "base_rate", *SCORES)} for row in rows],
    }
    output.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return output
