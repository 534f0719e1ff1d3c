"""Schedules (lagtheory.schedules) and their population GD runs (lagtheory.population_gd);
book Theorems thm-attention-only, thm-one-step, thm-three-phase."""

import math

import numpy as np
import pytest

from lagtheory import Data, Geometric
from lagtheory import schedules as S
from lagtheory.population_gd import run_schedule


def test_phase_one_closed_form():
    # one output step from 0: u = eta1 m/4 (-1, 1), m = E[1/n] for one-b positives (book eq. eq-phase1)
    g = Geometric(10.0)
    m = -0.1 * math.log(0.1) / 0.9
    run = run_schedule(S.three_phase(eta1=2.0, eta2=100.0, steps3=3, lr3=4.0), Data(g))
    np.testing.assert_allclose(run.u[1], 2.0 * m / 4 * np.array([-1.0, 1.0]), atol=1e-12)
    assert run.t[1] == 0.0
    assert run.t[2] > 0 and np.all(run.t[2:] == run.t[2])  # theta frozen in phase 3
    assert run.phase_of_step == ["output", "attention", "output", "output", "output"]


def test_frozen_groups_do_not_move():
    g = Geometric(5.0)
    out = run_schedule(S.output_only(5, 1.0), Data(g), theta0=(0.1, 0.4), u0=(-0.2, 0.3))
    assert np.all(out.theta == np.array([0.1, 0.4]))
    att = run_schedule(S.attention_only(5, 1.0), Data(g), theta0=(0.1, 0.4), u0=(-0.2, 0.3))
    assert np.all(att.u == np.array([-0.2, 0.3]))
    assert np.any(att.theta[-1] != att.theta[0])


def test_attention_only_from_zero_never_moves():
    run = run_schedule(S.attention_only(10, 50.0), Data(Geometric(5.0)))
    assert np.all(run.theta == 0.0) and np.all(run.loss == run.loss[0])


def test_gradient_step_matches_population_gradient():
    from lagtheory import population

    g = Geometric(6.0)
    theta0, u0 = np.array([0.0, 0.5]), np.array([-0.3, 0.6])
    run = run_schedule(S.joint(1, 0.7), Data(g), theta0=theta0, u0=u0)
    state = population(theta0, u0, Data(g))
    np.testing.assert_allclose(run.theta[1], theta0 - 0.7 * state.grad_theta, atol=1e-15)
    np.testing.assert_allclose(run.u[1], u0 - 0.7 * state.grad_u, atol=1e-15)


def test_two_timescale_ratio():
    phases = S.two_timescale(10, 1.0, 0.1)
    assert phases[0].attention_lr == pytest.approx(0.1) and phases[0].output_lr == 1.0
    assert phases[0].group == "joint"


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"steps": -1, "attention_lr": 0.0, "output_lr": 1.0}, ValueError, "steps must be"),
        ({"steps": 1.5, "attention_lr": 0.0, "output_lr": 1.0}, TypeError, "steps must be"),
        ({"steps": 1, "attention_lr": 0.0, "output_lr": 0.0}, ValueError, "must not both be 0"),
        ({"steps": 1, "attention_lr": -1.0, "output_lr": 1.0}, ValueError, "attention_lr must be"),
        ({"steps": 1, "attention_lr": 1.0, "output_lr": float("nan")}, ValueError, "output_lr must be"),
        ({"steps": 1, "attention_lr": "1", "output_lr": 1.0}, TypeError, "attention_lr must be"),
    ],
)
def test_bad_phase(kwargs, error, match):
    with pytest.raises(error, match=match):
        S.Phase(**kwargs)


SETTINGS = S.ScheduleSettings(
    steps=12, attention_lr=0.3, output_lr=0.25, warm_steps=4, big_step=2.0, first_output_step=0.7
)


@pytest.mark.parametrize("accounting", S.ACCOUNTINGS)
def test_named_schedules_follow_their_definitions(accounting):
    """Each named schedule's phases, written out by hand from the module docstring."""
    settings = S.ScheduleSettings(**{**SETTINGS.__dict__, "accounting": accounting})
    total = accounting == "total"
    T, W, a, o = 12, 4, 0.3, 0.25
    expected = {
        "joint": [(T, a, o)],
        "lag": [(W, 0.0, o), (T - W if total else T, a, o)],
        "lead": [(W, a, 0.0), (T - W if total else T, a, o)],
        "one-step": [(1, 2.0, 0.0), (T - 1 if total else T, 0.0, o)],
        "three-phase": [(1, 0.0, 0.7), (1, 2.0, 0.0), (T - 2 if total else T, 0.0, o)],
        "two-timescale-0.1": [(T, 0.1 * a, o)],
        "two-timescale-0.3": [(T, 0.3 * a, o)],
        "two-timescale-3": [(T, 3 * a, o)],
        "output-only": [(T, 0.0, o)],
        "attention-only": [(T, a, 0.0)],
    }
    for name, rows in expected.items():
        got = [(p.steps, p.attention_lr, p.output_lr) for p in S.make_schedule(name, settings)]
        assert len(got) == len(rows), name
        for (steps, att, out), (e_steps, e_att, e_out) in zip(got, rows, strict=True):
            assert steps == e_steps and math.isclose(att, e_att) and math.isclose(out, e_out), name
        if total:
            assert sum(p.steps for p in S.make_schedule(name, settings)) == T, name


def test_three_phase_by_name_equals_the_theorem_schedule():
    assert S.make_schedule("three-phase", SETTINGS) == S.three_phase(0.7, 2.0, 10, 0.25)
    assert S.make_schedule("one-step", SETTINGS) == S.one_step(2.0, 11, 0.25)


def test_step_plan_runs_schedules_in_lock_step():
    plan = S.step_plan([S.joint(2, 1.0), S.three_phase(1.0, 2.0, 2, 1.0)])
    assert len(plan) == 4
    assert [row[0] is None for row in plan] == [False, False, True, True]
    assert [row[1].group for row in plan] == ["output", "attention", "output", "output"]


@pytest.mark.parametrize(
    "name,error",
    [("two-timescale-0", ValueError), ("two-timescale-x", ValueError), ("slow", ValueError), (3, TypeError)],
)
def test_bad_schedule_names(name, error):
    with pytest.raises(error, match="name"):
        S.make_schedule(name, SETTINGS)


def test_bad_settings():
    with pytest.raises(ValueError, match="warm_steps"):
        S.ScheduleSettings(steps=4, attention_lr=1.0, output_lr=1.0, warm_steps=4, big_step=1.0)
    with pytest.raises(ValueError, match="accounting"):
        S.ScheduleSettings(steps=4, attention_lr=1.0, output_lr=1.0, warm_steps=1, big_step=1.0, accounting="some")


def test_empty_schedule_rejected():
    with pytest.raises(ValueError, match="phases"):
        run_schedule([], Data(Geometric(5.0)))


def verdict_table_rows(notebook: dict) -> list[str]:
    """The schedule names of the verdict chapter's stored table of the theory's schedules: the rows under the
    header line ``schedule ...`` of a code cell's printed output."""
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        text = "".join("".join(out.get("text", "")) for out in cell.get("outputs", []) if out.get("name") == "stdout")
        lines = text.splitlines()
        headers = [k for k, line in enumerate(lines) if line.startswith("schedule ")]
        if headers:
            return [line.split()[0] for line in lines[headers[0] + 1 :] if line.strip()]
    raise ValueError("no table of schedules in the notebook")


def test_the_verdict_table_lists_its_fixed_schedules_and_each_builds():
    """The verdict history page's table has its own fixed list, not the catalogue (a schedule added to
    AVAILABLE_SCHEDULES does not enter it): its stored rows are exactly VERDICT_SCHEDULES, in order."""
    import json
    from pathlib import Path

    notebook = json.loads((Path(__file__).resolve().parents[1] / "book" / "verdict_history.ipynb").read_text())
    assert verdict_table_rows(notebook) == list(S.VERDICT_SCHEDULES)
    settings = S.ScheduleSettings(steps=4, attention_lr=1.0, output_lr=1.0, warm_steps=1, big_step=1.0)
    assert all(S.make_schedule(name, settings) for name in S.VERDICT_SCHEDULES)
    planted = {
        "cells": [
            {
                "cell_type": "code",
                "source": ["print(table)\n"],
                "outputs": [{"name": "stdout", "text": ["schedule  final t\n", "joint 1\n", "new-schedule 2\n"]}],
            }
        ]
    }
    assert verdict_table_rows(planted) == ["joint", "new-schedule"] != list(S.VERDICT_SCHEDULES)
