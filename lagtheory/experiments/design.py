"""The design of the empirical studies, stated once before the runs: for each
task, which regimes are run (the cells), the primary comparisons, and the
metric with its equivalence margin.

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
The main grid's base rates are calibrated
(:mod:`lagtheory.experiments.calibration`); the one-factor cells take the
centre's rate.

**Metric** (:func:`capped_log_loss`): log10 of a run's held-out loss on
inputs longer than any seen in training (the mean over the test sizes above
the training range), capped at the held-out loss of the prediction 0 (a run
no better than predicting 0 counts as a failure, and so does a run that
diverged); lower is better. **Margin**: log10(1.1), a held-out loss within
10% either way. **Primary comparisons**: lag against joint, and three-phase
against joint, at the centre of the main grid of every task and optimiser
(two families, each Holm-adjusted over its cells); everything else is
exploratory. Decisions: :func:`lagtheory.experiments.paired.compare_family`.

A :class:`Study` that is not this sweep (the transformer study of
:mod:`lagtheory.experiments.studies`) gives its own ``cells`` and is not calibrated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lagtheory.schedules import SCHEDULE_NAMES

from .engine import Task, TrainingConfig

OPTIMISERS = ("sgd", "adam")
READOUT_SCALES = (0.01, 0.1, 0.3, 1.0, 3.0)
"""The readout initialisation scales of the main grid."""
RATIOS = (0.1, 0.3, 1.0, 3.0, 10.0)
"""The attention/output step-size ratios of the main grid."""
CENTRE = (0.3, 1.0)
"""(readout scale, attention/output ratio) of the centre of the main grid."""
ATTENTION_SCALE = 0.1
"""The attention starts i.i.d. N(0, ATTENTION_SCALE^2) except in the initialisation sweep."""
MAIN_SCHEDULES = ("joint", "lag", "three-phase")
"""The schedules run at every cell of the main grid."""
BUDGETS = (0.25, 0.5, 2.0, 4.0)
BASE_RATE_FACTORS = (1 / math.sqrt(10), math.sqrt(10))
SWEPT_ATTENTION_INITS = ("zero", "preset")
"""The levels of the initialisation sweep (every other cell starts ``"random"``)."""
SWEEPS = ("main", "attention_init", "budget", "accounting", "base_rate", "fixed")
"""The sweeps of the sweep design, and ``"fixed"``; the cells of a study that is not a sweep."""
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


def study_cells(design: TaskDesign, optimiser: str, base_rates: Mapping[str, float]) -> list[Cell]:
    """The cells of one task and optimiser (module docstring): each main-grid cell at its calibrated base
    rate (``base_rates``: level -> rate, :func:`lagtheory.experiments.calibration.calibrate`), the one-factor cells at the centre's, the
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
    for init in SWEPT_ATTENTION_INITS:
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


@dataclass(frozen=True)
class Study:
    """A study (module docstring): ``tasks`` with ``build(task name, setting)`` making the engine task,
    ``setting_types`` the setting type of each task name, ``seeds`` the number of paired seeds;
    ``optimisers`` run per task; ``cells(design, optimiser, base_rates)`` the cells of a task and
    optimiser (the sweep :func:`study_cells` by default); ``calibrated``: whether the base rates come
    from :func:`lagtheory.experiments.calibration.calibrate` (otherwise ``cells`` gets an empty
    mapping); ``constants`` what the record stores as its design (None: the sweep's,
    :func:`lagtheory.experiments.records.design_constants`)."""

    name: str
    description: str
    tasks: tuple[TaskDesign, ...]
    build: Callable[[str, Any], Task]
    setting_types: Mapping[str, type]
    optimisers: tuple[str, ...] = OPTIMISERS
    cells: Callable[[TaskDesign, str, Mapping[str, float]], list[Cell]] = study_cells
    calibrated: bool = True
    constants: Mapping[str, Any] | None = None
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


def centre_name(task: str, optimiser: str) -> str:
    """The name of the centre cell of a task and optimiser."""
    return f"{task}/{optimiser}/main/{main_level(*CENTRE)}"


def capped_log_loss(test_loss: NDArray, zero_loss: NDArray) -> NDArray[np.float64]:
    """The primary metric: log10(min(test loss, zero loss)), with the zero loss for a non-finite test loss."""
    test_loss = np.asarray(test_loss, dtype=np.float64)
    zero_loss = np.asarray(zero_loss, dtype=np.float64)
    capped = np.where(np.isfinite(test_loss), np.minimum(test_loss, zero_loss), zero_loss)
    return np.log10(capped)


def rows_of(cells: Sequence[Cell]) -> list[tuple[str, TrainingConfig]]:
    """The engine rows of the cells, cell by cell, schedule by schedule."""
    return [(schedule, cell.training) for cell in cells for schedule in cell.schedules]


def is_centre(cell: Cell) -> bool:
    """Whether the cell is the centre of its main grid."""
    return cell.sweep == "main" and cell.level == main_level(*CENTRE)
