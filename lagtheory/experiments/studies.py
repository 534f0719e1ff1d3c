"""The studies of the empirical chapters (:data:`STUDIES`: languages, regression, in-context regression,
and the standard small transformer) and their runner.

Each study is a :class:`lagtheory.experiments.design.Study`: its tasks and settings, its cells
(the sweep of :mod:`lagtheory.experiments.design`, calibrated by
:mod:`lagtheory.experiments.calibration`, or its own fixed cells), its metric and margin.
:func:`run_study` calibrates (where the study is calibrated) and runs every cell of a study
through the engine (all cells of a task and optimiser in one batched loop,
:func:`lagtheory.experiments.engine.run_rows`) and returns what the record
(:mod:`lagtheory.experiments.records`) is built from; ``python -m lagtheory.experiments.run
<study>`` runs those batches as units of :mod:`lagtheory.experiments.distributed` and writes the
record. :func:`rerun` runs part of a stored cell again, alone, from its stored configuration.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .calibration import calibrate
from .design import Cell, Study, TaskDesign, engine_steps, rows_of
from .engine import CellResult, Task, check_seeds, run_rows
from .icl import ICLSetting, ICLTask
from .language_catalogue import TASKS
from .language_runs import LanguageRuns, LanguageSetting
from .records import cell_from_configuration, cell_values
from .regression import RegressionSetting, RegressionTask
from .softmax_icl import SoftmaxICLSetting, SoftmaxICLTask


def run_cells(
    the_study: Study,
    cells: Sequence[Cell],
    seeds: Sequence[int],
    progress: Callable[[int], None] | None = None,
    task: Task | None = None,
) -> dict[str, tuple[Cell, CellResult]]:
    """Run cells of one task and optimiser in one batched loop: cell name -> (cell, its result)
    (``task``: the engine task, if already built)."""
    seeds = check_seeds(seeds)
    if not cells or len({(cell.task, cell.optimiser, cell.training.batch_size) for cell in cells}) != 1:
        raise ValueError("cells must be a non-empty list of cells of one task and optimiser")
    task = the_study.build(cells[0].task, cells[0].setting) if task is None else task
    result = run_rows(task, rows_of(cells), seeds, progress)
    results = {}
    start = 0
    for cell in cells:
        rows = list(range(start, start + len(cell.schedules)))
        results[cell.name] = (cell, result.subset(rows))
        start += len(cell.schedules)
    return results


def run_study(
    the_study: Study, seeds: Sequence[int], progress: Callable[[int], None] | None = None
) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[Cell, CellResult]], dict[str, float]]:
    """Calibrate and run every cell of a study: (calibrations task -> optimiser -> :func:`lagtheory.experiments.calibration.calibrate`'s
    result, cell name -> (cell, result), seconds per task)."""
    calibrations: dict[str, dict[str, Any]] = {}
    results: dict[str, tuple[Cell, CellResult]] = {}
    seconds: dict[str, float] = {}
    for design in the_study.tasks:
        start = time.perf_counter()
        task = the_study.build(design.name, design.setting)
        calibrations[design.name] = {}
        for optimiser in the_study.optimisers:
            base_rates: Mapping[str, float] = {}
            if the_study.calibrated:
                calibration = calibrate(the_study, design, optimiser, progress, task)
                calibrations[design.name][optimiser] = calibration
                base_rates = calibration["base_rates"]
            cells = the_study.cells(design, optimiser, base_rates)
            results.update(run_cells(the_study, cells, seeds, progress, task))
        seconds[design.name] = time.perf_counter() - start
    return calibrations, results, seconds


def study_steps(the_study: Study) -> int:
    """The engine steps of :func:`run_study` (for a progress bar)."""
    return sum(
        len(the_study.optimisers)
        * (
            design.steps * the_study.calibrated
            + engine_steps(the_study.cells(design, the_study.optimisers[0], defaultdict(lambda: 1.0)))
        )
        for design in the_study.tasks
    )


def rerun(
    the_study: Study, configuration: Mapping[str, Any], schedules: Sequence[str], seeds: Sequence[int]
) -> dict[str, NDArray]:
    """Run a stored cell again, alone, for some of its schedules and seeds; its per-seed quantities
    (:func:`lagtheory.experiments.records.cell_values`)."""
    cell = cell_from_configuration(the_study, configuration)
    if any(schedule not in cell.schedules for schedule in schedules):
        raise ValueError(f"schedules must be among the cell's {cell.schedules}, got {schedules!r}")
    sample = Cell(
        cell.name, cell.task, cell.optimiser, cell.sweep, cell.level, tuple(schedules), cell.setting, cell.training
    )
    ((_, result),) = run_cells(the_study, [sample], seeds).values()
    return cell_values(result, cell)


# -- the studies ------------------------------------------------------------------------------

STAR_FREE = ("FIRST", "EVEN_PAIRS", "CONTAINS_AB", "A_STAR_B_STAR", "CONTAINS_B_NOT_C", "FIRST_LEARNED")
"""The star-free language tasks of the study (the last two: distractors, learned positions)."""

LANGUAGE_SETTING = LanguageSetting(
    horizon_lengths=tuple(range(1, 41)) + tuple(int(n) for n in np.unique(np.round(np.geomspace(50, 1e12, 12))))
)
"""The language data of the study: the chapter's, with the exact check at every length 1..40 and at 12
lengths spaced evenly in log from 50 to 1e12."""
LANGUAGES = Study(
    name="languages",
    description="six star-free language tasks (four over {a, b}; eight letters; learned position scores)",
    tasks=tuple(
        TaskDesign(name, LANGUAGE_SETTING, steps=150, batch_size=32, description=TASKS[name].why) for name in STAR_FREE
    ),
    build=lambda name, setting: LanguageRuns(TASKS[name], setting),
    setting_types=dict.fromkeys(STAR_FREE, LanguageSetting),
)

REGRESSION_STUDY_SETTING = RegressionSetting(
    train_min=2, train_max=40, test_sizes=(5, 10, 20, 40, 100, 250, 1000), test_size=128, test_seed=10**6
)
REGRESSION = Study(
    name="regression",
    description="single-location regression, trained on lengths 2..40, tested up to 1000",
    tasks=(
        TaskDesign(
            "regression", REGRESSION_STUDY_SETTING, steps=200, batch_size=32, description="single-location regression"
        ),
    ),
    build=lambda name, setting: RegressionTask(setting),
    setting_types={"regression": RegressionSetting},
)

ICL_STUDY_SETTING = ICLSetting(
    train_min=2, train_max=40, test_sizes=(5, 10, 20, 40, 100, 250, 1000), test_size=200, test_seed=10**6
)
SOFTMAX_ICL_SETTING = SoftmaxICLSetting(
    train_min=2, train_max=40, test_sizes=(5, 10, 20, 40, 100, 250, 1000), test_size=200, test_seed=10**6 + 1
)
ICL = Study(
    name="icl",
    description="in-context linear regression, linear and softmax attention, trained on contexts of 2..40",
    tasks=(
        TaskDesign("linear", ICL_STUDY_SETTING, steps=300, batch_size=32, description="linear self-attention, D = 5"),
        TaskDesign("softmax", SOFTMAX_ICL_SETTING, steps=300, batch_size=32, description="softmax attention, D = 3"),
    ),
    build=lambda name, setting: ICLTask(setting) if name == "linear" else SoftmaxICLTask(setting),
    setting_types={"linear": ICLSetting, "softmax": SoftmaxICLSetting},
)

STUDIES: Mapping[str, Study] = {study.name: study for study in (LANGUAGES, REGRESSION, ICL)}


def study(name: str) -> Study:
    """The study called ``name`` (a key of :data:`STUDIES`)."""
    if name not in STUDIES:
        raise ValueError(f"name must be one of {tuple(STUDIES)}, got {name!r}")
    return STUDIES[name]
