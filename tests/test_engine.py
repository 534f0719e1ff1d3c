"""Tests of the training loop (lagtheory.training) and the seed-batched engine
(lagtheory.experiments.engine.cells).

Expected values are derived by hand: on the separable quadratic loss
L = (x - x*)^2 / 2 (summed over coordinates) one SGD step of size lr maps x to
x - lr (x - x*), so k steps give x* + (1 - lr)^k (x0 - x*), and a frozen group
keeps its initial value exactly. Adam's first step from a fresh state moves
each coordinate by -lr g / (|g| + eps) (bias-corrected moments m = g, v = g^2).
The engine's batched runs are compared with the same seeds run one at a time,
and its batched forward with the single-model paths (the torch module, the
token-level formula).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from lagtheory.experiments.engine import cells as E
from lagtheory.experiments.tasks.languages.catalogue import TASKS
from lagtheory.experiments.tasks.languages.task import LanguageRuns, LanguageSetting
from lagtheory.experiments.tasks.sequences import icl as I
from lagtheory.experiments.tasks.sequences import regression as R
from lagtheory.experiments.tasks.sequences import softmax_icl as SI
from lagtheory.schedules import AVAILABLE_SCHEDULES, Phase, ScheduleSettings, make_schedule
from lagtheory.training import NumpyGradientDescent, TorchGroupOptimiser, descend

TOTAL, LR, WARM, BIG = 12, 0.25, 4, 2.0
SETTINGS = ScheduleSettings(steps=TOTAL, attention_lr=LR, output_lr=LR, warm_steps=WARM, big_step=BIG)
ATTENTION_TARGET, OUTPUT_TARGET = 1.0, -3.0
ATTENTION_START, OUTPUT_START = [0.5, -1.0], [2.0, 0.0, 1.0]


def _expected(x0: float, target: float, lr: float, steps: int) -> float:
    """x after ``steps`` SGD steps of size lr on (x - target)^2 / 2, by the closed form."""
    return target + (1 - lr) ** steps * (x0 - target)


def _quadratic_run(name: str, kind: str = "sgd"):
    """Train the quadratic problem with schedule ``name``; return (attention, output, snapshots before each step)."""
    attention = torch.tensor(ATTENTION_START, dtype=torch.float64, requires_grad=True)
    output = torch.tensor(OUTPUT_START, dtype=torch.float64, requires_grad=True)
    optimiser = TorchGroupOptimiser([[attention]], [[output]], kind=kind)
    snapshots = []

    def gradient(step, phases):
        snapshots.append((attention.detach().clone(), output.detach().clone()))
        loss = 0.5 * ((attention - ATTENTION_TARGET) ** 2).sum() + 0.5 * ((output - OUTPUT_TARGET) ** 2).sum()
        optimiser.backward(loss, phases)
        return np.array([loss.item()])

    losses = descend([make_schedule(name, SETTINGS)], gradient, optimiser)
    return attention.detach().numpy(), output.detach().numpy(), snapshots, losses


def test_joint_follows_the_closed_form_and_records_losses_before_each_step():
    attention, output, _, losses = _quadratic_run("joint")
    np.testing.assert_allclose(attention, [_expected(x, ATTENTION_TARGET, LR, TOTAL) for x in ATTENTION_START])
    np.testing.assert_allclose(output, [_expected(x, OUTPUT_TARGET, LR, TOTAL) for x in OUTPUT_START])
    initial = 0.5 * ((0.5 - 1) ** 2 + (-1 - 1) ** 2 + (2 + 3) ** 2 + (0 + 3) ** 2 + (1 + 3) ** 2)
    np.testing.assert_allclose(losses[:, 0], initial * (1 - LR) ** (2 * np.arange(TOTAL)))


def test_lag_leaves_attention_untouched_during_the_warm_up():
    attention, output, snapshots, _ = _quadratic_run("lag")
    for step in range(WARM + 1):
        assert torch.equal(snapshots[step][0], torch.tensor(ATTENTION_START, dtype=torch.float64)), step
    np.testing.assert_allclose(output, [_expected(x, OUTPUT_TARGET, LR, TOTAL) for x in OUTPUT_START])
    np.testing.assert_allclose(attention, [_expected(x, ATTENTION_TARGET, LR, TOTAL - WARM) for x in ATTENTION_START])


def test_lead_freezes_the_output_then_trains_both():
    _, output, snapshots, _ = _quadratic_run("lead")
    for step in range(WARM + 1):
        assert torch.equal(snapshots[step][1], torch.tensor(OUTPUT_START, dtype=torch.float64)), step
    np.testing.assert_allclose(output, [_expected(x, OUTPUT_TARGET, LR, TOTAL - WARM) for x in OUTPUT_START])


def test_one_step_and_three_phase_move_the_attention_once():
    attention, output, snapshots, _ = _quadratic_run("one-step")
    np.testing.assert_allclose(attention, [x - BIG * (x - ATTENTION_TARGET) for x in ATTENTION_START])  # [1.5, 3.0]
    np.testing.assert_allclose(output, [_expected(x, OUTPUT_TARGET, LR, TOTAL - 1) for x in OUTPUT_START])
    attention, output, snapshots, _ = _quadratic_run("three-phase")
    np.testing.assert_allclose(attention, [x - BIG * (x - ATTENTION_TARGET) for x in ATTENTION_START])
    assert torch.equal(snapshots[1][0], snapshots[0][0]) and torch.equal(snapshots[2][1], snapshots[1][1])
    np.testing.assert_allclose(output, [_expected(x, OUTPUT_TARGET, LR, TOTAL - 1) for x in OUTPUT_START])


def test_two_timescale_scales_the_attention_step():
    attention, _, _, _ = _quadratic_run("two-timescale-0.3")
    np.testing.assert_allclose(attention, [_expected(x, ATTENTION_TARGET, 0.3 * LR, TOTAL) for x in ATTENTION_START])


def test_adam_first_step_by_hand_and_frozen_groups_keep_no_state():
    attention = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    output = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    optimiser = TorchGroupOptimiser([[attention]], [[output]], kind="adam", eps=1e-8)
    phase = Phase(1, 0.1, 0.0)
    loss = 0.5 * ((attention - 1.0) ** 2).sum() + 0.5 * ((output + 3.0) ** 2).sum()
    optimiser.backward(loss, (phase,))
    optimiser.update((phase,))
    g = np.array([0.5 - 1.0, -1.0 - 1.0])
    np.testing.assert_allclose(
        attention.detach().numpy(), [0.5, -1.0] - 0.1 * g / (np.abs(g) + 1e-8), rtol=0, atol=1e-15
    )
    assert output.item() == 2.0
    assert output not in optimiser.optimiser.state  # the frozen group's Adam state never started


def test_numpy_gradient_descent_matches_the_closed_form():
    x = np.array([2.0, 0.0])
    y = np.array([1.0])
    optimiser = NumpyGradientDescent([[x]], [[y]])

    def gradient(step, phases):
        optimiser.set_gradients([[x - 1.0]], [[y + 3.0]])
        return np.array([0.0])

    descend([[Phase(3, 0.5, 0.0), Phase(2, 0.0, 0.25)]], gradient, optimiser)
    np.testing.assert_allclose(x, [_expected(v, 1.0, 0.5, 3) for v in (2.0, 0.0)])
    np.testing.assert_allclose(y, [_expected(1.0, -3.0, 0.25, 2)])


def test_descend_rejects_a_non_finite_loss():
    with pytest.raises(ValueError, match="not finite at step 0"):
        descend([[Phase(2, 1.0, 1.0)]], lambda step, phases: np.array([np.nan]), NumpyGradientDescent([[]], [[]]))


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_an_update_without_handed_gradients_is_refused(kind):
    """The loop's contract: the oracle hands the step's gradients to the optimiser before the update."""
    x = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    y = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    if kind == "numpy":
        optimiser = NumpyGradientDescent([[np.zeros(2)]], [[np.zeros(1)]])
    else:
        optimiser = TorchGroupOptimiser([[x]], [[y]])
    with pytest.raises(ValueError, match="before update"):
        descend([[Phase(1, 1.0, 1.0)]], lambda step, phases: np.array([0.0]), optimiser)
    if kind == "torch":  # after one handed step, a second step without one is refused again
        optimiser.backward((x**2).sum() + (y**2).sum(), (Phase(1, 1.0, 1.0),))
        optimiser.update((Phase(1, 1.0, 1.0),))
        with pytest.raises(ValueError, match="before update"):
            optimiser.update((Phase(1, 1.0, 1.0),))


def test_optimiser_rejects_shared_tensors_and_unknown_kinds():
    x = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    with pytest.raises(ValueError, match="disjoint"):
        TorchGroupOptimiser([[x]], [[x]])
    with pytest.raises(ValueError, match="kind"):
        TorchGroupOptimiser([[x]], [[torch.zeros(1, requires_grad=True)]], kind="rmsprop")


# -- the engine -----------------------------------------------------------------------------

SMALL_LANGUAGE = LanguageSetting(
    max_train_length=12, test_lengths=(5, 20), test_per_class=4, horizon_lengths=(1, 2, 5, 100, 10**6)
)
SMALL_REGRESSION = R.RegressionSetting(train_min=2, train_max=8, test_sizes=(4, 16), test_size=16, test_seed=5, dim=4)
SMALL_ICL = I.ICLSetting(train_min=2, train_max=8, test_sizes=(4, 16), test_size=16, test_seed=5, dim=3)
SMALL_SOFTMAX = SI.SoftmaxICLSetting(train_min=2, train_max=8, test_sizes=(4, 16), test_size=16, test_seed=5, dim=2)


def _config(optimiser: str, attention_init: str, accounting: str = "total") -> E.TrainingConfig:
    lr = 0.05 if optimiser == "adam" else 0.1
    return E.TrainingConfig(
        steps=10,
        attention_lr=lr,
        output_lr=lr,
        warm_steps=3,
        big_step=2.0,
        batch_size=8,
        optimiser=optimiser,
        attention_init=attention_init,
        accounting=accounting,
        output_scale=0.3,
        attention_scale=0.2,
    )


TASK_CASES = {
    "CONTAINS_AB": lambda: LanguageRuns(TASKS["CONTAINS_AB"], SMALL_LANGUAGE),
    "FIRST": lambda: LanguageRuns(TASKS["FIRST"], SMALL_LANGUAGE),
    "regression": lambda: R.RegressionTask(SMALL_REGRESSION),
    "icl": lambda: I.ICLTask(SMALL_ICL),
    "softmax-icl": lambda: SI.SoftmaxICLTask(SMALL_SOFTMAX),
    "CONTAINS_B_NOT_C": lambda: LanguageRuns(TASKS["CONTAINS_B_NOT_C"], SMALL_LANGUAGE),
    "FIRST_LEARNED": lambda: LanguageRuns(TASKS["FIRST_LEARNED"], SMALL_LANGUAGE),
}


@pytest.mark.parametrize("case", sorted(TASK_CASES))
@pytest.mark.parametrize(("optimiser", "attention_init"), [("sgd", "zero"), ("adam", "random"), ("sgd", "preset")])
def test_seeds_at_once_equal_seeds_one_by_one(case, optimiser, attention_init):
    task = TASK_CASES[case]()
    config = _config(optimiser, attention_init)
    seeds = (3, 0, 7)
    together = E.run_cell(task, config, AVAILABLE_SCHEDULES, seeds)
    for j, seed in enumerate(seeds):
        alone = E.run_cell(task, config, AVAILABLE_SCHEDULES, [seed])
        np.testing.assert_allclose(together.losses[:, j], alone.losses[:, 0], rtol=1e-12, atol=1e-12)
        for name in together.final:
            np.testing.assert_allclose(together.final[name][:, j], alone.final[name][:, 0], rtol=1e-12, atol=1e-12)
        for name in together.metrics:
            np.testing.assert_allclose(together.metrics[name][:, j], alone.metrics[name][:, 0], rtol=1e-12, atol=1e-12)
        for name in together.traces:
            np.testing.assert_allclose(together.traces[name][:, j], alone.traces[name][:, 0], rtol=1e-12, atol=1e-12)


def test_schedules_at_once_equal_one_schedule_at_a_time():
    task = TASK_CASES["regression"]()
    config = _config("sgd", "random")
    together = E.run_cell(task, config, AVAILABLE_SCHEDULES, (0, 1))
    for k, name in enumerate(AVAILABLE_SCHEDULES):
        alone = E.run_cell(task, config, [name], (0, 1))
        np.testing.assert_allclose(together.losses[k], alone.losses[0], rtol=1e-12, atol=1e-12)


def test_every_schedule_starts_from_the_same_point_and_sees_the_same_data():
    task = TASK_CASES["CONTAINS_AB"]()
    result = E.run_cell(task, _config("sgd", "random"), AVAILABLE_SCHEDULES, (0, 1))
    # before the first step every schedule has the same loss (same parameters, same batch)
    assert np.all(result.losses[:, :, 0] == result.losses[0, :, 0])
    assert np.all(result.traces["attention_moved"][:, :, 0] == 0)


def test_initialisation_knobs():
    task = TASK_CASES["regression"]()
    zero = E.initial_parameters(task, _config("sgd", "zero"), (4, 5))
    random = E.initial_parameters(task, _config("sgd", "random"), (4, 5))
    preset = E.initial_parameters(task, _config("sgd", "preset"), (4, 5))
    assert torch.equal(zero["readout"], random["readout"]) and torch.equal(zero["readout"], preset["readout"])
    assert torch.all(zero["query"] == 0)
    expected_query = torch.zeros(4, dtype=torch.float64)
    expected_query[R.KEY_COORDINATE] = 2.0
    assert torch.equal(preset["query"], expected_query.expand(2, 4))
    # N(0, 0.3^2) readout and N(0, 0.2^2) query: the same standard normal draws, scaled
    draws = np.random.default_rng(np.random.SeedSequence([4, 0]))
    readout, query = draws.standard_normal(4), draws.standard_normal(4)
    np.testing.assert_allclose(random["readout"][0].numpy(), 0.3 * readout, rtol=0, atol=0)
    np.testing.assert_allclose(random["query"][0].numpy(), 0.2 * query, rtol=0, atol=0)


def test_equal_joint_phase_accounting_runs_longer_schedules():
    task = TASK_CASES["icl"]()
    result = E.run_cell(task, _config("sgd", "random", accounting="joint"), ["joint", "lag", "three-phase"], (0,))
    assert result.losses.shape[-1] == 10 + 3  # lag: 3 warm steps, then 10 joint steps
    joint, lag, three = result.losses[:, 0]
    assert np.all(np.isnan(joint[10:])) and not np.any(np.isnan(lag))
    assert np.all(np.isnan(three[12:])) and not np.any(np.isnan(three[:12]))


def test_batched_forwards_equal_the_single_model_paths():
    rng = np.random.default_rng(0)
    # languages: the model's own forward_counts, one seed at a time
    task = TASKS["EVEN_PAIRS"]
    runs = LanguageRuns(task, SMALL_LANGUAGE)
    stream = runs.training_stream((0, 1), 2, 6)
    counts, prefix, _ = stream.batch(1)
    params = {
        "theta": torch.from_numpy(rng.normal(size=(2, 2, 4))),
        "u": torch.from_numpy(rng.normal(size=(2, 2, 4))),
        "s": torch.from_numpy(rng.normal(size=(2, 2))),
    }
    batched = runs.outputs(params, counts, prefix)
    for k in range(2):
        for j in range(2):
            model = task.model()
            with torch.no_grad():
                model.theta.copy_(params["theta"][k, j])
                model.u.copy_(params["u"][k, j])
                model.s.copy_(params["s"][k, j])
                single = model.forward_counts(counts[j], prefix[j][:, 0])
            np.testing.assert_allclose(batched[k, j].numpy(), single.numpy(), rtol=1e-13, atol=1e-15)
    # in-context regression: the moment form against the token-level sum (1/m) sum_i <w, z_i> <z_i, K x_q>
    batch = I.sample_prompts(np.random.default_rng(1), 5, 2, 9, 3)
    key_query = torch.from_numpy(rng.normal(size=(4, 3)))
    value = torch.from_numpy(rng.normal(size=4))
    tokens = torch.cat([batch.inputs, batch.labels.unsqueeze(-1)], dim=-1)
    direct = ((tokens @ value) * (tokens @ (key_query @ batch.query.unsqueeze(-1))).squeeze(-1)).sum(-1) / batch.counts
    np.testing.assert_allclose(I.predict(key_query, value, batch).numpy(), direct.numpy(), rtol=1e-12, atol=1e-14)


def test_run_cell_rejects_bad_input():
    task = TASK_CASES["regression"]()
    with pytest.raises(ValueError, match="seeds"):
        E.run_cell(task, _config("sgd", "zero"), AVAILABLE_SCHEDULES, [])
    with pytest.raises(ValueError, match="name"):
        E.run_cell(task, _config("sgd", "zero"), ["warp"], [0])
    with pytest.raises(TypeError, match="config"):
        E.run_cell(task, {"steps": 3}, AVAILABLE_SCHEDULES, [0])
    with pytest.raises(ValueError, match="no witness"):
        E.run_cell(LanguageRuns(TASKS["PARITY"], SMALL_LANGUAGE), _config("sgd", "preset"), ["joint"], [0])
    assert math.isfinite(E.run_cell(task, _config("sgd", "zero"), ["joint"], [0]).losses[0, 0, -1])


@pytest.mark.parametrize("case", ["FIRST_LEARNED", "regression", "softmax-icl"])
def test_rows_of_different_configurations_at_once_equal_each_row_alone(case):
    """Rows differing in step sizes, readout scale, attention initialisation, budget and accounting, batched
    in one loop, against each row run alone (to 1e-12); shorter rows stop while the others go on."""
    task = TASK_CASES[case]()
    base = _config("adam", "random")
    configs = [
        base,
        dataclasses.replace(base, attention_lr=0.02, output_lr=0.2, output_scale=1.5),
        dataclasses.replace(base, attention_init="zero", steps=6, warm_steps=2, big_step=1.0),
        dataclasses.replace(base, accounting="joint", attention_init="preset"),
    ]
    rows = [("lag", configs[0]), ("joint", configs[1]), ("three-phase", configs[2]), ("lag", configs[3])]
    seeds = (2, 9)
    together = E.run_rows(task, rows, seeds)
    assert together.losses.shape[-1] == 13  # the longest row: 3 warm-up steps, then 10 joint steps
    for k, row in enumerate(rows):
        alone = E.run_rows(task, [row], seeds)
        steps = alone.losses.shape[-1]
        np.testing.assert_allclose(together.losses[k, :, :steps], alone.losses[0], rtol=1e-12, atol=1e-12)
        assert np.all(np.isnan(together.losses[k, :, steps:]))
        for name in together.final:
            np.testing.assert_allclose(together.final[name][k], alone.final[name][0], rtol=1e-12, atol=1e-12)
        for name in together.metrics:
            np.testing.assert_allclose(together.metrics[name][k], alone.metrics[name][0], rtol=1e-12, atol=1e-12)
        subset = together.subset([k])
        assert subset.losses.shape == alone.losses.shape
        np.testing.assert_allclose(
            subset.traces["attention_moved"], alone.traces["attention_moved"], rtol=1e-12, atol=1e-12
        )


def test_a_diverged_run_is_recorded_and_the_others_are_unaffected():
    """SGD with a huge step size on the regression's squared loss blows up; the run is recorded as NaN from
    the first non-finite loss on, and the other row, batched with it, equals its run alone."""
    task = TASK_CASES["regression"]()
    calm = _config("sgd", "random")
    wild = dataclasses.replace(calm, attention_lr=1e100, output_lr=1e100)
    together = E.run_rows(task, [("joint", calm), ("joint", wild)], (0, 1))
    alone = E.run_rows(task, [("joint", calm)], (0, 1))
    np.testing.assert_allclose(together.losses[0], alone.losses[0], rtol=1e-12, atol=1e-12)
    assert np.all(np.isnan(together.losses[1, :, -1])) and not np.isfinite(together.metrics["test_loss"][1]).any()
    with pytest.raises(ValueError, match="optimiser"):
        E.run_rows(task, [("joint", calm), ("joint", _config("adam", "random"))], (0,))
