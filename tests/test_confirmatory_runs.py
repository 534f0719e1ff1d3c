"""The confirmatory study's runner (lagtheory.experiments.confirmatory: design, runs, tuning, stages, and the
command lagtheory.experiments.run): the registered cells and runs, the per-run outcomes by hand, the
best-vs-best rule on hand-made runs, and at a tiny size (one task, two seeds, eight steps) every stage through
the command on a 2-worker cluster: units equal to the serial computation, a run equal to the same
configuration trained alone, resume, and the registration hash carried and enforced."""

import dataclasses
import json
import math

import numpy as np
import pytest

from lagtheory.experiments import run
from lagtheory.experiments.confirmatory import analysis as CA
from lagtheory.experiments.confirmatory import design as CD
from lagtheory.experiments.confirmatory import runs as CR
from lagtheory.experiments.confirmatory import stages as ST
from lagtheory.experiments.confirmatory import tuning as TU
from lagtheory.experiments.confirmatory.registration import CONFIRMATORY_SEEDS, check_record, stored_hash
from lagtheory.experiments.engine.cells import run_rows
from lagtheory.experiments.engine.distributed import fingerprint
from lagtheory.experiments.exploratory.design import TaskDesign, training_config
from lagtheory.experiments.exploratory.studies import REGRESSION
from lagtheory.experiments.paths import CONFIRMATORY_RUNS
from lagtheory.experiments.tasks.sequences.regression import RegressionSetting, RegressionTask
from lagtheory.schedules import make_schedule

SMALL = RegressionSetting(train_min=2, train_max=6, test_sizes=(4, 12), test_size=6, test_seed=1, dim=3)
SMALL_REGRESSION = dataclasses.replace(
    REGRESSION, tasks=(TaskDesign("regression", SMALL, steps=8, batch_size=4, description="small"),)
)


def test_the_registered_cells_and_grid():
    cells = CD.confirmatory_cells()
    assert len(cells) == 108 and len({cell.name for cell in cells}) == 108
    assert sum(cell.study == "languages" for cell in cells) == 72
    centre = next(c for c in cells if c.label == "centre" and c.task == "FIRST" and c.optimiser == "adam")
    assert centre.name == "FIRST/adam/main/scale=0.3 ratio=1" and (centre.readout_scale, centre.ratio) == (0.3, 1.0)
    lpft = next(c for c in cells if c.label == "LP-FT" and c.task == "linear" and c.optimiser == "sgd")
    assert (lpft.readout_scale, lpft.ratio, lpft.attention_init) == (0.3, 1.0, "preset")
    # the registered grid: SGD 1e-3..1e2 (11), Adam 1e-4..1 (9), half a decade apart; three runs per rate
    for optimiser, low, count in (("sgd", -3, 11), ("adam", -4, 9)):
        runs = CD.grid_runs(optimiser)
        rates = sorted({r.base_rate for r in runs})
        assert len(rates) == count and len(runs) == 3 * count
        assert np.allclose(np.log10(rates), low + 0.5 * np.arange(count), atol=1e-12)
    seed_runs = sum(len(CD.grid_runs(c.optimiser)) for c in cells) * len(CONFIRMATORY_SEEDS)
    assert seed_runs == 9 * 6 * (33 + 27) * 100  # 324,000 runs of one seed
    assert len(CD.tuning_runs("sgd")) == 11 * (1 + 3 * 2)


def test_joint_is_one_run_under_both_accountings_and_lag_is_not():
    design = REGRESSION.tasks[0]
    total = training_config(design, "sgd", 0.1, accounting="total")
    joint_phase = training_config(design, "sgd", 0.1, accounting="joint")
    assert make_schedule("joint", total) == make_schedule("joint", joint_phase)
    cell = CD.confirmatory_cells()[0]
    lag_total = CD.run_config(design, cell, CD.Run("lag", 0.1, 0.25, "total"))
    lag_joint = CD.run_config(design, cell, CD.Run("lag", 0.1, 0.25, "joint"))
    assert [p.steps for p in make_schedule("lag", lag_total)] == [50, 150]  # T = 200, warm-up T/4 out of T
    assert [p.steps for p in make_schedule("lag", lag_joint)] == [50, 200]  # T joint steps after the warm-up
    eighth = CD.run_config(design, cell, CD.Run("lag", 0.1, 0.125, "total"))
    assert [p.steps for p in make_schedule("lag", eighth)] == [25, 175]
    with pytest.raises(ValueError, match="joint run"):
        CD.Run("joint", 0.1, 0.25, "total")
    with pytest.raises(ValueError, match="schedule must be"):
        CD.Run("lead", 0.1, 0.25, "total")


def test_the_validation_set_and_cells():
    assert CD.validation_setting(SMALL).test_seed == 501
    assert len(CD.validation_levels()) * len(CD.confirmatory_tasks()) * 2 == 216


def test_outcomes_by_hand():
    log2 = math.log(2.0)
    test = np.array([[np.nan, np.inf, 0.7, log2, 0.5]])
    values = CR.outcomes({"test_loss": test, "zero_loss": np.full((1, 5), log2)})
    assert values["failed"].tolist() == [[True, True, True, True, False]]  # at or above the zero loss fails
    assert np.isnan(values["log10_test_loss"][0, :2]).all()
    assert values["log10_test_loss"][0, 4] == pytest.approx(-0.30102999566398, rel=1e-12)
    assert values["capped_log10_test_loss"][0].tolist() == pytest.approx([math.log10(log2)] * 4 + [math.log10(0.5)])


def stored(schedule, rate, warm, accounting, losses):
    return {
        "schedule": schedule,
        "base_rate": rate,
        "warm_fraction": warm,
        "accounting": accounting,
        "values": {"capped_log10_test_loss": losses},
    }


def test_best_vs_best_selection_and_ties():
    runs = {
        "j1": stored("joint", 0.1, None, "both", [-1.0, -3.0]),  # mean -2
        "j2": stored("joint", 0.01, None, "both", [-2.0, -2.0]),  # mean -2: tie, the smaller rate wins
        "j3": stored("joint", 1.0, None, "both", [-1.0, -1.0]),
        "l1": stored("lag", 0.1, 0.5, "total", [-2.5, -2.5]),  # tie with l2: the shorter warm-up wins
        "l2": stored("lag", 0.1, 0.125, "total", [-2.0, -3.0]),
        "l3": stored("lag", 0.01, 0.25, "joint", [-4.0, -4.0]),  # best under equal joint-phase steps only
        "l4": stored("lag", 0.1, 0.25, "joint", [-1.0, -1.0]),
    }
    assert TU.choose(runs, "joint", "total") == {
        "schedule": "joint",
        "base_rate": 0.01,
        "warm_fraction": None,
        "accounting": "both",
        "mean": -2.0,
    }
    assert TU.choose(runs, "lag", "total")["warm_fraction"] == 0.125
    assert TU.choose(runs, "lag", "joint")["base_rate"] == 0.01
    choices = {
        "joint total": TU.choose(runs, "joint", "total"),
        "lag total": TU.choose(runs, "lag", "total"),
        "lag joint": TU.choose(runs, "lag", "joint"),
    }
    assert TU.best_runs(choices) == [CD.Run("lag", 0.1, 0.125, "total")]  # joint's and the 1/4 one are grid runs
    with pytest.raises(ValueError, match="accounting"):
        TU.choose(runs, "lag", "both")


TINY = ["--tasks", "regression", "--optimisers", "adam", "--levels", "centre", "--seeds", "2", "--steps", "8"]


def test_grid_stage_on_two_workers_equals_serial_resumes_and_carries_the_hash(tmp_path, monkeypatch, dask_scheduler):
    monkeypatch.setitem(CD.STUDIES, "regression", SMALL_REGRESSION)
    output = tmp_path / "grid.json"
    arguments = ["confirmatory", "--stage", "grid", *TINY, "--scheduler", dask_scheduler, "--output", str(output)]
    arguments.append("--quiet")
    assert run.main(arguments) == output
    record = json.loads(output.read_text())
    check_record(record)
    assert record["trial"] == {
        "levels": ["centre"],
        "optimisers": ["adam"],
        "seeds": 2,
        "steps": 8,
        "tasks": ["regression"],
    }
    assert record["seeds"] == [100000, 100001]
    (name,) = record["cells"]
    entry = record["cells"][name]
    assert name == "regression/adam/main/scale=0.3 ratio=1" and len(entry["runs"]) == 27
    assert entry["shared_rate"] in CD.RATE_GRIDS["adam"]
    # the unit, written by a worker, is the serial computation of the same payload, bit for bit
    (path,) = (tmp_path / "grid.units").iterdir()
    unit = json.loads(path.read_text())
    cell = CD.confirmatory_cells([("regression", SMALL_REGRESSION.tasks[0])], ["adam"])[0]
    payload = CR.unit_payload(
        "regression",
        SMALL_REGRESSION.tasks[0],
        [CR.cell_payload(cell, CD.grid_runs("adam"))],
        (100000, 100001),
        stored_hash(),
    )
    assert unit["fingerprint"] == fingerprint(payload) and unit["result"]["registration"] == stored_hash()
    serial = json.loads(json.dumps(CR.run_unit(payload), allow_nan=False))
    assert serial["cells"] == unit["result"]["cells"] and serial["cells"][name] == entry["runs"]
    # one run against the same configuration trained alone, built without run_config; failure by hand
    config = training_config(SMALL_REGRESSION.tasks[0], "adam", 0.01, 0.3, 1.0, "random", accounting="joint")
    alone = run_rows(RegressionTask(SMALL), [("lag", config)], (100001,))
    run_entry = entry["runs"]["lag rate=0.01 warm=0.25 accounting=joint"]
    assert run_entry["values"]["test_loss"][1] == alone.metrics["test_loss"][0, 0]
    assert run_entry["values"]["failed"][1] == bool(
        alone.metrics["test_loss"][0, 0] >= alone.metrics["zero_loss"][0, 0]
    )
    # resume: nothing runs again, the same record comes out
    stamp = path.stat().st_mtime_ns
    output.unlink()
    run.main(arguments)
    assert path.stat().st_mtime_ns == stamp
    again = json.loads(output.read_text())
    assert again["cells"] == record["cells"]
    # units of another registration are refused, and so is a page that no longer hashes to the stored value
    monkeypatch.setattr(run, "stored_hash", lambda: "1" * 64)
    monkeypatch.setattr(run, "page_hash", lambda: "1" * 64)
    with pytest.raises(ValueError, match="written for another payload"):
        run.main([*arguments, "--overwrite"])
    monkeypatch.setattr(run, "page_hash", lambda: "2" * 64)
    with pytest.raises(SystemExit):
        run.main([*arguments, "--overwrite"])


def test_tuning_then_best_stage(tmp_path, monkeypatch, capsys, dask_scheduler):
    monkeypatch.setitem(CD.STUDIES, "regression", SMALL_REGRESSION)
    tuning = tmp_path / "tuning.json"
    run.main(
        ["confirmatory", "--stage", "tuning", *TINY, "--scheduler", dask_scheduler, "--output", str(tuning), "--quiet"]
    )
    record = json.loads(tuning.read_text())
    check_record(record)
    assert record["seeds"] == [0, 1]
    (name,) = record["cells"]
    assert record["cells"][name]["configuration"]["setting"]["test_seed"] == 501  # the validation set
    assert len(record["cells"][name]["runs"]) == 9 * 7
    choices = record["choices"][name]
    for key, choice in choices.items():  # each choice is the minimum of the stored means
        schedule, accounting = key.split()
        means = [
            np.mean(r["values"]["capped_log10_test_loss"])
            for r in record["cells"][name]["runs"].values()
            if r["schedule"] == schedule and r["accounting"] in ("both", accounting)
        ]
        assert choice["mean"] == min(means)
    best = tmp_path / "best.json"
    run.main(
        [
            "confirmatory",
            "--stage",
            "best",
            *TINY,
            "--scheduler",
            dask_scheduler,
            "--output",
            str(best),
            "--tuning",
            str(tuning),
            "--quiet",
        ]
    )
    best_record = json.loads(best.read_text())
    check_record(best_record)
    expected = {
        CD.Run(**{k: c[k] for k in ("schedule", "base_rate", "warm_fraction", "accounting")}).key
        for c in choices.values()
        if c["schedule"] == "lag" and c["warm_fraction"] != 0.25
    }
    assert set(best_record["cells"][name]["runs"]) == expected
    assert best_record["seeds"] == [100000, 100001] and best_record["choices"][name] == choices
    # the analysis reads the runner's records (here with the trial mark removed, which it otherwise refuses)
    grid = tmp_path / "grid.json"
    run.main(
        ["confirmatory", "--stage", "grid", *TINY, "--scheduler", dask_scheduler, "--output", str(grid), "--quiet"]
    )
    grid_record = json.loads(grid.read_text())
    with pytest.raises(ValueError, match="trial"):
        CA.analyse(grid_record, best_record)
    result = CA.analyse({**grid_record, "trial": None}, {**best_record, "trial": None}, resamples=200)
    for variant in ("shared total", "shared joint", "best total", "best joint"):
        assert result["outcomes"]["failure"][variant][name]["n"] == 2
    assert set(result["window"]["joint"][name]) >= {"ratio", "interval_bonferroni", "verdict"}
    with pytest.raises(SystemExit):  # a tuning record of other cells is refused
        run.main(
            [
                "confirmatory", "--stage", "best", *TINY[:-2], "--steps", "12", "--output", str(best), "--overwrite",
                "--tuning", str(tuning), "--quiet",
            ]
        )  # fmt: skip
    assert "--tuning was run with trial flags" in capsys.readouterr().err


def test_all_stages_in_order_with_the_same_flags(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no stage written yet
    original = run.main
    calls = []
    monkeypatch.setattr(run, "main", lambda arguments: calls.append(arguments) or arguments[2])
    assert (
        original(["--workers", "1", "confirmatory", "--stage", "all", "--tasks", "regression", "--quiet"])
        == "validation"
    )
    expected = [
        ["confirmatory", "--stage", stage, "--workers", "1", "--tasks", "regression", "--quiet"] for stage in ST.STAGES
    ]
    assert calls == expected
    calls.clear()
    original(["confirmatory", "--stage=all", "--quiet"])
    assert calls == [["confirmatory", "--stage", stage, "--quiet"] for stage in ST.STAGES]
    with pytest.raises(SystemExit):
        original(["confirmatory", "--stage", "all", "--output", "x.json"])
    # a stage written by the same command is kept (the sweep resumes after it); one written by another
    # command, or any existing record of a single stage, is refused without --overwrite
    grid = CONFIRMATORY_RUNS / "grid.json"
    grid.parent.mkdir(parents=True)
    grid.write_text(json.dumps({"command": run.command_line(["confirmatory", "--stage", "grid", "--quiet"])}))
    calls.clear()
    original(["confirmatory", "--stage", "all", "--quiet"])
    assert calls == [["confirmatory", "--stage", stage, "--quiet"] for stage in ST.STAGES[1:]]
    assert "grid.json exists, written by this command; kept" in capsys.readouterr().err
    calls.clear()
    original(["confirmatory", "--stage", "all", "--quiet", "--overwrite"])
    assert calls == [["confirmatory", "--stage", stage, "--quiet", "--overwrite"] for stage in ST.STAGES]
    for arguments in (["--stage", "all", "--workers", "1", "--quiet"], ["--stage", "grid", "--quiet"]):
        with pytest.raises(SystemExit):
            original(["confirmatory", *arguments])
        err = capsys.readouterr().err
        assert "grid.json exists" in err and "pass --overwrite" in err


def test_validation_stage(tmp_path, monkeypatch, dask_scheduler):
    monkeypatch.setitem(CD.STUDIES, "regression", SMALL_REGRESSION)
    output = tmp_path / "validation.json"
    tiny = ["--tasks", "regression", "--optimisers", "adam", "--seeds", "2", "--steps", "8"]
    run.main(
        [
            "confirmatory",
            "--stage",
            "validation",
            *tiny,
            "--scheduler",
            dask_scheduler,
            "--output",
            str(output),
            "--quiet",
        ]
    )
    record = json.loads(output.read_text())
    check_record(record)
    calibration = record["calibration"]["regression"]["adam"]
    assert len(record["cells"]) == 12 and len(calibration["levels"]) == 12
    for name, entry in record["cells"].items():
        configuration = entry["configuration"]
        level = f"scale={configuration['readout_scale']:g} ratio={configuration['ratio']:g}"
        assert name == f"regression/adam/validation/{level}"
        assert entry["calibrated_rate"] == calibration["base_rates"][level]
        rate = entry["calibrated_rate"]
        assert set(entry["runs"]) == {f"joint rate={rate:g}", f"lag rate={rate:g} warm=0.25 accounting=total"}
        lag = entry["runs"][f"lag rate={rate:g} warm=0.25 accounting=total"]["training"]
        assert (lag["output_scale"], lag["attention_lr"] / lag["output_lr"]) == pytest.approx(
            (configuration["readout_scale"], configuration["ratio"])
        )
    # the calibration at the validation levels is the exploratory rule: the chosen rate is the grid's argmin of
    # the stored means (diverged rates stored as None are never chosen)
    for k, level in enumerate(calibration["levels"]):
        means = [row[k] if row[k] is not None else math.inf for row in calibration["mean_log10_final_training_loss"]]
        assert calibration["base_rates"][level] == calibration["grid"][int(np.argmin(means))]
    assert {tuple(map(float, (lvl.split()[0][6:], lvl.split()[1][6:]))) for lvl in calibration["levels"]} == set(
        CD.validation_levels()
    )


def test_bad_arguments_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no stage written here
    for bad, message in (
        (["--tasks", "NOPE"], "--tasks must be among"),
        (["--levels", "centre!"], "--levels must be among"),
        (["--seeds", "101"], "--seeds must be at most 100"),
        (["--steps", "2"], "--steps must be at least 4"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--levels", "centre", "--stage", "validation"], "the validation stage has its own"),
    ):
        with pytest.raises(SystemExit):
            run.main(["confirmatory", "--stage", "grid", *bad, "--quiet"])
        assert message in capsys.readouterr().err
