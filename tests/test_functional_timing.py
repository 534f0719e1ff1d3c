"""The functional timing (lagtheory.experiments.exploratory.functional_timing) on constructed runs with known
answers: the calibrated loss against a brute-force grid of temperatures and scipy's bounded minimiser; a group
that jumps at step k has knockout and attributed half-time k; a group that never moves has none; the Shapley
shares of every interval sum to its change of score; the engine's grouping of the one-layer model.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.optimize
import torch

from lagtheory.experiments.exploratory import functional_timing as F
from lagtheory.experiments.exploratory.studies import LANGUAGE_SETTING
from lagtheory.experiments.tasks.languages.catalogue import TASKS
from lagtheory.experiments.tasks.languages.task import LanguageRuns

RNG = np.random.default_rng(38)


def _brute(m: np.ndarray) -> float:
    """min over grids of c >= 0 of mean log(1 + exp(-c m)): 0 and 4,001 values from 1e-4 to 1e4 (geometric), then
    4,001 values between the best one's neighbours. The loss is convex in c (log(1 + e^x) is convex, -c m linear), so
    its minimum over c >= 0 lies between the neighbours of the coarse grid's best value; the two grids reach it as
    closely as one geometric grid of 400,001 values did, at a fiftieth of the evaluations."""

    def loss(c: np.ndarray) -> np.ndarray:
        return np.logaddexp(0.0, -c[:, None] * m[None, :]).mean(axis=1)

    coarse = np.concatenate([[0.0], np.geomspace(1e-4, 1e4, 4_001)])
    at = int(np.argmin(loss(coarse)))
    fine = np.linspace(coarse[max(at - 1, 0)], coarse[min(at + 1, coarse.size - 1)], 4_001)
    return float(min(loss(coarse).min(), loss(fine).min()))


@pytest.mark.parametrize("shift", [0.3, 1.0, 2.0])
def test_the_calibrated_loss_is_the_minimum_over_temperatures(shift):
    m = RNG.normal(shift, 1.0, 200)
    found = float(F.calibrated_loss(m))
    brute = _brute(m)
    assert found <= brute + 1e-12 and brute - found < 1e-7
    bounded = scipy.optimize.minimize_scalar(
        lambda c: np.logaddexp(0.0, -c * m).mean(), bounds=(0.0, 1e3), method="bounded", options={"xatol": 1e-12}
    )
    assert abs(found - bounded.fun) < 1e-10
    assert found < np.logaddexp(0.0, -m).mean() or shift == 1.0  # better than temperature 1 unless it is the best


def test_the_calibrated_loss_at_the_edges():
    assert F.calibrated_loss(np.array([0.5, 2.0, 3.0])) == 0.0  # separable: c -> infinity
    assert F.calibrated_loss(np.array([0.0, 2.0, 0.0, 1.0])) == pytest.approx(np.log(2) / 2, abs=1e-15)
    assert F.calibrated_loss(np.array([-1.0, 0.5])) == pytest.approx(np.log(2), abs=1e-15)  # mean <= 0: c = 0
    assert F.calibrated_loss(np.zeros(3)) == pytest.approx(np.log(2), abs=1e-15)
    assert F.calibrated_loss(np.ones((2, 3, 4))).shape == (2, 3)
    for bad in (np.array([np.nan, 1.0]), np.zeros((2, 0)), np.array(1.0)):
        with pytest.raises(ValueError, match="margins"):
            F.calibrated_loss(bad)


def test_the_calibrated_loss_ignores_the_scale():
    m = RNG.normal(0.5, 1.0, 100)
    assert abs(F.calibrated_loss(m) - F.calibrated_loss(37.0 * m)) < 1e-12
    assert F.calibrated_loss(m) <= np.log(2)


def _jump_run(a_at: int, b_at: int | None, steps: int = 10):
    """Two groups a, b (seeds 3) jumping from 0 to their final value at the given steps (b never moves when
    ``b_at`` is None); margins m = a p + b q - 0.4 on words with p, q in (0, 1)."""
    times = np.arange(steps + 1)
    a = np.where(times >= a_at, 1.0, 0.0)
    b = np.full(steps + 1, 0.7) if b_at is None else np.where(times >= b_at, 1.0, 0.0)
    snapshots = {
        "a": torch.tensor(np.tile(a, (3, 1))[..., None] * np.array([1.0, 1.5, 2.0])[:, None, None]),
        "b": torch.tensor(np.tile(b, (3, 1))[..., None]),
    }
    p, q = torch.tensor(RNG.random(64)), torch.tensor(RNG.random(64))

    def margins_of(params):
        return params["a"] * p + params["b"] * q - 0.4

    return snapshots, {"A": ("a",), "B": ("b",)}, margins_of


def test_a_group_that_learns_first_has_the_earlier_half_time():
    found = F.timing(*_jump_run(2, 7))
    for reading in ("knockout", "attribution"):
        for score in F.SCORES:
            half = found[reading][score]["half"]
            assert (half[0] == 2).all() and (half[1] == 7).all(), (reading, score)
    found = F.timing(*_jump_run(6, 1))
    assert (found["knockout"]["calibrated"]["half"] == np.array([[6] * 3, [1] * 3])).all()


def test_a_group_that_never_moves_has_no_half_time():
    found = F.timing(*_jump_run(4, None))
    for reading in ("knockout", "attribution"):
        for score in F.SCORES:
            assert np.isnan(found[reading][score]["progress"][1]).all()
            assert np.isnan(found[reading][score]["half"][1]).all() and (found[reading][score]["half"][0] == 4).all()


@pytest.mark.parametrize("groups", [2, 3])
def test_the_shares_of_each_interval_sum_to_its_change(groups):
    names = [f"w{i}" for i in range(groups)]
    path = np.cumsum(RNG.normal(0.1, 0.3, (4, 12, groups, 3)), axis=1)
    snapshots = {name: torch.tensor(path[:, :, i]) for i, name in enumerate(names)}
    x = torch.tensor(RNG.normal(size=(groups, 3, 50)))
    y = torch.tensor(RNG.choice([-1.0, 1.0], 50))

    def margins_of(params):
        pooled = sum(torch.tanh(params[name] @ x[i]) for i, name in enumerate(names))
        return y * (pooled + params[names[0]][..., :1] * pooled**2)

    grouping = {f"G{i}": (name,) for i, name in enumerate(names)}
    shares = F.path_attribution(snapshots, grouping, margins_of)
    whole = F.scores(margins_of(snapshots))
    for score in F.SCORES:
        change = np.diff(whole[score], axis=-1)
        assert np.abs(shares[score].sum(axis=0) - change).max() < 1e-12
    renamed = F.path_attribution(snapshots, dict(reversed(list(grouping.items()))), margins_of)
    for score in F.SCORES:  # symmetric: the order in which the groups are listed does not matter
        assert np.abs(renamed[score][::-1] - shares[score]).max() < 1e-12


def test_knockout_resets_only_the_group():
    snapshots, grouping, margins_of = _jump_run(2, 7)
    seen = []

    def recording(params):
        seen.append({name: value.clone() for name, value in params.items()})
        return margins_of(params)

    F.knockout_scores(snapshots, grouping, recording)
    assert torch.equal(seen[0]["a"], snapshots["a"]) and torch.equal(
        seen[0]["b"], snapshots["b"][:, -1:].expand(3, 11, 1)
    )
    assert torch.equal(seen[1]["b"], snapshots["b"]) and torch.equal(
        seen[1]["a"], snapshots["a"][:, -1:].expand(3, 11, 1)
    )


def test_the_grouping_is_checked_and_the_engine_s_is_the_task_s():
    task = LanguageRuns(TASKS["FIRST_LEARNED"], LANGUAGE_SETTING)
    grouping = F.engine_grouping(task)
    assert grouping == {"output": ("u",), "attention": ("theta", "s")}
    snapshots, _, margins_of = _jump_run(2, 7)
    for bad in ({"A": ("a",)}, {"A": ("a",), "B": ("b", "a")}, {"A": ("a",), "B": ("c",)}):
        with pytest.raises(ValueError, match="grouping"):
            F.knockout_scores(snapshots, bad, margins_of)


def test_the_one_layer_timing_runs_and_scores_the_final_model():
    from lagtheory.experiments.tasks.languages.task import LANGUAGE_TRAINING

    task = LanguageRuns(TASKS["FIRST"], LANGUAGE_SETTING)
    config = dataclasses.replace(LANGUAGE_TRAINING, steps=20, warm_steps=5)
    found = F.one_layer_run(task, config, [700_998, 700_999])
    knocked = found["knockout"]["raw"]["scores"]
    assert knocked.shape == (2, 2, 21) and np.allclose(knocked[0, :, -1], knocked[1, :, -1], rtol=0, atol=0)
    shares = found["attribution"]["raw"]["shares"]
    assert np.abs(shares.sum(axis=0).sum(axis=-1) - (knocked[0, :, -1] - _initial_raw(task, config))).max() < 1e-12


def _initial_raw(task, config):
    """The raw loss of the initial models on the evaluation words, computed apart from the timing."""
    from lagtheory.experiments.engine.cells import initial_parameters

    params = initial_parameters(task, config, [700_998, 700_999])
    counts, prefix, labels = task.training_stream([F.EVALUATION_SEED], 1, F.EVALUATION_WORDS).batch(0)
    outputs = task.outputs(params, counts[0], prefix[0])
    return np.logaddexp(0.0, -(labels[0] * outputs).numpy()).mean(axis=-1)
