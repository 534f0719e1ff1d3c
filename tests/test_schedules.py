"""Population GD protocols (book Theorems thm-attention-only, thm-one-step, thm-three-phase)."""

import math

import numpy as np
import pytest

from lagtheory import Geometric
from lagtheory import schedules as S


def test_phase_one_closed_form():
    # one output step from 0: u = eta1 m/4 (-1, 1), m = E[1/n] for one-b positives (book eq. eq-phase1)
    g = Geometric(10.0)
    m = -0.1 * math.log(0.1) / 0.9
    run = S.run_schedule(S.three_phase(eta1=2.0, eta2=100.0, steps3=3, lr3=4.0), g)
    np.testing.assert_allclose(run.u[1], 2.0 * m / 4 * np.array([-1.0, 1.0]), atol=1e-12)
    assert run.t[1] == 0.0
    assert run.t[2] > 0 and np.all(run.t[2:] == run.t[2])  # theta frozen in phase 3
    assert run.phase_of_step == ["output", "attention", "output", "output", "output"]


def test_frozen_groups_do_not_move():
    g = Geometric(5.0)
    out = S.run_schedule(S.output_only(5, 1.0), g, theta0=(0.1, 0.4), u0=(-0.2, 0.3))
    assert np.all(out.theta == np.array([0.1, 0.4]))
    att = S.run_schedule(S.attention_only(5, 1.0), g, theta0=(0.1, 0.4), u0=(-0.2, 0.3))
    assert np.all(att.u == np.array([-0.2, 0.3]))
    assert np.any(att.theta[-1] != att.theta[0])


def test_attention_only_from_zero_never_moves():
    run = S.run_schedule(S.attention_only(10, 50.0), Geometric(5.0))
    assert np.all(run.theta == 0.0) and np.all(run.loss == run.loss[0])


def test_gradient_step_matches_population_gradient():
    from lagtheory import population

    g = Geometric(6.0)
    theta0, u0 = np.array([0.0, 0.5]), np.array([-0.3, 0.6])
    run = S.run_schedule(S.joint(1, 0.7), g, theta0=theta0, u0=u0)
    state = population(theta0, u0, g)
    np.testing.assert_allclose(run.theta[1], theta0 - 0.7 * state.grad_theta, atol=1e-15)
    np.testing.assert_allclose(run.u[1], u0 - 0.7 * state.grad_u, atol=1e-15)


def test_two_timescale_ratio():
    phases = S.two_timescale(10, 1.0, 0.1)
    assert phases[0].lr_attention == pytest.approx(0.1) and phases[0].lr_output == 1.0


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"group": "both", "steps": 1, "lr_output": 1.0}, "group must be"),
        ({"group": "output", "steps": -1, "lr_output": 1.0}, "steps must be"),
        ({"group": "output", "steps": 1, "lr_output": 0.0}, "lr_output must be > 0"),
        ({"group": "attention", "steps": 1, "lr_attention": -1.0}, "lr_attention must be"),
        ({"group": "joint", "steps": 1, "lr_output": 1.0, "lr_attention": float("nan")}, "lr_attention must be"),
    ],
)
def test_bad_phase(kwargs, match):
    with pytest.raises(ValueError, match=match):
        S.Phase(**kwargs)


def test_empty_schedule_rejected():
    with pytest.raises(ValueError, match="phases"):
        S.run_schedule([], Geometric(5.0))
