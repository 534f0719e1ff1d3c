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
:data:`COMPARED_SCHEDULES`; the other cells run joint, lag
and three-phase (:data:`MAIN_SCHEDULES`). Lag and lead warm up for T/4
steps; one-step and three-phase take one attention step of
``attention_lr * warm_steps`` (as far as the warm-up's steps together).
The main grid's base rates are calibrated
(:mod:`lagtheory.experiments.exploratory.calibration`); the one-factor cells take the
centre's rate.

**Metric** (:func:`capped_log_loss`): log10 of a run's held-out loss on
inputs longer than any seen in training (the mean over the test sizes above
the training range), capped at the held-out loss of the prediction 0 (a run
no better than predicting 0 counts as a failure, and so does a run that
diverged); lower is better. **Margin**: log10(1.1), a held-out loss within
10% either way. **Primary comparisons**: lag against joint, and three-phase
against joint, at the centre of the main grid of every task and optimiser
(two families, each Holm-adjusted over its cells); everything else is
exploratory. Decisions: :func:`lagtheory.experiments.statistics.paired.compare_family`.

A :class:`Study` that is not this sweep (the transformer study of
:mod:`lagtheory.experiments.exploratory.studies`) gives its own ``cells`` and is not calibrated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lagtheory.schedules import BOOK_SCHEDULES
from lagtheory.training import OPTIMISERS

from ..engine.cells import Task, TrainingConfig
from ..parameters import fill_doc

READOUT_SCALES = (0.01, 0.1, 0.3, 1.0, 3.0)
"""The readout initialisation scales of the main grid."""
RATIOS = (0.1, 0.3, 1.0, 3.0, 10.0)
"""The attention/output step-size ratios of the main grid."""
CENTRE = (0.3, 1.0)
"""(readout scale, attention/output ratio) of the centre of the main grid."""
ATTENTION_SCALE = 0.1
"""The attention starts i.i.d. N(0, ATTENTION_SCALE^2) except in the initialisation sweep."""
COMPARED_SCHEDULES = BOOK_SCHEDULES
"""The schedules the exploratory studies compare, at the centre and in the initialisation and accounting
sweeps (the book's fixed :data:`lagtheory.schedules.BOOK_SCHEDULES`): part of the design their records were run
with, so a change here contradicts them (``tests/test_design_records.py``); the package may offer more
(:data:`lagtheory.schedules.AVAILABLE_SCHEDULES`)."""
MAIN_SCHEDULES = ("joint", "lag", "three-phase")
"""The schedules run at every cell of the main grid."""
BUDGETS = (0.25, 0.5, 2.0, 4.0)
BASE_RATE_FACTORS = (1 / math.sqrt(10), math.sqrt(10))
SWEPT_ATTENTION_INITS = ("zero", "preset")
"""The levels of the initialisation sweep (every other cell starts ``"random"``)."""
SWEEPS = ("main", "attention_init", "budget", "accounting", "base_rate", "fixed")
"""The sweeps of the sweep design, and ``"fixed"``; the cells of a study that is not a sweep."""
MARGIN = math.log10(1.1)
ALPHA = 0.05
"""The level of the exploratory tests, applied to Holm-adjusted p-values."""
PRIMARY = "log10_test_loss"


@dataclass(frozen=True)
class TaskDesign:
    """A task of a study: its key ``name`` (built by the study's ``build``), its ``setting``, the step budget
    ``steps`` T of the centre and the ``batch_size``; ``description`` in words.

    Attributes
    ----------
    name : str
        The task's key.
    setting : object
        The task's setting (its type given by the study's ``setting_types``).
    steps : int
        The step budget T of the centre.
    batch_size : int
        Examples per step.
    description : str
        The task in words.
    """

    name: str
    setting: Any
    steps: int
    batch_size: int
    description: str


@fill_doc
@dataclass(frozen=True)
class Cell:
    """One configuration of a study: ``task`` (a :class:`TaskDesign` name), ``optimiser``, the ``sweep`` it
    belongs to (:data:`SWEEPS`) and its ``level`` there, the ``schedules`` it runs, the task's ``setting`` and
    the ``training`` configuration. ``name`` is unique within the study.

    Attributes
    ----------
    name : str
        ``task/optimiser/sweep/level``, unique within the study.
    task : str
        A :class:`TaskDesign` name.
    %(optimiser)s
    sweep : str
        One of :data:`SWEEPS`.
    level : str
        The cell's level within its sweep.
    schedules : tuple of str
        The schedules the cell runs.
    setting : object
        The task's setting.
    training : TrainingConfig
        How every schedule of the cell is trained.
    """

    name: str
    task: str
    optimiser: str
    sweep: str
    level: str
    schedules: tuple[str, ...]
    setting: Any
    training: TrainingConfig


@fill_doc
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
    """The training configuration of a regime (module docstring).

    Parameters
    ----------
    design : TaskDesign
        Gives the centre's budget T and the batch size.
    %(optimiser)s
    base_rate : float
        The geometric mean of the two step sizes, finite and > 0.
    readout_scale : float, optional
        The standard deviation of the readout's initial draws (default the centre's, 0.3).
    ratio : float, optional
        The attention/output step-size ratio r > 0: attention ``base_rate * sqrt(r)``,
        output ``base_rate / sqrt(r)`` (default 1).
    attention_init : {"random", "zero", "preset"}, optional
        The attention's initialisation.
    budget : float, optional
        The step budget as a multiple of T (the steps are ``round(T * budget)``); lag and
        lead warm up for a quarter of them.
    accounting : {"total", "joint"}, optional
        The step accounting.

    Returns
    -------
    TrainingConfig
        The configuration; it raises ValueError or TypeError as
        :class:`~lagtheory.experiments.engine.config.TrainingConfig` does
        when a value is out of range.
    """
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
    """The level name of a main-grid cell.

    Parameters
    ----------
    readout_scale : float
        The readout initialisation scale.
    ratio : float
        The attention/output step-size ratio.

    Returns
    -------
    str
        ``"scale=<readout_scale> ratio=<ratio>"``, numbers in ``%g`` form.
    """
    return f"scale={_number(readout_scale)} ratio={_number(ratio)}"


@fill_doc
def study_cells(design: TaskDesign, optimiser: str, base_rates: Mapping[str, float]) -> list[Cell]:
    """The cells of one task and optimiser (module docstring): each main-grid cell at its calibrated base
    rate (``base_rates``: level -> rate, :func:`lagtheory.experiments.exploratory.calibration.calibrate`), the one-factor cells at the centre's, the
    base-rate cells at their ratio's.

    Parameters
    ----------
    %(task_design)s
    %(optimiser)s
    base_rates : mapping of str to float
        Main-grid level (:func:`main_level`) -> calibrated base rate; every level of the grid.

    Returns
    -------
    list of Cell
        The main grid, then the initialisation, budget, accounting and base-rate sweeps.
    """
    cells = []

    def add(sweep: str, level: str, schedules: Sequence[str], **regime: Any) -> None:
        name = f"{design.name}/{optimiser}/{sweep}/{level}"
        training = training_config(design, optimiser, **regime)
        cells.append(Cell(name, design.name, optimiser, sweep, level, tuple(schedules), design.setting, training))

    for scale in READOUT_SCALES:
        for ratio in RATIOS:
            level = main_level(scale, ratio)
            schedules = COMPARED_SCHEDULES if (scale, ratio) == CENTRE else MAIN_SCHEDULES
            add("main", level, schedules, base_rate=base_rates[level], readout_scale=scale, ratio=ratio)
    centre = base_rates[main_level(*CENTRE)]
    for init in SWEPT_ATTENTION_INITS:
        add("attention_init", init, COMPARED_SCHEDULES, base_rate=centre, attention_init=init)
    for budget in BUDGETS:
        add("budget", f"T*{_number(budget)}", MAIN_SCHEDULES, base_rate=centre, budget=budget)
    add("accounting", "joint", COMPARED_SCHEDULES, base_rate=centre, accounting="joint")
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
    from :func:`lagtheory.experiments.exploratory.calibration.calibrate` (otherwise ``cells`` gets an empty
    mapping); ``constants`` what the record stores as its design (None: the sweep's,
    :func:`lagtheory.experiments.exploratory.entries.design_constants`).

    Attributes
    ----------
    name : str
        The study's key.
    description : str
        The study in words.
    tasks : tuple of TaskDesign
        Its tasks.
    build : callable
        ``build(task name, setting)`` makes the engine :class:`~lagtheory.experiments.engine.cells.Task`.
    setting_types : mapping of str to type
        The setting type of each task name.
    optimisers : tuple of str, optional
        The optimisers run per task.
    cells : callable, optional
        ``cells(design, optimiser, base_rates)``, the cells of a task and optimiser
        (default :func:`study_cells`).
    calibrated : bool, optional
        Whether the base rates come from calibration (otherwise ``cells`` gets an empty mapping).
    constants : mapping or None, optional
        What the record stores as its design (None: the sweep's).
    seeds : int, optional
        The number of paired seeds per cell.
    seeds_rule : str, optional
        The rule behind ``seeds``, in words.
    metric : str, optional
        The primary metric, in words.
    primary : str, optional
        The key of the primary metric among the metrics of a run.
    higher_is_better : bool, optional
        The metric's direction.
    binary : bool, optional
        Whether the metric is a success indicator (0 or 1) rather than continuous.
    margin : float, optional
        The equivalence margin on the metric's scale.
    margin_rule : str, optional
        Why the margin, in words.
    """

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
        """The design of the task ``name``.

        Parameters
        ----------
        name : str
            A task name of ``tasks``.

        Returns
        -------
        TaskDesign
            Its design.

        Raises
        ------
        ValueError
            If no task has that name.
        """
        for design in self.tasks:
            if design.name == name:
                return design
        raise ValueError(f"name must be one of {[t.name for t in self.tasks]}, got {name!r}")


@fill_doc
def centre_name(task: str, optimiser: str) -> str:
    """The name of the centre cell of a task and optimiser.

    Parameters
    ----------
    task : str
        The task name.
    %(optimiser)s

    Returns
    -------
    str
        ``task/optimiser/main/<centre level>``.
    """
    return f"{task}/{optimiser}/main/{main_level(*CENTRE)}"


def capped_log_loss(test_loss: NDArray, zero_loss: NDArray) -> NDArray[np.float64]:
    """The primary metric: ``log10(min(test loss, zero loss))``, with the zero loss for a non-finite test loss.

    Parameters
    ----------
    test_loss : array_like
        Held-out losses of runs (NaN or infinite for a run that diverged).
    zero_loss : array_like
        The held-out loss of the prediction 0, > 0, broadcast against ``test_loss``.

    Returns
    -------
    ndarray
        float64, the broadcast shape.
    """
    test_loss = np.asarray(test_loss, dtype=np.float64)
    zero_loss = np.asarray(zero_loss, dtype=np.float64)
    capped = np.where(np.isfinite(test_loss), np.minimum(test_loss, zero_loss), zero_loss)
    return np.log10(capped)


def rows_of(cells: Sequence[Cell]) -> list[tuple[str, TrainingConfig]]:
    """The engine rows of the cells, cell by cell, schedule by schedule.

    Parameters
    ----------
    cells : sequence of Cell
        The cells.

    Returns
    -------
    list of tuple of (str, TrainingConfig)
        (schedule, configuration) per row, for :func:`~lagtheory.experiments.engine.cells.run_rows`.
    """
    return [(schedule, cell.training) for cell in cells for schedule in cell.schedules]


def is_centre(cell: Cell) -> bool:
    """Whether the cell is the centre of its main grid.

    Parameters
    ----------
    cell : Cell
        The cell.

    Returns
    -------
    bool
        True for the main sweep's level at :data:`CENTRE`.
    """
    return cell.sweep == "main" and cell.level == main_level(*CENTRE)
