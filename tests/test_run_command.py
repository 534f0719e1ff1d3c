"""The experiment command (python -m lagtheory.experiments.run): a study's units on a local dask cluster
give the serial record bit for bit, written outside book/data by default; an existing record is never
replaced without --overwrite; a stopped run resumes from the written units; the device is checked; and the
transformer study is a study the command runs."""

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from lagtheory.experiments import run
from lagtheory.experiments.engine.cells import TrainingConfig, check_device, run_rows
from lagtheory.experiments.exploratory import runner as RN
from lagtheory.experiments.exploratory import studies as ST
from lagtheory.experiments.exploratory.design import TaskDesign
from lagtheory.experiments.exploratory.entries import cell_entry
from lagtheory.experiments.exploratory.records import load_record, validate_record
from lagtheory.experiments.paths import RUNS, record_path, units_folder
from lagtheory.experiments.tasks.sequences.regression import RegressionSetting, RegressionTask
from lagtheory.experiments.tasks.transformer.task import TransformerLanguageRuns, TransformerSetting

pytestmark = pytest.mark.usefixtures("forked_dask_workers")  # workers forked from a fork server (conftest)

ROOT = Path(__file__).resolve().parents[1]

SMALL_REGRESSION = dataclasses.replace(
    ST.REGRESSION,
    tasks=(
        TaskDesign(
            "regression",
            RegressionSetting(train_min=2, train_max=6, test_sizes=(4, 12), test_size=6, test_seed=1, dim=3),
            steps=12,
            batch_size=4,
            description="small",
        ),
    ),
)


def tiny_transformer(*languages):
    """The transformer study on ``languages`` at a tiny size (width 4, one head, lengths 1..4, 4 steps)."""
    setting = TransformerSetting(
        max_train_length=4, test_lengths=(4, 8), test_per_class=2, pairs_per_class=1, width=4, heads=1, mlp_width=4
    )
    tasks = tuple(TaskDesign(name, setting, steps=4, batch_size=2, description="tiny") for name in languages)
    return dataclasses.replace(ST.TRANSFORMER, tasks=tasks)


def test_a_run_writes_the_serial_record_outside_book_data_refuses_to_overwrite_and_resumes(
    tmp_path, monkeypatch, capsys, dask_scheduler
):
    # the working directory as in a checkout: the committed record of the study in book/data
    monkeypatch.chdir(tmp_path)
    committed = record_path("transformer")
    committed.parent.mkdir(parents=True)
    committed.write_bytes((ROOT / committed).read_bytes())
    before = (committed.read_bytes(), committed.stat().st_mtime_ns)
    # the workers take build and cells from the registry and the (tiny) task design from each unit's payload
    monkeypatch.setitem(run.STUDIES, "transformer", tiny_transformer("LAST_B", "PARITY"))
    arguments = ["transformer", "--seeds", "2", "--workers", "1", "--quiet"]  # the command's own local cluster
    command = "python -m lagtheory.experiments.run " + " ".join(arguments)
    output = run.main(arguments)
    assert output == RUNS / "summary_transformer.json" and output.is_file()
    err = capsys.readouterr().err
    # a clean finish says what it wrote and nothing about resuming (that is said only when a run stops early)
    assert f"wrote {output}" in err and "resume" not in err and "run the same command again" not in err
    units = units_folder(output)
    assert sorted(path.name for path in units.iterdir()) == ["cells-LAST_B-adam.json", "cells-PARITY-adam.json"]
    on_cluster = load_record(output)
    serial = RN.run_study(tiny_transformer("LAST_B", "PARITY"), (0, 1), command)
    for record in (on_cluster, serial):
        record.pop("seconds")
    assert json.dumps(on_cluster, sort_keys=True) == json.dumps(serial, sort_keys=True)
    # an existing record is never replaced without --overwrite, the committed one included
    for again in (arguments, [*arguments, "--output", str(committed)]):
        with pytest.raises(SystemExit) as stop:
            run.main(again)
        assert stop.value.code == 2 and "exists; pass --overwrite" in capsys.readouterr().err
    assert (committed.read_bytes(), committed.stat().st_mtime_ns) == before
    written = {path.relative_to(tmp_path) for path in tmp_path.rglob("*") if path.is_file()}
    assert {path for path in written if path.parts[0] != str(RUNS)} == {committed}  # nothing else outside runs/
    # a run stopped after one unit had finished, resumed on a running cluster: only the other unit is computed
    kept = units / "cells-LAST_B-adam.json"
    stamp = kept.stat().st_mtime_ns
    (units / "cells-PARITY-adam.json").unlink()
    output.unlink()
    run.main([*arguments, "--scheduler", dask_scheduler])
    assert kept.stat().st_mtime_ns == stamp and (units / "cells-PARITY-adam.json").is_file()
    resumed = load_record(output)
    for record in (resumed, on_cluster):
        record.pop("seconds", None)
        record.pop("command")
    assert resumed == on_cluster
    assert (committed.read_bytes(), committed.stat().st_mtime_ns) == before


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_without_a_gpu_the_device_cuda_is_refused(tmp_path, capsys):
    with pytest.raises(ValueError, match="device 'cuda' needs a GPU"):
        check_device("cuda")
    with pytest.raises(SystemExit) as stop:
        run.main(["regression", "--device", "cuda", "--output", str(tmp_path / "r.json"), "--quiet"])
    assert stop.value.code == 2 and "--device: device 'cuda' needs a GPU" in capsys.readouterr().err


def test_a_bad_device_name_is_refused():
    with pytest.raises(ValueError, match="device must be"):
        check_device("abacus")


def assert_the_gpu_follows_the_cpu(make_task, config):
    """joint, lag and three-phase on seeds 0 and 1, on the CPU and on the GPU (each on a task from ``make_task``):
    the same losses and test metrics to 1e-9."""
    rows = [(schedule, config) for schedule in ("joint", "lag", "three-phase")]
    cpu = run_rows(make_task(), rows, (0, 1), device="cpu")
    gpu = run_rows(make_task(), rows, (0, 1), device="cuda")
    assert torch.allclose(torch.from_numpy(gpu.losses), torch.from_numpy(cpu.losses), rtol=1e-9, atol=1e-12)
    assert set(gpu.metrics) == set(cpu.metrics)
    for name, value in cpu.metrics.items():
        assert torch.allclose(torch.from_numpy(gpu.metrics[name] * 1.0), torch.from_numpy(value * 1.0), rtol=1e-9)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU here")
def test_on_a_gpu_the_engine_follows_the_cpu_run():
    task = RegressionTask(SMALL_REGRESSION.tasks[0].setting)
    config = TrainingConfig(
        steps=12, attention_lr=0.05, output_lr=0.05, warm_steps=3, big_step=0.2, batch_size=4,
        attention_init="random", optimiser="adam",
    )  # fmt: skip
    assert_the_gpu_follows_the_cpu(lambda: task, config)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU here")
@pytest.mark.parametrize("positions", ["learned", "sinusoidal"])
def test_on_a_gpu_the_transformer_follows_the_cpu_run(positions):
    # the sinusoidal table is the task's own tensor, moved by the engine (TransformerLanguageRuns.to)
    setting = dataclasses.replace(tiny_transformer("FIRST").tasks[0].setting, positions=positions)
    config = dataclasses.replace(ST.TRANSFORMER_TRAINING, steps=8, warm_steps=2, batch_size=4)
    assert_the_gpu_follows_the_cpu(lambda: TransformerLanguageRuns("FIRST", setting), config)


def test_the_sinusoidal_study_is_the_transformer_study_with_sinusoidal_positions():
    learned, sinusoidal = ST.study("transformer"), ST.study("transformer_sinusoidal")
    assert [d.name for d in sinusoidal.tasks] == [d.name for d in learned.tasks]
    for a, b in zip(learned.tasks, sinusoidal.tasks, strict=True):
        assert a.setting.positions == "learned" and b.setting.positions == "sinusoidal"
        assert dataclasses.replace(b.setting, positions="learned") == a.setting
        assert (a.steps, a.batch_size) == (b.steps, b.batch_size)
    assert (
        sinusoidal.cells(sinusoidal.tasks[0], "adam", {})[0].training
        == learned.cells(learned.tasks[0], "adam", {})[0].training
    )
    assert "sinusoidal positions" in sinusoidal.description and "learned" not in sinusoidal.description


def test_the_transformer_study_runs_its_languages_under_every_schedule():
    assert "transformer" in run.parser().parse_args(["transformer"]).study
    study = ST.study("transformer")
    assert [design.name for design in study.tasks] == [
        "FIRST", "EVEN_PAIRS", "CONTAINS_AB", "A_STAR_B_STAR", "CONTAINS_B_NOT_C", "LAST_B", "TWO_B", "PARITY"
    ]  # fmt: skip
    assert study.primary == "recognised" and study.binary and study.higher_is_better and not study.calibrated
    (cell,) = study.cells(study.tasks[0], "adam", {})
    assert cell.schedules == (
        "joint", "lag", "lead", "three-phase", "two-timescale-0.1", "two-timescale-0.3", "two-timescale-3"
    )  # fmt: skip
    assert cell.training.attention_init == "random" and cell.training.warm_steps == 75
    tiny = tiny_transformer("PARITY")
    record = RN.run_study(tiny, (0, 1), "test")
    validate_record(record, "record")
    recognised = record["cells"]["PARITY/adam/fixed/uncalibrated"]["values"]["recognised"]
    assert set(recognised) == set(cell.schedules)
    assert all(len(values) == 2 and all(isinstance(v, bool) for v in values) for values in recognised.values())
    assert record["calibration"] == {"PARITY": {}} and record["design"]["languages"][-1] == "PARITY"
    # the units (payloads rebuilt into designs, results through JSON) give what the engine gives directly
    design = tiny.tasks[0]
    direct = RN.run_cells(tiny, tiny.cells(design, "adam", {}), (0, 1))
    ((cell, result),) = direct.values()
    assert json.dumps(cell_entry(cell, result), sort_keys=True) == json.dumps(
        record["cells"][cell.name], sort_keys=True
    )
