"""Tests of the exploratory successor predictor, the step-size margin (lagtheory.experiments.confirmatory.stability).

Independent paths: second central differences of the real tasks' losses (no autograd) for the step-0 Hessian;
gradient descent itself (iterated by hand with the two groups' step sizes until it converges or blows up) for
the stability edge the margin places at 0; one real step of torch's Adam for Adam's per-coordinate step; the
linearised Adam recurrence iterated by hand for Adam's limit; a calibration written by hand; and the registered
predictor's committed H5 result, which the scoring must reproduce for the registered balance.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from lagtheory.experiments.confirmatory import stability as S
from lagtheory.experiments.engine import cells as E
from lagtheory.experiments.paths import PREDICTOR_SUCCESSOR
from lagtheory.experiments.tasks.languages.catalogue import TASKS
from lagtheory.experiments.tasks.languages.task import LanguageRuns, LanguageSetting
from lagtheory.experiments.tasks.sequences.softmax_icl import SoftmaxICLSetting, SoftmaxICLTask
from lagtheory.training import TorchGroupOptimiser

SEEDS = (3, 11, 2_000_001)
# A coupled quadratic: x = (theta, u), loss x^T A x / 2; A is symmetric positive definite and not diagonal.
A = np.array(
    [
        [2.0, 0.6, 0.3, 0.0],
        [0.6, 1.5, 0.2, 0.4],
        [0.3, 0.2, 4.0, -0.5],
        [0.0, 0.4, -0.5, 0.8],
    ]
)


class CoupledQuadratic:
    """Toy engine task: seed j's loss is x_j^T A x_j / 2 with x_j = (theta_j, u_j), whatever the batch."""

    name = "coupled quadratic"

    def parameter_shapes(self):
        return {"theta": ((2,), "attention"), "u": ((2,), "output")}

    def preset_attention(self):
        return {"theta": torch.zeros(2, dtype=torch.float64)}

    def training_stream(self, seeds, steps, batch_size):
        class Stream:
            def batch(self, step):
                return None

        return Stream()

    def losses(self, params, batch):
        x = torch.cat([params["theta"], params["u"]], dim=-1)
        return 0.5 * torch.einsum("...i,ij,...j->...", x, torch.as_tensor(A), x)

    def observe(self, params):
        return {}

    def evaluate(self, params):
        return {}


def _config(rate: float = 1.0, ratio: float = 4.0, **changes) -> E.TrainingConfig:
    base = E.TrainingConfig(
        steps=8,
        attention_lr=rate * math.sqrt(ratio),
        output_lr=rate / math.sqrt(ratio),
        warm_steps=2,
        big_step=0.6,
        batch_size=8,
        output_scale=0.5,
        attention_init="random",
        attention_scale=0.2,
    )
    return dataclasses.replace(base, **changes)


def _tasks():
    return {
        "language": LanguageRuns(TASKS["CONTAINS_AB"], LanguageSetting(horizon_lengths=(1, 2, 3))),
        "softmax": SoftmaxICLTask(
            SoftmaxICLSetting(train_min=2, train_max=8, test_sizes=(4, 16), test_size=16, test_seed=5, dim=2)
        ),
    }


def _finite_difference_hessians(task, config, seeds, h=1e-4):
    """Per seed, the Hessian of its loss from second central differences of the loss alone (no autograd)."""
    start = E.initial_parameters(task, config, seeds)
    shapes = task.parameter_shapes()
    names = list(shapes)
    flat = torch.cat([start[name].reshape(len(seeds), -1) for name in names], dim=1)
    sizes = [int(np.prod(shapes[name][0], dtype=np.int64)) for name in names]
    batch = task.training_stream(seeds, 1, config.batch_size).batch(0)

    def loss(x):
        pieces = torch.split(x, sizes, dim=1)
        params = {n: p.reshape(len(seeds), *shapes[n][0]).unsqueeze(0) for n, p in zip(names, pieces, strict=True)}
        with torch.no_grad():
            return task.losses(params, batch)[0].numpy()

    n = flat.shape[1]
    hessian = np.zeros((len(seeds), n, n))
    eye = torch.eye(n, dtype=torch.float64) * h
    for i in range(n):
        for j in range(n):
            plus_plus = loss(flat + eye[i] + eye[j])
            plus_minus = loss(flat + eye[i] - eye[j])
            minus_plus = loss(flat - eye[i] + eye[j])
            minus_minus = loss(flat - eye[i] - eye[j])
            hessian[:, i, j] = (plus_plus - plus_minus - minus_plus + minus_minus) / (4 * h * h)
    return hessian


@pytest.mark.parametrize("which", ["language", "softmax"])
def test_step_hessians_match_second_differences(which):
    task = _tasks()[which]
    config = _config()
    found = S.step_hessians(task, config, SEEDS)["hessian"]
    expected = _finite_difference_hessians(task, config, SEEDS)
    scale = np.max(np.abs(expected))
    assert scale > 0
    assert np.max(np.abs(found - expected)) < 1e-5 * scale


def test_quadratic_hessian_is_a():
    found = S.step_hessians(CoupledQuadratic(), _config(), SEEDS)
    assert np.allclose(found["hessian"], A[None], rtol=0, atol=1e-13)
    assert list(found["groups"]) == ["attention", "attention", "output", "output"]


def _gradient_descent_blows_up(rate: float, ratio: float, steps: int = 4000) -> bool:
    """Gradient descent iterated by hand on the coupled quadratic, attention at rate*sqrt(ratio), output at
    rate/sqrt(ratio): whether the loss after ``steps`` steps is above the loss at the start."""
    step = np.array([math.sqrt(ratio)] * 2 + [1 / math.sqrt(ratio)] * 2) * rate
    x = np.array([0.3, -0.2, 0.1, 0.5])
    start = x @ A @ x
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(steps):
            x = x - step * (A @ x)
        return not x @ A @ x <= start  # a loss that overflowed to inf or NaN blew up too


@pytest.mark.parametrize("ratio", [0.25, 4.0, 30.0])
def test_the_margin_is_zero_at_the_edge_where_gradient_descent_starts_to_blow_up(ratio):
    task = CoupledQuadratic()
    # The edge by bisection on gradient descent itself, not on the margin's formula.
    low, high = 0.01, 10.0
    assert not _gradient_descent_blows_up(low, ratio) and _gradient_descent_blows_up(high, ratio)
    for _ in range(30):
        middle = math.sqrt(low * high)
        low, high = (low, middle) if _gradient_descent_blows_up(middle, ratio) else (middle, high)
    edge = math.sqrt(low * high)
    assert S.step_size_margin(task, _config(edge, ratio), SEEDS) == pytest.approx(0.0, abs=1e-3)
    assert S.step_size_margin(task, _config(edge * 10, ratio), SEEDS) == pytest.approx(1.0, abs=1e-3)


def test_adams_step_per_coordinate_is_torchs_first_step():
    task = _tasks()["softmax"]
    config = _config(optimiser="adam")
    found = S.step_hessians(task, config, SEEDS)
    shapes = task.parameter_shapes()
    params = {
        k: v.unsqueeze(0).clone().requires_grad_(True) for k, v in E.initial_parameters(task, config, SEEDS).items()
    }
    groups = [
        {"params": [params[k] for k, (_, g) in shapes.items() if g == group], "lr": rate}
        for group, rate in (("attention", config.attention_lr), ("output", config.output_lr))
    ]
    before = {k: v.detach().clone() for k, v in params.items()}
    step = torch.optim.Adam(groups, betas=(S.ADAM_BETA1, 0.999), eps=1e-8)
    batch = task.training_stream(SEEDS, 1, config.batch_size).batch(0)
    task.losses(params, batch).sum().backward()
    step.step()
    moved = torch.cat([(before[k] - params[k].detach())[0].reshape(len(SEEDS), -1) for k in shapes], dim=1).numpy()
    per_coordinate = moved / found["gradient"]  # torch's step over the gradient: the diagonal P
    root = np.sqrt(per_coordinate)
    expected = np.linalg.eigvalsh(root[:, :, None] * found["hessian"] * root[:, None, :])[:, -1]
    assert np.allclose(S.first_step_sharpness(task, config, SEEDS), expected, rtol=1e-9, atol=0)


def _linear_adam_blows_up(sharpness: float, beta1: float, steps: int = 20000) -> bool:
    """Adam's update with a frozen preconditioner on one direction of preconditioned curvature ``sharpness``
    (x <- x - m', m' = beta1 m + (1 - beta1) sharpness x), iterated by hand."""
    x, m = 1.0, 0.0
    for _ in range(steps):
        m = beta1 * m + (1 - beta1) * sharpness * x
        x -= m
        if abs(x) > 1e6:
            return True
    return False


def test_adams_limit_is_where_the_linearised_update_starts_to_blow_up():
    limit = S.STABILITY_LIMITS["adam"]
    assert not _linear_adam_blows_up(0.99 * limit, S.ADAM_BETA1)
    assert _linear_adam_blows_up(1.01 * limit, S.ADAM_BETA1)


def test_adams_beta1_is_the_engines():
    default = inspect.signature(TorchGroupOptimiser).parameters["betas"].default
    assert S.ADAM_BETA1 == default[0]


def test_calibration_margin_by_hand():
    calibration = {
        "grid": [0.01, 0.1, 1.0, 10.0],
        "levels": ["a", "b", "c"],
        "diverged_runs": [[0, 0, 0], [0, 0, 0], [0, 3, 0], [2, 10, 0]],
    }
    assert S.calibration_margin(calibration, "a", 1.0) == pytest.approx(-1.0)
    assert S.calibration_margin(calibration, "b", 0.1) == pytest.approx(-1.0)
    assert S.calibration_margin(calibration, "c", 10.0) == pytest.approx(-0.5)  # none diverged: half a decade above
    with pytest.raises(ValueError, match="level"):
        S.calibration_margin(calibration, "d", 1.0)
    with pytest.raises(ValueError, match="rate"):
        S.calibration_margin(calibration, "a", 0.0)


def test_scoring_the_registered_balance_reproduces_the_committed_h5():
    committed = json.loads(Path("book/data/confirmatory/predictor.json").read_text())
    found = S.score(committed["cells"], ["balance"])["all"]
    outcome = committed["outcome"]
    assert found["cells"] == outcome["cells"] and found["positives"] == outcome["positives"]
    assert found["auroc"]["balance"] == pytest.approx(outcome["auroc"]["predictor"], abs=1e-12)
    assert found["auroc"]["baseline"] == pytest.approx(outcome["auroc"]["baseline"], abs=1e-12)
    for mine, theirs in (
        ("balance", "predictor"),
        ("baseline", "baseline"),
        ("balance - baseline", "predictor - baseline"),
    ):
        assert found["interval"][mine] == pytest.approx(outcome["interval"][theirs], abs=1e-12)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="names"):
        S.score([], [])


def test_the_committed_successor_record_is_reproduced():
    """A seeded sample of the stored margins is recomputed from the validation record, and the stored scores from
    the stored margins with the registered labels."""
    from lagtheory.experiments.confirmatory.records import load_stage, stage_path

    stored = json.loads(PREDICTOR_SUCCESSOR.read_text())
    registered = json.loads(Path("book/data/confirmatory/predictor.json").read_text())["cells"]
    by_cell = {row["cell"]: row for row in stored["cells"]}
    assert sorted(by_cell) == sorted(row["cell"] for row in registered)
    sample = [registered[i] for i in np.random.default_rng(31).choice(len(registered), size=4, replace=False)]
    fresh = S.validation_margins(load_stage(stage_path("validation")), sample)
    for row in fresh:
        for name in S.SCORES:
            assert row[name] == pytest.approx(by_cell[row["cell"]][name], abs=1e-9), (row["cell"], name)
    joined = [{**row, **by_cell[row["cell"]]} for row in registered]
    assert json.loads(json.dumps(S.score(joined, S.SCORES))) == stored["score"]
