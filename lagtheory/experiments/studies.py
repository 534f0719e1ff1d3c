"""The experiments of the empirical chapters, stated once: for each task the
cells (configurations) to run, the primary metric with its direction and the
margin of its equivalence test (fixed before the runs), and the per-seed
quantities the chapters read besides it.

:func:`run_study` runs every cell of a study through the engine and returns a
record (:mod:`lagtheory.experiments.records`) with every seed's value of every
quantity for every schedule, the full configuration of each cell, the seed
list and the package versions; ``python -m lagtheory.experiments.run <study>``
writes it to ``book/data/summary_<study>.json``. :func:`rerun` runs part of a
stored cell again from its stored configuration, so a chapter can check that
the stored values reproduce.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lagtheory.schedules import SCHEDULE_NAMES

from .engine import CellResult, TrainingConfig, check_seeds, config_from_dict, config_to_dict, run_cell
from .icl import ICL_SETTING, ICL_TRAINING, ICLSetting, ICLTask
from .language_catalogue import TASKS
from .language_runs import LANGUAGE_TRAINING, LanguageRuns, LanguageSetting
from .regression import REGRESSION_SETTING, REGRESSION_TRAINING, RegressionSetting, RegressionTask

STAR_FREE = ("FIRST", "EVEN_PAIRS", "CONTAINS_AB", "A_STAR_B_STAR")
"""The star-free languages of the chapter (PARITY, the fifth cell, is the control)."""


def first_below(losses: NDArray[np.float64], level: float, window: int = 20) -> NDArray[np.int64]:
    """Per row (the last axis is the step): the first step at which the mean of the losses of the
    last ``window`` steps (that step included) is below ``level``; -1 if it never is."""
    losses = np.asarray(losses, dtype=np.float64)
    kernel = np.ones(window) / window
    averaged = np.apply_along_axis(lambda row: np.convolve(row, kernel, mode="valid"), -1, losses)
    below = averaged < level
    return np.where(below.any(axis=-1), below.argmax(axis=-1) + window - 1, -1)


def first_reaching(trace: NDArray[np.float64], level: NDArray[np.float64] | float) -> NDArray[np.int64]:
    """Per row: the first step at which the trace is >= ``level`` (broadcast per row); -1 if never."""
    trace = np.asarray(trace, dtype=np.float64)
    reached = trace >= np.asarray(level, dtype=np.float64)[..., None]
    return np.where(reached.any(axis=-1), reached.argmax(axis=-1), -1)


@dataclass(frozen=True)
class Cell:
    """One configuration of a study: its ``name``, the task's ``setting`` and the ``training`` configuration."""

    name: str
    setting: Any
    training: TrainingConfig


@dataclass(frozen=True)
class Study:
    """A task's experiment (module docstring). ``primary`` names the metric of the comparison,
    ``binary`` whether it is a yes/no outcome (exact tests), ``margin`` the equivalence margin and
    ``margin_rule`` why; ``seeds`` the number of paired seeds and ``seeds_rule`` why; ``build(cell name, setting)`` makes the engine task; ``derive(result,
    training)`` gives the further per-seed quantities, each (schedules, seeds, ...)."""

    name: str
    description: str
    metric: str
    primary: str
    higher_is_better: bool
    binary: bool
    margin: float
    margin_rule: str
    setting_type: type
    cells: tuple[Cell, ...]
    build: Callable[[str, Any], Any]
    derive: Callable[[CellResult, TrainingConfig], Mapping[str, NDArray]]
    seeds: int = 30
    seeds_rule: str = "at least 30 paired seeds per cell"


def _language_derived(result: CellResult, training: TrainingConfig) -> Mapping[str, NDArray]:
    moved_a, moved_o = result.traces["attention_moved"], result.traces["output_moved"]
    return {
        "attention_moved_at_10": moved_a[..., 10],
        "output_moved_at_10": moved_o[..., 10],
        "attention_moved_in_warm_up": moved_a[..., : training.warm_steps + 1].max(axis=-1),
        "final_loss": result.losses[..., -1],
    }


def _regression_derived(result: CellResult, training: TrainingConfig) -> Mapping[str, NDArray]:
    key, value = result.traces["query_key"], result.traces["readout_value"]
    return {
        "loss_below_0.1_from": first_below(result.losses, 0.1),
        "readout_value_half_from": first_reaching(value, 0.5),
        "query_key_half_from": first_reaching(key, 0.5),
        "query_key_start": key[..., 0],
        "query_key_after_1": key[..., 1],
        "query_key_constant_after_1": np.all(key[..., 1:] == key[..., 1:2], axis=-1),
        "readout_value_start": value[..., 0],
    }


def _icl_derived(result: CellResult, training: TrainingConfig) -> Mapping[str, NDArray]:
    label, trace = np.abs(result.traces["label_value"]), np.abs(result.traces["key_query_trace"])
    final_label = np.abs(result.final["value"][..., -1])
    final_trace = np.abs(np.diagonal(result.final["key_query"][..., :-1, :], axis1=-2, axis2=-1).mean(axis=-1))
    return {
        "loss_below_0.5_from": first_below(result.losses, 0.5),
        "label_value_half_from": first_reaching(label, 0.5 * final_label),
        "key_query_trace_half_from": first_reaching(trace, 0.5 * final_trace),
    }


LANGUAGES = Study(
    name="languages",
    description="star-free languages and the control PARITY, one cell per language",
    metric="recognised: every word of every checked length up to 1e12 classified correctly (exact worst case)",
    primary="recognised",
    higher_is_better=True,
    binary=True,
    margin=0.1,
    margin_rule="equivalent when the rate of seeds on which the two schedules disagree is below 0.1",
    setting_type=LanguageSetting,
    cells=tuple(Cell(name, LanguageSetting(), LANGUAGE_TRAINING) for name in (*STAR_FREE, "PARITY")),
    build=lambda name, setting: LanguageRuns(TASKS[name], setting),
    derive=_language_derived,
    seeds=60,
    seeds_rule=(
        "a yes/no outcome: with no discordant seed out of n the exact equivalence p-value is 0.9^n, and Holm over "
        "the 4 star-free cells asks for 0.9^n < 0.05 / 4, so n >= 42; we take 60"
    ),
)

REGRESSION = Study(
    name="regression",
    description="single-location regression, trained on lengths 2..40, tested up to 1000",
    metric="score: test mean squared error averaged over the test lengths above 40 (lower is better)",
    primary="score",
    higher_is_better=False,
    binary=False,
    margin=0.02,
    margin_rule="2% of the error of the zero prediction (the target has variance 1)",
    setting_type=RegressionSetting,
    cells=(Cell("regression", REGRESSION_SETTING, REGRESSION_TRAINING),),
    build=lambda name, setting: RegressionTask(setting),
    derive=_regression_derived,
)

ICL = Study(
    name="icl",
    description="in-context linear regression, trained on contexts of 2..40 examples, tested up to 1000",
    metric="score: test mean squared error averaged over the test context sizes above 40 (lower is better)",
    primary="score",
    higher_is_better=False,
    binary=False,
    margin=0.02,
    margin_rule="2% of the error of the zero prediction (the target has variance 1)",
    setting_type=ICLSetting,
    cells=(Cell("icl", ICL_SETTING, ICL_TRAINING),),
    build=lambda name, setting: ICLTask(setting),
    derive=_icl_derived,
)

STUDIES: Mapping[str, Study] = {study.name: study for study in (LANGUAGES, REGRESSION, ICL)}


def study(name: str) -> Study:
    """The study called ``name`` (a key of :data:`STUDIES`)."""
    if name not in STUDIES:
        raise ValueError(f"name must be one of {tuple(STUDIES)}, got {name!r}")
    return STUDIES[name]


def cell_values(the_study: Study, result: CellResult, training: TrainingConfig) -> dict[str, NDArray]:
    """Every per-seed quantity of a cell, name -> (schedules, seeds, ...): the task's metrics, the
    study's derived quantities and the trained parameters (``final_<name>``)."""
    values = dict(result.metrics)
    values.update(the_study.derive(result, training))
    values.update({f"final_{name}": value for name, value in result.final.items()})
    return values


def curves(result: CellResult) -> dict[str, NDArray]:
    """Mean over seeds of the training loss and of every trace, per schedule and step."""
    curves = {"loss": np.nanmean(result.losses, axis=1)}
    curves.update({name: trace.mean(axis=1) for name, trace in result.traces.items()})
    return curves


def run_cells(
    the_study: Study,
    cells: Sequence[Cell],
    schedules: Sequence[str] = SCHEDULE_NAMES,
    seeds: Sequence[int] = tuple(range(30)),
    progress: Callable[[int], None] | None = None,
) -> dict[str, tuple[Cell, CellResult]]:
    """Run the cells through the engine: cell name -> (cell, result)."""
    seeds = check_seeds(seeds)
    results = {}
    for cell in cells:
        task = the_study.build(cell.name, cell.setting)
        results[cell.name] = (cell, run_cell(task, cell.training, schedules, seeds, progress))
    return results


def cell_configuration(cell: Cell) -> dict[str, Any]:
    """The full configuration of a cell, JSON-ready."""
    return {"cell": cell.name, "setting": config_to_dict(cell.setting), "training": config_to_dict(cell.training)}


def cell_from_configuration(the_study: Study, configuration: Mapping[str, Any]) -> Cell:
    """The :class:`Cell` of a stored configuration (:func:`cell_configuration`)."""
    return Cell(
        configuration["cell"],
        config_from_dict(the_study.setting_type, configuration["setting"]),
        config_from_dict(TrainingConfig, configuration["training"]),
    )


def rerun(
    the_study: Study, configuration: Mapping[str, Any], schedules: Sequence[str], seeds: Sequence[int]
) -> dict[str, NDArray]:
    """Run a stored cell again for some schedules and seeds; its per-seed quantities (:func:`cell_values`)."""
    cell = cell_from_configuration(the_study, configuration)
    ((_, result),) = run_cells(the_study, [cell], schedules, seeds).values()
    return cell_values(the_study, result, cell.training)


def all_total_steps(cells: Sequence[Cell], schedules: Sequence[str]) -> int:
    """The number of engine steps the cells take (for a progress bar)."""
    from lagtheory.schedules import make_schedule

    return sum(
        max(sum(phase.steps for phase in make_schedule(name, cell.training.schedule_settings())) for name in schedules)
        for cell in cells
    )


def replace_training(cell: Cell, **changes: Any) -> Cell:
    """A copy of ``cell`` with some training fields changed (a one-factor sweep)."""
    return Cell(cell.name, cell.setting, dataclasses.replace(cell.training, **changes))
