"""The study of the empirical chapters, stated once before the runs: for each
task, which regimes are run, how the base step sizes are chosen, the primary
comparisons, the metric with its equivalence margin, and the per-seed
quantities the chapters read.

**Regimes.** Per task and optimiser (SGD and Adam), a *main grid* of readout
initialisation scale (:data:`READOUT_SCALES`) times attention/output
step-size ratio (:data:`RATIOS`; the two step sizes have the base rate as
their geometric mean, attention ``base * sqrt(r)``, output ``base / sqrt(r)``),
and one-factor sweeps around its centre (:data:`CENTRE`: readout scale 0.3,
ratio 1, attention initialised N(0, 0.1^2), budget T, equal total steps):
the attention initialisation (zero; preset to a value that solves the task
with a fresh readout, the linear-probing-then-fine-tuning situation), the
step budget (T/4, T/2, 2T, 4T), the step accounting (equal joint-phase
steps), and the base rate: times and divided by sqrt(10), at every ratio of
the main grid's row through the centre (readout scale 0.3), each ratio's
calibrated rate times the factor, so that the ratio is seen at three base
rates (this row was added after the first runs, to cover the ratio at
several base rates; like every sweep it is exploratory). The centre and the
initialisation and accounting cells run every schedule of
:data:`lagtheory.schedules.SCHEDULE_NAMES`; the other cells run joint, lag
and three-phase (:data:`MAIN_SCHEDULES`). Lag and lead warm up for T/4
steps; one-step and three-phase take one attention step of
``attention_lr * warm_steps`` (as far as the warm-up's steps together).

**Base rates** (:func:`calibrate`), per task, optimiser and main-grid cell,
on calibration seeds disjoint from the study's (:data:`CALIBRATION_SEEDS`):
the rate of the optimiser's coarse grid (:data:`RATE_GRIDS`) with the
smallest training loss at the end of the budget, averaged (in log) over
joint *and* lag and the calibration seeds, among the rates at which none of
these runs diverged; the one-factor cells take the centre's rate. The rule
weighs joint and lag alike and looks at no test metric, so it favours
neither.

**Metric** (:func:`capped_log_loss`): log10 of a run's held-out loss on
inputs longer than any seen in training (the mean over the test sizes above
the training range), capped at the held-out loss of the prediction 0 (a run
no better than predicting 0 counts as a failure, and so does a run that
diverged); lower is better. **Margin**: log10(1.1), a held-out loss within
10% either way. **Primary comparisons**: lag against joint, and three-phase
against joint, at the centre of the main grid of every task and optimiser
(two families, each Holm-adjusted over its cells); everything else is
exploratory. Decisions: :func:`lagtheory.experiments.paired.compare_family`.

:func:`run_study` calibrates, runs every cell of a study through the engine
(all cells of a task and optimiser in one batched loop,
:func:`lagtheory.experiments.engine.run_rows`) and returns a record
(:mod:`lagtheory.experiments.records`); ``python -m lagtheory.experiments.run
<study>`` writes it to ``book/data/summary_<study>.json``. :func:`rerun` runs
part of a stored cell again, alone, from its stored configuration.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lagtheory.schedules import SCHEDULE_NAMES

from .engine import (
    CellResult,
    Task,
    TrainingConfig,
    check_seeds,
    config_from_dict,
    config_to_dict,
    run_rows,
    total_steps,
)
from .icl import ICLSetting, ICLTask
from .language_catalogue import TASKS
from .language_runs import LanguageRuns, LanguageSetting
from .regression import RegressionSetting, RegressionTask
from .softmax_icl import SoftmaxICLSetting, SoftmaxICLTask

OPTIMISERS = ("sgd", "adam")
READOUT_SCALES = (0.01, 0.1, 0.3, 1.0, 3.0)
RATIOS = (0.1, 0.3, 1.0, 3.0, 10.0)
CENTRE = (0.3, 1.0)
"""(readout scale, attention/output ratio) of the centre of the main grid."""
ATTENTION_SCALE = 0.1
"""The attention starts i.i.d. N(0, ATTENTION_SCALE^2) except in the initialisation sweep."""
MAIN_SCHEDULES = ("joint", "lag", "three-phase")
BUDGETS = (0.25, 0.5, 2.0, 4.0)
BASE_RATE_FACTORS = (1 / math.sqrt(10), math.sqrt(10))
ATTENTION_INITS = ("zero", "preset")
SWEEPS = ("main", "attention_init", "budget", "accounting", "base_rate")
CALIBRATION_SEEDS = tuple(range(10**6, 10**6 + 5))
RATE_GRIDS: Mapping[str, tuple[float, ...]] = {
    "sgd": tuple(10.0 ** (k / 2) for k in range(-6, 5)),
    "adam": tuple(10.0 ** (k / 2) for k in range(-8, 1)),
}
"""The coarse grids of base rates, per optimiser: 1e-3..100 for SGD, 1e-4..1 for Adam (an Adam step moves every coordinate by about the rate), sqrt(10) apart."""
MARGIN = math.log10(1.1)
PRIMARY = "log10_test_loss"


@dataclass(frozen=True)
class TaskDesign:
    """A task of a study: its key ``name`` (built by the study's ``build``), its ``setting``, the step budget
    ``steps`` T of the centre and the ``batch_size``; ``description`` in words."""

    name: str
    setting: Any
    steps: int
    batch_size: int
    description: str


@dataclass(frozen=True)
class Cell:
    """One configuration of a study: ``task`` (a :class:`TaskDesign` name), ``optimiser``, the ``sweep`` it
    belongs to (:data:`SWEEPS`) and its ``level`` there, the ``schedules`` it runs, the task's ``setting`` and
    the ``training`` configuration. ``name`` is unique within the study."""

    name: str
    task: str
    optimiser: str
    sweep: str
    level: str
    schedules: tuple[str, ...]
    setting: Any
    training: TrainingConfig


@dataclass(frozen=True)
class Study:
    """A study (module docstring): ``tasks`` with ``build(task name, setting)`` making the engine task,
    ``settings`` the setting type of each task name, ``seeds`` the number of paired seeds."""

    name: str
    description: str
    tasks: tuple[TaskDesign, ...]
    build: Callable[[str, Any], Task]
    setting_types: Mapping[str, type]
    seeds: int = 30
    seeds_rule: str = "at least 30 paired seeds per cell"
    metric: str = (
        "log10 of the held-out loss above the training range, capped at the held-out loss of the prediction 0 "
        "(diverged runs count as the cap); lower is better"
    )
    primary: str = PRIMARY
    higher_is_better: bool = False
    binary: bool = False
    margin: float = MARGIN
    margin_rule: str = (
        "log10(1.1): a held-out loss within 10% of joint's either way is too small a change to matter; fixed "
        "before the runs"
    )

    def task(self, name: str) -> TaskDesign:
        """The design of the task ``name``."""
        for design in self.tasks:
            if design.name == name:
                return design
        raise ValueError(f"name must be one of {[t.name for t in self.tasks]}, got {name!r}")


def training_config(
    design: TaskDesign,
    optimiser: str,
    base_rate: float,
    readout_scale: float = CENTRE[0],
    ratio: float = CENTRE[1],
    attention_init: str = "random",
    budget: float = 1.0,
    accounting: str = "total",
) -> TrainingConfig:
    """The training configuration of a regime (module docstring)."""
    steps = round(design.steps * budget)
    warm = max(1, round(steps / 4))
    attention_lr = base_rate * math.sqrt(ratio)
    return TrainingConfig(
        steps=steps,
        attention_lr=attention_lr,
        output_lr=base_rate / math.sqrt(ratio),
        warm_steps=warm,
        big_step=attention_lr * warm,
        batch_size=design.batch_size,
        accounting=accounting,
        optimiser=optimiser,
        output_scale=readout_scale,
        attention_init=attention_init,
        attention_scale=ATTENTION_SCALE,
    )


def _number(value: float) -> str:
    return f"{value:g}"


def main_level(readout_scale: float, ratio: float) -> str:
    """The level name of a main-grid cell."""
    return f"scale={_number(readout_scale)} ratio={_number(ratio)}"


def study_cells(the_study: Study, design: TaskDesign, optimiser: str, base_rates: Mapping[str, float]) -> list[Cell]:
    """The cells of one task and optimiser (module docstring): each main-grid cell at its calibrated base
    rate (``base_rates``: level -> rate, :func:`calibrate`), the one-factor cells at the centre's, the
    base-rate cells at their ratio's."""
    cells = []

    def add(sweep: str, level: str, schedules: Sequence[str], **regime: Any) -> None:
        name = f"{design.name}/{optimiser}/{sweep}/{level}"
        training = training_config(design, optimiser, **regime)
        cells.append(Cell(name, design.name, optimiser, sweep, level, tuple(schedules), design.setting, training))

    for scale in READOUT_SCALES:
        for ratio in RATIOS:
            level = main_level(scale, ratio)
            schedules = SCHEDULE_NAMES if (scale, ratio) == CENTRE else MAIN_SCHEDULES
            add("main", level, schedules, base_rate=base_rates[level], readout_scale=scale, ratio=ratio)
    centre = base_rates[main_level(*CENTRE)]
    for init in ATTENTION_INITS:
        add("attention_init", init, SCHEDULE_NAMES, base_rate=centre, attention_init=init)
    for budget in BUDGETS:
        add("budget", f"T*{_number(budget)}", MAIN_SCHEDULES, base_rate=centre, budget=budget)
    add("accounting", "joint", SCHEDULE_NAMES, base_rate=centre, accounting="joint")
    for ratio in RATIOS:
        rate = base_rates[main_level(CENTRE[0], ratio)]
        for factor in BASE_RATE_FACTORS:
            level = f"ratio={_number(ratio)} base*{factor:.3g}"
            add("base_rate", level, MAIN_SCHEDULES, base_rate=rate * factor, readout_scale=CENTRE[0], ratio=ratio)
    return cells


def centre_name(task: str, optimiser: str) -> str:
    """The name of the centre cell of a task and optimiser."""
    return f"{task}/{optimiser}/main/{main_level(*CENTRE)}"


def capped_log_loss(test_loss: NDArray, zero_loss: NDArray) -> NDArray[np.float64]:
    """The primary metric: log10(min(test loss, zero loss)), with the zero loss for a non-finite test loss."""
    test_loss = np.asarray(test_loss, dtype=np.float64)
    zero_loss = np.asarray(zero_loss, dtype=np.float64)
    capped = np.where(np.isfinite(test_loss), np.minimum(test_loss, zero_loss), zero_loss)
    return np.log10(capped)


# -- calibration -------------------------------------------------------------------------------


def final_training_loss(losses: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per run (the last axis is the step): the mean training loss of the last tenth of the steps (NaN if
    any loss of the run is not finite)."""
    losses = np.asarray(losses, dtype=np.float64)
    tail = max(1, losses.shape[-1] // 10)
    finite = np.all(np.isfinite(losses), axis=-1)
    return np.where(finite, np.where(finite[..., None], losses, 0.0)[..., -tail:].mean(axis=-1), np.nan)


def calibrate(
    the_study: Study,
    design: TaskDesign,
    optimiser: str,
    progress: Callable[[int], None] | None = None,
    task: Task | None = None,
) -> dict[str, Any]:
    """The base rates of a task and optimiser (module docstring): every rate of the grid, joint and lag,
    every main-grid cell, the calibration seeds, in one batched run. For each main-grid cell (its level
    name) the chosen rate is the one with the smallest mean, over joint and lag and the calibration seeds,
    of log10 of the final training loss (:func:`final_training_loss`), among the rates at which none of
    these runs diverged. Returns the grid, the cells' levels, per (rate, cell) that mean (None where a run
    diverged) and the number of runs that diverged, and ``base_rates`` (level -> rate)."""
    grid = RATE_GRIDS[optimiser]
    levels = [main_level(scale, ratio) for scale in READOUT_SCALES for ratio in RATIOS]
    rows = []
    for rate in grid:
        for scale in READOUT_SCALES:
            for ratio in RATIOS:
                config = training_config(design, optimiser, rate, scale, ratio)
                rows.extend((schedule, config) for schedule in ("joint", "lag"))
    task = the_study.build(design.name, design.setting) if task is None else task
    result = run_rows(task, rows, CALIBRATION_SEEDS, progress, evaluate=False)
    final = final_training_loss(result.losses).reshape(len(grid), len(levels), -1)  # (rates, cells, runs)
    diverged = np.isnan(final).sum(axis=-1)
    with np.errstate(divide="ignore"):
        logs = np.log10(np.where(np.isnan(final), 1.0, final)).mean(axis=-1)
    mean_log = np.where(diverged == 0, logs, np.inf)
    if not np.all(np.isfinite(mean_log).any(axis=0)):
        raise ValueError(f"every rate of the grid diverged in some cell for {design.name} with {optimiser}")
    chosen = np.argmin(mean_log, axis=0)
    return {
        "rule": (
            "per main-grid cell, the grid rate with the smallest mean log10 final training loss of joint and lag "
            "over the calibration seeds, among the rates at which none of these runs diverged"
        ),
        "grid": list(grid),
        "levels": levels,
        "mean_log10_final_training_loss": [
            [float(value) if np.isfinite(value) else None for value in row] for row in mean_log
        ],
        "diverged_runs": diverged.astype(int).tolist(),
        "seeds": list(CALIBRATION_SEEDS),
        "base_rates": {level: float(grid[index]) for level, index in zip(levels, chosen, strict=True)},
    }


# -- running -----------------------------------------------------------------------------------


def rows_of(cells: Sequence[Cell]) -> list[tuple[str, TrainingConfig]]:
    """The engine rows of the cells, cell by cell, schedule by schedule."""
    return [(schedule, cell.training) for cell in cells for schedule in cell.schedules]


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
    """Calibrate and run every cell of a study: (calibrations task -> optimiser -> :func:`calibrate`'s
    result, cell name -> (cell, result), seconds per task)."""
    calibrations: dict[str, dict[str, Any]] = {}
    results: dict[str, tuple[Cell, CellResult]] = {}
    seconds: dict[str, float] = {}
    for design in the_study.tasks:
        start = time.perf_counter()
        task = the_study.build(design.name, design.setting)
        calibrations[design.name] = {}
        for optimiser in OPTIMISERS:
            calibration = calibrate(the_study, design, optimiser, progress, task)
            calibrations[design.name][optimiser] = calibration
            cells = study_cells(the_study, design, optimiser, calibration["base_rates"])
            results.update(run_cells(the_study, cells, seeds, progress, task))
        seconds[design.name] = time.perf_counter() - start
    return calibrations, results, seconds


def study_steps(the_study: Study) -> int:
    """The engine steps of :func:`run_study` (for a progress bar)."""
    return sum(
        len(OPTIMISERS) * (design.steps + engine_steps(study_cells(the_study, design, "sgd", defaultdict(lambda: 1.0))))
        for design in the_study.tasks
    )


def engine_steps(cells: Sequence[Cell]) -> int:
    """The engine steps of one batched run of these cells (for a progress bar)."""
    return max(total_steps(schedule, config) for schedule, config in rows_of(cells))


def is_centre(cell: Cell) -> bool:
    """Whether the cell is the centre of its main grid."""
    return cell.sweep == "main" and cell.level == main_level(*CENTRE)


def cell_values(result: CellResult, cell: Cell) -> dict[str, NDArray]:
    """The per-seed quantities stored for a cell, name -> (schedules, seeds, ...): the primary metric, the
    held-out loss, whether the run diverged, the displacement of each group after 10 steps, the task's
    scalar metrics, and for the centre cell also the per-size metrics and the trained parameters."""
    metrics = result.metrics
    values = {
        PRIMARY: capped_log_loss(metrics["test_loss"], metrics["zero_loss"]),
        "test_loss": metrics["test_loss"],
        "diverged": ~np.isfinite(metrics["test_loss"]),
        "attention_moved_at_10": result.traces["attention_moved"][..., min(10, result.losses.shape[-1] - 1)],
        "output_moved_at_10": result.traces["output_moved"][..., min(10, result.losses.shape[-1] - 1)],
    }
    for name in ("recognised", "horizon", "accuracy_above_training"):
        if name in metrics:
            values[name] = metrics[name]
    if is_centre(cell) or cell.sweep in ("attention_init", "accounting"):
        for name in ("accuracy", "test_errors"):
            if name in metrics:
                values[name] = metrics[name]
        values.update({f"final_{name}": value for name, value in result.final.items()})
    return values


def curves(result: CellResult) -> dict[str, NDArray]:
    """Mean over seeds of the training loss and of every trace, per schedule and step."""
    with np.errstate(invalid="ignore"):
        means = {"loss": np.nanmean(np.where(np.isnan(result.losses), np.nan, result.losses), axis=1)}
    means.update({name: trace.mean(axis=1) for name, trace in result.traces.items()})
    return means


def cell_configuration(cell: Cell) -> dict[str, Any]:
    """The full configuration of a cell, JSON-ready."""
    return {
        "cell": cell.name,
        "task": cell.task,
        "optimiser": cell.optimiser,
        "sweep": cell.sweep,
        "level": cell.level,
        "schedules": list(cell.schedules),
        "setting": config_to_dict(cell.setting),
        "training": config_to_dict(cell.training),
    }


def cell_from_configuration(the_study: Study, configuration: Mapping[str, Any]) -> Cell:
    """The :class:`Cell` of a stored configuration (:func:`cell_configuration`)."""
    return Cell(
        configuration["cell"],
        configuration["task"],
        configuration["optimiser"],
        configuration["sweep"],
        configuration["level"],
        tuple(configuration["schedules"]),
        config_from_dict(the_study.setting_types[configuration["task"]], configuration["setting"]),
        config_from_dict(TrainingConfig, configuration["training"]),
    )


def rerun(
    the_study: Study, configuration: Mapping[str, Any], schedules: Sequence[str], seeds: Sequence[int]
) -> dict[str, NDArray]:
    """Run a stored cell again, alone, for some of its schedules and seeds; its per-seed quantities
    (:func:`cell_values`)."""
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
