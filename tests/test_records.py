"""Tests of the study records (lagtheory.experiments.studies and .records): a record holds every seed's value
of every quantity for every schedule with the configuration, and a stored cell re-runs to the same values."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from lagtheory.experiments import records as RC
from lagtheory.experiments import studies as ST
from lagtheory.experiments.regression import RegressionSetting

SMALL = dataclasses.replace(
    ST.REGRESSION,
    cells=(
        ST.Cell(
            "small",
            RegressionSetting(train_min=2, train_max=6, test_sizes=(4, 12), test_size=6, test_seed=1, dim=3),
            dataclasses.replace(ST.REGRESSION.cells[0].training, steps=8, warm_steps=2, batch_size=4),
        ),
    ),
)
SCHEDULES = ("joint", "lag", "three-phase")


@pytest.fixture(scope="module")
def record():
    results = ST.run_cells(SMALL, SMALL.cells, SCHEDULES, (0, 1, 2))
    return RC.study_record(SMALL, results, SCHEDULES, (0, 1, 2), "test")


def test_record_holds_every_seed_and_the_configuration(record, tmp_path):
    path = tmp_path / "summary_small.json"
    RC.write_record(record, path)
    loaded = RC.load_record(path)
    assert loaded["seeds"] == [0, 1, 2] and loaded["schedules"] == list(SCHEDULES)
    assert set(loaded["versions"]) == {"lagtheory", "torch", "numpy", "scipy", "python"}
    cell = loaded["cells"]["small"]
    assert cell["configuration"]["training"]["steps"] == 8
    assert cell["configuration"]["setting"]["test_sizes"] == [4, 12]
    for schedule in SCHEDULES:
        assert len(cell["values"]["score"][schedule]) == 3
        assert np.array(cell["values"]["test_errors"][schedule]).shape == (3, 2)
        assert len(cell["curves"]["loss"][schedule]) == 8
    assert RC.per_seed(loaded, "small", "score", "lag").shape == (3,)


def test_a_stored_cell_reruns_to_its_values(record):
    configuration = record["cells"]["small"]["configuration"]
    fresh = ST.rerun(SMALL, configuration, ["lag"], [1])
    assert RC.mismatches(record, "small", fresh, ["lag"], [1], rtol=1e-10) == []
    # a changed value is found
    changed = json.loads(json.dumps(record))
    changed["cells"]["small"]["values"]["score"]["lag"][1] *= 1.001
    assert RC.mismatches(changed, "small", fresh, ["lag"], [1], rtol=1e-10) == ["score of lag"]


def test_first_below_and_first_reaching_by_hand():
    losses = np.array([[3.0, 2.0, 1.0, 0.5, 0.2, 0.1], [1.0] * 6])
    # window 2: averages 2.5, 1.5, 0.75, 0.35, 0.15 -> first below 0.5 at average index 3, i.e. step 4
    np.testing.assert_array_equal(ST.first_below(losses, 0.5, window=2), [4, -1])
    np.testing.assert_array_equal(ST.first_reaching(np.array([[0.0, 0.2, 0.6, 0.4], [0.0] * 4]), 0.5), [2, -1])


def test_bad_records_are_refused(record):
    with pytest.raises(ValueError, match="format"):
        RC.validate_record({"format": "other"}, "x")
    broken = json.loads(json.dumps(record))
    broken["cells"]["small"]["values"]["score"]["lag"] = [0.1]
    with pytest.raises(ValueError, match="one primary value per seed"):
        RC.validate_record(broken, "x")
    with pytest.raises(ValueError, match="name"):
        ST.study("nonsense")
