"""The calibration rule (lagtheory.experiments.exploratory.calibration.calibrate) on stubbed training losses: the chosen rate
is the argmin of the mean log10 final loss among rates with no diverged run, and a cell that diverges at every
rate is refused, or, with keep_undefined (the confirmatory validation stage), gets no rate."""

from types import SimpleNamespace

import numpy as np
import pytest

from lagtheory.experiments.exploratory import calibration as C
from lagtheory.experiments.exploratory.studies import REGRESSION

LEVELS = [(0.5, 2.0), (10.0, 30.0)]


def stub(monkeypatch, diverging_level: int | None):
    """Training losses: run r of rate k and level j ends at loss 10**-(k + 1) (the largest rate is best) unless
    the level diverges, which puts a NaN in every run of that level at every rate."""
    grid = C.RATE_GRIDS["sgd"]

    def run_rows(task, rows, seeds, progress=None, evaluate=False, device="cpu"):
        losses = np.empty((len(rows), len(seeds), 20))
        for row in range(len(rows)):
            rate, level = divmod(row // 2, len(LEVELS))
            losses[row] = 10.0 ** -(rate + 1)
            if level == diverging_level:
                losses[row, 0, 5] = np.nan
        return SimpleNamespace(losses=losses)

    monkeypatch.setattr(C, "run_rows", run_rows)
    return grid


def test_the_rule_and_the_undefined_cell(monkeypatch):
    design = REGRESSION.tasks[0]
    grid = stub(monkeypatch, None)
    found = C.calibrate(REGRESSION, design, "sgd", task=object(), levels=LEVELS)
    assert list(found["base_rates"].values()) == [grid[-1], grid[-1]]
    stub(monkeypatch, 1)
    with pytest.raises(ValueError, match="every rate of the grid diverged"):
        C.calibrate(REGRESSION, design, "sgd", task=object(), levels=LEVELS)
    kept = C.calibrate(REGRESSION, design, "sgd", task=object(), levels=LEVELS, keep_undefined=True)
    assert list(kept["base_rates"].values()) == [grid[-1], None]
    assert all(row[1] is None for row in kept["mean_log10_final_training_loss"])
