"""Tests of the study (lagtheory.experiments.exploratory.design, calibration, studies) and its records (lagtheory.experiments.exploratory.records): the
sweep holds the cells the study states, the calibration picks its rates by the stated rule, a record holds
every seed's value of every quantity for every schedule with the configuration, and a stored cell re-runs,
alone, to the same values."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from lagtheory.experiments.exploratory import calibration as CB
from lagtheory.experiments.exploratory import design as DS
from lagtheory.experiments.exploratory import entries as EN
from lagtheory.experiments.exploratory import records as RC
from lagtheory.experiments.exploratory import runner as RN
from lagtheory.experiments.exploratory import studies as ST
from lagtheory.experiments.tasks.sequences.regression import RegressionSetting

SMALL = dataclasses.replace(
    ST.REGRESSION,
    tasks=(
        DS.TaskDesign(
            "regression",
            RegressionSetting(train_min=2, train_max=6, test_sizes=(4, 12), test_size=6, test_seed=1, dim=3),
            steps=12,
            batch_size=4,
            description="small",
        ),
    ),
)
SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def record():
    return RN.run_study(SMALL, SEEDS, "test")


def test_the_sweep_holds_the_stated_cells():
    design = SMALL.tasks[0]
    cells = DS.study_cells(design, "sgd", {DS.main_level(s, r): 0.1 for s in DS.READOUT_SCALES for r in DS.RATIOS})
    sweeps = [cell.sweep for cell in cells]
    assert sweeps.count("main") == 25 and sweeps.count("attention_init") == 2 and sweeps.count("budget") == 4
    assert sweeps.count("accounting") == 1 and sweeps.count("base_rate") == 10
    # the base-rate row: every ratio at readout scale 0.3, its calibrated rate times and divided by sqrt(10)
    rates = {"scale=0.3 ratio=3": 0.2, "scale=0.3 ratio=10": 0.5}
    cells = DS.study_cells(
        design,
        "sgd",
        {DS.main_level(s, r): rates.get(DS.main_level(s, r), 0.1) for s in DS.READOUT_SCALES for r in DS.RATIOS},
    )
    row = {cell.level: cell.training for cell in cells if cell.sweep == "base_rate"}
    high = row["ratio=3 base*3.16"]
    assert math.isclose(high.attention_lr, 0.2 * math.sqrt(10) * math.sqrt(3)) and math.isclose(
        high.output_lr, 0.2 * math.sqrt(10) / math.sqrt(3)
    )
    low = row["ratio=10 base*0.316"]
    assert math.isclose(low.attention_lr, 0.5 / math.sqrt(10) * math.sqrt(10)) and low.output_scale == 0.3
    centre = next(cell for cell in cells if DS.is_centre(cell))
    assert centre.schedules == DS.COMPARED_SCHEDULES and centre.training.output_scale == 0.3
    # geometric-mean parametrisation: attention base sqrt(r), output base / sqrt(r)
    corner = next(cell for cell in cells if cell.level == "scale=3 ratio=10")
    assert math.isclose(corner.training.attention_lr, 0.1 * math.sqrt(10)) and math.isclose(
        corner.training.output_lr, 0.1 / math.sqrt(10)
    )
    assert corner.schedules == DS.MAIN_SCHEDULES
    budgets = sorted(cell.training.steps for cell in cells if cell.sweep == "budget")
    assert budgets == [3, 6, 24, 48]  # T = 12 times 1/4, 1/2, 2, 4
    assert all(cell.training.big_step == cell.training.attention_lr * cell.training.warm_steps for cell in cells)
    assert {cell.training.attention_init for cell in cells} == {"random", "zero", "preset"}


def test_capped_log_loss_and_final_training_loss_by_hand():
    np.testing.assert_allclose(
        DS.capped_log_loss([0.01, 3.0, np.nan], [1.0, 2.0, 2.0]), [-2.0, math.log10(2), math.log10(2)]
    )
    losses = np.array([[5.0] * 10 + [1.0, 3.0], [1.0, np.inf] + [0.5] * 10])
    # a tenth of 12 steps is 1 step: the last loss; a run with a non-finite loss is NaN
    np.testing.assert_array_equal(CB.final_training_loss(losses), [3.0, np.nan])


def test_calibration_follows_its_rule(record):
    for optimiser, calibration in record["calibration"]["regression"].items():
        means = np.array(calibration["mean_log10_final_training_loss"], dtype=float)  # (rates, cells), NaN: None
        diverged = np.array(calibration["diverged_runs"])
        assert means.shape == (len(CB.RATE_GRIDS[optimiser]), 25) and np.all(np.isnan(means) == (diverged > 0))
        for column, level in enumerate(calibration["levels"]):
            best = calibration["grid"][int(np.nanargmin(means[:, column]))]
            assert calibration["base_rates"][level] == best, (optimiser, level)
            cell = record["cells"][f"regression/{optimiser}/main/{level}"]["configuration"]["training"]
            scale, ratio = (float(part.split("=")[1]) for part in level.split())
            assert math.isclose(cell["attention_lr"] * cell["output_lr"], best**2)
            assert math.isclose(cell["attention_lr"] / cell["output_lr"], ratio) and cell["output_scale"] == scale


def test_record_holds_every_seed_and_the_configuration(record, tmp_path):
    path = tmp_path / "summary_small.json"
    RC.write_record(record, path)
    loaded = RC.load_record(path)
    assert loaded["seeds"] == list(SEEDS) and len(loaded["cells"]) == 2 * (25 + 2 + 4 + 1 + 10)
    assert set(loaded["versions"]) == {"lagtheory", "torch", "numpy", "scipy", "python"}
    centre = loaded["cells"][DS.centre_name("regression", "adam")]
    assert centre["configuration"]["setting"]["test_sizes"] == [4, 12]
    for schedule in DS.COMPARED_SCHEDULES:
        assert len(centre["values"]["log10_test_loss"][schedule]) == 3
        assert np.array(centre["values"]["test_errors"][schedule]).shape == (3, 2)
        assert len(centre["curves"]["loss"][schedule]) == 12
    test_loss = RC.per_seed(loaded, DS.centre_name("regression", "adam"), "test_loss", "lag")
    primary = RC.per_seed(loaded, DS.centre_name("regression", "adam"), "log10_test_loss", "lag")
    zero = 10 ** np.max(primary)
    assert np.all(primary <= np.log10(zero)) and np.all(np.isclose(primary, np.log10(np.minimum(test_loss, zero))))
    assert RC.cells_where(loaded, optimiser="sgd", sweep="budget") == [
        f"regression/sgd/budget/T*{factor:g}" for factor in DS.BUDGETS
    ]


def test_a_stored_cell_reruns_alone_to_its_values(record):
    name = "regression/sgd/budget/T*4"
    configuration = record["cells"][name]["configuration"]
    fresh = RN.rerun(SMALL, configuration, ["lag"], [1])
    assert RC.mismatches(record, name, ["lag"], [1], fresh, rtol=1e-10) == []
    changed = json.loads(json.dumps(record))
    changed["cells"][name]["values"]["log10_test_loss"]["lag"][1] *= 1.001
    assert RC.mismatches(changed, name, ["lag"], [1], fresh, rtol=1e-10) == ["log10_test_loss of lag"]


def test_reproduce_reruns_a_seeded_sample_and_finds_a_changed_value(record):
    """The chapters' reproduction check: the sample of records.reproduction_sample, each re-run alone and
    compared; a stored value changed by a relative 1e-3 is named for exactly the run that holds it."""
    found = RN.reproduce(SMALL, record, 7, cells=2, rtol=1e-10)
    assert [(r.cell, r.schedules, r.seeds) for r in found] == RC.reproduction_sample(record, 7, cells=2)
    assert all(r.different == [] for r in found)
    first = found[0]
    changed = json.loads(json.dumps(record))
    changed["cells"][first.cell]["values"]["log10_test_loss"][first.schedules[1]][first.seeds[0]] *= 1.001
    again = RN.reproduce(SMALL, changed, 7, cells=2, rtol=1e-10)
    assert [r.different for r in again] == [[f"log10_test_loss of {first.schedules[1]}"], []]


def test_failed_runs_are_compared_on_the_capped_metric_only(record):
    name = "regression/sgd/budget/T*4"
    fresh = RN.rerun(SMALL, record["cells"][name]["configuration"], ["lag"], [1])
    changed = json.loads(json.dumps(record))
    values = changed["cells"][name]["values"]
    # a finite run below the cap: a relative change of 1e-3 in its loss is a mismatch
    assert not RC.failed_runs(changed, name, "lag")[1]
    moved = {**fresh, "test_loss": np.asarray(fresh["test_loss"], dtype=np.float64) * 1.001}
    assert RC.mismatches(changed, name, ["lag"], [1], moved, rtol=1e-6) == ["test_loss of lag"]
    # a run that blew up (loss far above the cap, primary metric at the cap): its raw loss is not compared,
    # the capped metric still is
    cap = 0.5
    values["log10_test_loss"]["lag"][1] = cap
    values["test_loss"]["lag"][1] = 1e50
    assert RC.failed_runs(changed, name, "lag")[1]
    blown = {key: np.array(value, dtype=np.float64) if key == "test_loss" else value for key, value in fresh.items()}
    blown["test_loss"][0, 0] = 3e63
    blown["log10_test_loss"] = np.array([[cap]])
    assert RC.mismatches(changed, name, ["lag"], [1], blown, rtol=1e-6) == []
    blown["log10_test_loss"] = np.array([[cap - 1e-3]])
    assert RC.mismatches(changed, name, ["lag"], [1], blown, rtol=1e-6) == ["log10_test_loss of lag"]


def test_log_metric_near_zero_is_compared_absolutely(record):
    name = "regression/sgd/budget/T*4"
    fresh = RN.rerun(SMALL, record["cells"][name]["configuration"], ["lag"], [1])
    changed = json.loads(json.dumps(record))
    # log10 of a loss of 0.9991: a relative change of 2e-8 in the loss moves the log10 by about 1e-8,
    # a relative change of the log10 of 2.6e-5; within an absolute 1e-6
    changed["cells"][name]["values"]["log10_test_loss"]["lag"][1] = -3.97401e-4
    near = {**fresh, "log10_test_loss": np.array([[-3.97412e-4]])}
    assert "log10_test_loss of lag" not in RC.mismatches(changed, name, ["lag"], [1], near, rtol=1e-6)
    near["log10_test_loss"] = np.array([[-3.97412e-4 + 1e-5]])
    assert "log10_test_loss of lag" in RC.mismatches(changed, name, ["lag"], [1], near, rtol=1e-6)


def test_bad_records_are_refused(record):
    with pytest.raises(ValueError, match="format"):
        RC.validate_record({"format": "other"}, "x")
    broken = json.loads(json.dumps(record))
    broken["cells"][DS.centre_name("regression", "sgd")]["values"]["log10_test_loss"]["lag"] = [0.1]
    with pytest.raises(ValueError, match="one primary value per seed"):
        RC.validate_record(broken, "x")
    with pytest.raises(ValueError, match="name"):
        ST.study("nonsense")
    with pytest.raises(ValueError, match="schedules"):
        RN.rerun(SMALL, record["cells"]["regression/sgd/budget/T*4"]["configuration"], ["lead"], [0])


def test_a_setting_record_leaves_out_later_options_at_their_defaults():
    """The transformer setting's options added for the registered transformer study are left out of a cell's record form at their defaults
    (the first model, whose records lack them) and kept otherwise; the record reads back to the same setting."""
    from lagtheory.experiments.tasks.transformer.task import TransformerSetting

    first = TransformerSetting()
    record = EN.setting_record(first)
    assert not set(TransformerSetting.LATER_OPTIONS) & set(record)
    assert set(record) == {field.name for field in dataclasses.fields(first)} - set(TransformerSetting.LATER_OPTIONS)
    changed = TransformerSetting(scaling="log", initialisation="standard")
    record = EN.setting_record(changed)
    assert (record["scaling"], record["initialisation"]) == ("log", "standard")
    assert "previous_token" not in record and "compute_dtype" not in record
    for setting in (first, changed, TransformerSetting(previous_token=True, compute_dtype="float32")):
        assert RC.config_from_dict(TransformerSetting, EN.setting_record(setting)) == setting
    other = RegressionSetting(train_min=2, train_max=6, test_sizes=(4, 12), test_size=6, test_seed=1, dim=3)
    assert EN.setting_record(other) == RC.config_to_dict(other)  # a type without later options: all its fields


def test_comparisons_are_those_of_compare_and_follow_a_changed_record(record):
    from lagtheory.experiments.statistics.paired import compare

    def direct(rec, cell):
        a, b = (RC.per_seed(rec, cell, rec["primary"], s).astype(np.float64) for s in ("lag", "joint"))
        return compare(f"{cell}: lag vs joint", a, b, rec["higher_is_better"], rec["margin"], binary=rec["binary"])

    cells = [
        c for c, content in record["cells"].items() if {"lag", "joint"} <= set(content["configuration"]["schedules"])
    ]
    assert cells
    assert RC.comparisons(record, "lag") == [direct(record, c) for c in cells]
    assert RC.comparisons(record, "lag") == RC.comparisons(record, "lag")  # asked twice, the same answer
    changed = json.loads(json.dumps(record))
    values = changed["cells"][cells[0]]["values"][changed["primary"]]["lag"]
    values[0] = values[0] + 1.0 if values[0] is not None else 1.0
    again = RC.comparisons(changed, "lag")
    assert again[0] == direct(changed, cells[0]) and again[0] != RC.comparisons(record, "lag")[0]
