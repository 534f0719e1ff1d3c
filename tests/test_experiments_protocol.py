"""Tests of the shared training protocol (lagtheory.experiments.protocol).

Expected values are derived by hand: on the separable quadratic loss
L = (x - x*)^2 / 2 (summed over coordinates) one SGD step of size lr maps x to
x - lr (x - x*), so k steps give x* + (1 - lr)^k (x0 - x*), and a frozen
group keeps its initial value exactly.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from lagtheory.experiments.protocol import (
    SCHEDULE_NAMES,
    TrainPhase,
    freeze_summary,
    lag_verdict,
    load_summary,
    make_schedule,
    summary_entry,
    train,
    validate_summary,
)

TOTAL, LR, WARM, BIG = 12, 0.25, 4, 2.0
ATTENTION_TARGET, OUTPUT_TARGET = 1.0, -3.0


def _quadratic_problem():
    """Two groups (attention: 2 coordinates, output: 3) with the loss (x - x*)^2 / 2 and a snapshot per step."""
    attention = torch.nn.Parameter(torch.tensor([0.5, -1.0], dtype=torch.float64))
    output = torch.nn.Parameter(torch.tensor([2.0, 0.0, 1.0], dtype=torch.float64))
    snapshots: list[tuple[torch.Tensor, torch.Tensor]] = []

    def loss_fn(step: int) -> torch.Tensor:
        assert step == len(snapshots)
        snapshots.append((attention.detach().clone(), output.detach().clone()))
        return 0.5 * ((attention - ATTENTION_TARGET) ** 2).sum() + 0.5 * ((output - OUTPUT_TARGET) ** 2).sum()

    return attention, output, snapshots, loss_fn


def _expected(x0: float, target: float, lr: float, steps: int) -> float:
    """x after ``steps`` SGD steps of size lr on (x - target)^2 / 2, by the closed form."""
    return target + (1 - lr) ** steps * (x0 - target)


def test_schedule_names_are_the_protocol():
    assert SCHEDULE_NAMES == (
        "joint",
        "lag",
        "lead",
        "one-step",
        "two-timescale-0.1",
        "two-timescale-0.3",
        "two-timescale-3",
    )


@pytest.mark.parametrize("name", SCHEDULE_NAMES)
def test_every_schedule_has_the_same_total_steps(name):
    phases = make_schedule(name, TOTAL, LR, WARM, BIG)
    assert sum(phase.steps for phase in phases) == TOTAL
    attention, output, snapshots, loss_fn = _quadratic_problem()
    losses = train([attention], [output], phases, loss_fn)
    assert losses.shape == (TOTAL,) and len(snapshots) == TOTAL


def test_phase_step_sizes_follow_the_definitions():
    expected = {
        "joint": [(TOTAL, LR, LR)],
        "lag": [(WARM, 0.0, LR), (TOTAL - WARM, LR, LR)],
        "lead": [(WARM, LR, 0.0), (TOTAL - WARM, LR, LR)],
        "one-step": [(1, BIG, 0.0), (TOTAL - 1, 0.0, LR)],
        "two-timescale-0.1": [(TOTAL, 0.1 * LR, LR)],
        "two-timescale-0.3": [(TOTAL, 0.3 * LR, LR)],
        "two-timescale-3": [(TOTAL, 3 * LR, LR)],
    }
    for name, rows in expected.items():
        phases = make_schedule(name, TOTAL, LR, WARM, BIG)
        got = [(p.steps, p.attention_lr, p.output_lr) for p in phases]
        assert len(got) == len(rows), name
        for (steps, a_lr, o_lr), (e_steps, e_a, e_o) in zip(got, rows, strict=False):
            assert steps == e_steps and math.isclose(a_lr, e_a) and math.isclose(o_lr, e_o), name


def test_lag_leaves_attention_untouched_for_warm_steps():
    attention, output, snapshots, loss_fn = _quadratic_problem()
    initial_attention = attention.detach().clone()
    train([attention], [output], make_schedule("lag", TOTAL, LR, WARM, BIG), loss_fn)
    for step in range(WARM + 1):  # the snapshot at step WARM is the point after WARM output-only steps
        assert torch.equal(snapshots[step][0], initial_attention), step
    assert not torch.equal(snapshots[WARM + 1][0], initial_attention)
    # the output group moved by the closed form throughout, the attention for TOTAL - WARM steps only
    assert np.allclose(output.detach().numpy(), [_expected(x, OUTPUT_TARGET, LR, TOTAL) for x in (2.0, 0.0, 1.0)])
    assert np.allclose(
        attention.detach().numpy(), [_expected(x, ATTENTION_TARGET, LR, TOTAL - WARM) for x in (0.5, -1.0)]
    )


def test_lead_freezes_the_output_at_its_initial_value():
    attention, output, snapshots, loss_fn = _quadratic_problem()
    initial_output = output.detach().clone()
    train([attention], [output], make_schedule("lead", TOTAL, LR, WARM, BIG), loss_fn)
    for step in range(WARM + 1):
        assert torch.equal(snapshots[step][1], initial_output), step
    assert np.allclose(
        output.detach().numpy(), [_expected(x, OUTPUT_TARGET, LR, TOTAL - WARM) for x in (2.0, 0.0, 1.0)]
    )


def test_one_step_moves_attention_once_by_the_big_step():
    attention, output, snapshots, loss_fn = _quadratic_problem()
    train([attention], [output], make_schedule("one-step", TOTAL, LR, WARM, BIG), loss_fn)
    after_big_step = [x - BIG * (x - ATTENTION_TARGET) for x in (0.5, -1.0)]  # = [1.5, 3.0]
    assert np.allclose(after_big_step, [1.5, 3.0])
    for step in range(1, TOTAL):
        assert torch.equal(snapshots[step][0], snapshots[1][0])
    assert np.allclose(attention.detach().numpy(), after_big_step)
    assert torch.equal(snapshots[1][1], snapshots[0][1])  # output frozen during the big step
    assert np.allclose(output.detach().numpy(), [_expected(x, OUTPUT_TARGET, LR, TOTAL - 1) for x in (2.0, 0.0, 1.0)])


def test_two_timescale_uses_the_ratio_on_attention():
    attention, output, _, loss_fn = _quadratic_problem()
    train([attention], [output], make_schedule("two-timescale-0.3", TOTAL, LR, WARM, BIG), loss_fn)
    assert np.allclose(
        attention.detach().numpy(), [_expected(x, ATTENTION_TARGET, 0.3 * LR, TOTAL) for x in (0.5, -1.0)]
    )
    assert np.allclose(output.detach().numpy(), [_expected(x, OUTPUT_TARGET, LR, TOTAL) for x in (2.0, 0.0, 1.0)])


def test_recorded_losses_are_the_losses_before_each_step():
    attention, output, _, loss_fn = _quadratic_problem()
    losses = train([attention], [output], make_schedule("joint", TOTAL, LR, WARM, BIG), loss_fn)
    # joint: every coordinate's residual shrinks by (1 - lr) per step, so the loss by (1 - lr)^2
    initial = 0.5 * ((0.5 - 1) ** 2 + (-1 - 1) ** 2 + (2 + 3) ** 2 + (0 + 3) ** 2 + (1 + 3) ** 2)
    assert np.allclose(losses, initial * (1 - LR) ** (2 * np.arange(TOTAL)))


def test_unused_parameter_gets_zero_gradient():
    attention = torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    unused = torch.nn.Parameter(torch.tensor([7.0], dtype=torch.float64))
    output = torch.nn.Parameter(torch.tensor([0.0], dtype=torch.float64))
    train([attention, unused], [output], [TrainPhase(3, 0.5, 0.5)], lambda step: ((output - 1) ** 2).sum())
    assert unused.item() == 7.0 and attention.item() == 1.0


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"name": "lagged"}, "name"),
        ({"name": "two-timescale-0.5"}, "name"),
        ({"total_steps": 1}, "total_steps"),
        ({"lr": 0.0}, "lr"),
        ({"lr": -1.0}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"warm_steps": 0}, "warm_steps"),
        ({"warm_steps": TOTAL}, "warm_steps"),
        ({"big_step": 0.0}, "big_step"),
        ({"big_step": float("inf")}, "big_step"),
    ],
)
def test_bad_schedule_arguments_raise_value_error_naming_them(kwargs, argument):
    arguments = {"name": "joint", "total_steps": TOTAL, "lr": LR, "warm_steps": WARM, "big_step": BIG} | kwargs
    with pytest.raises(ValueError, match=argument):
        make_schedule(**arguments)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"name": 3}, "name"),
        ({"total_steps": 12.0}, "total_steps"),
        ({"lr": "0.1"}, "lr"),
        ({"warm_steps": True}, "warm_steps"),
    ],
)
def test_wrong_types_raise_type_error_naming_them(kwargs, argument):
    arguments = {"name": "joint", "total_steps": TOTAL, "lr": LR, "warm_steps": WARM, "big_step": BIG} | kwargs
    with pytest.raises(TypeError, match=argument):
        make_schedule(**arguments)


@pytest.mark.parametrize(
    ("args", "argument"),
    [
        ((0, 0.1, 0.1), "steps"),
        ((3, -0.1, 0.1), "attention_lr"),
        ((3, 0.1, float("nan")), "output_lr"),
        ((3, 0.0, 0.0), "attention_lr"),
    ],
)
def test_bad_phases_raise_value_error_naming_the_argument(args, argument):
    with pytest.raises(ValueError, match=argument):
        TrainPhase(*args)


def test_train_rejects_bad_input():
    attention, output, _, loss_fn = _quadratic_problem()
    phases = [TrainPhase(2, 0.1, 0.1)]
    with pytest.raises(ValueError, match="disjoint"):
        train([attention], [output, attention], phases, loss_fn)
    with pytest.raises(ValueError, match="attention_params"):
        train([], [output], phases, loss_fn)
    with pytest.raises(ValueError, match="phases"):
        train([attention], [output], [], loss_fn)
    with pytest.raises(ValueError, match="non-finite loss"):
        train([attention], [output], phases, lambda step: attention.sum() * float("nan"))
    with pytest.raises(ValueError, match="scalar"):
        train([attention], [output], phases, lambda step: attention * 1.0)


# -- summary files --------------------------------------------------------------


def test_summary_entry_by_hand():
    # mean of (0.5, 1.0) is 0.75; sample standard deviation sqrt(((0.25)^2 * 2) / 1) = 0.35355... -> 0.354
    assert summary_entry([0.5, 1.0]) == {"mean": 0.75, "std": 0.354, "seeds": 2}
    assert summary_entry([2.0]) == {"mean": 2.0, "std": 0.0, "seeds": 1}
    assert summary_entry([-0.0001, 0.0001]) == {"mean": 0.0, "std": 0.0, "seeds": 2}
    assert str(summary_entry([-0.0004])["mean"]) == "0.0"  # no "-0.0" in the JSON text
    with pytest.raises(ValueError, match="values"):
        summary_entry([])
    with pytest.raises(ValueError, match="values"):
        summary_entry([1.0, float("nan")])


def _summary(mean: float) -> dict:
    return {
        "task": "toy",
        "metric": "m",
        "higher_is_better": True,
        "schedules": {"joint": {"mean": mean, "std": 0.0, "seeds": 5}},
    }


def test_freeze_summary_writes_once_then_checks(tmp_path):
    path = tmp_path / "summary_toy.json"
    freeze_summary(_summary(0.5), path)
    assert json.loads(path.read_text()) == _summary(0.5)
    freeze_summary(_summary(0.5), path)  # same numbers: passes
    with pytest.raises(AssertionError, match=r"summary_toy\.json"):
        freeze_summary(_summary(0.501), path)
    assert load_summary(path) == _summary(0.5)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda s: s.pop("metric"), "metric"),
        (lambda s: s.update(higher_is_better=1), "higher_is_better"),
        (lambda s: s["schedules"]["joint"].pop("std"), "mean, std, seeds"),
        (lambda s: s["schedules"]["joint"].update(seeds=0), "seeds"),
        (lambda s: s["schedules"]["joint"].update(std=-1.0), "std"),
        (lambda s: s.update(schedules={}), "schedules"),
    ],
)
def test_validate_summary_names_the_bad_field(change, field):
    summary = _summary(0.5)
    change(summary)
    with pytest.raises(ValueError, match=field):
        validate_summary(summary, "toy")


def test_lag_verdict_rule():
    def entry(mean, std):
        return {"mean": mean, "std": std, "seeds": 5}

    # gain 0.2 against spread max(0.1, 0.05) = 0.1: helped; reversed: hurt; gain 0.05 < 0.1: no difference
    assert lag_verdict(entry(0.9, 0.1), entry(0.7, 0.05), True) == "helped"
    assert lag_verdict(entry(0.7, 0.1), entry(0.9, 0.05), True) == "hurt"
    assert lag_verdict(entry(0.75, 0.1), entry(0.7, 0.05), True) == "no measurable difference"
    # lower is better: a smaller lag mean helps
    assert lag_verdict(entry(0.7, 0.05), entry(0.9, 0.1), False) == "helped"
    # zero spread: the resolution 0.001 decides; 0.002 apart helps, equal means do not
    assert lag_verdict(entry(1.002, 0.0), entry(1.0, 0.0), True) == "helped"
    assert lag_verdict(entry(1.0, 0.0), entry(1.0, 0.0), True) == "no measurable difference"
    assert lag_verdict(entry(1.0005, 0.0), entry(1.0, 0.0), True) == "no measurable difference"
    with pytest.raises(ValueError, match="lag"):
        lag_verdict({"mean": 1.0}, entry(1.0, 0.0), True)
