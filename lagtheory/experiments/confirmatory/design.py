"""The runs of the registered confirmatory study (``book/registration.md``), as data: its cells,
and which runs each stage trains in a cell.

Read from the registered section (never from the exploratory design's defaults where the two could differ):

* **Cells** ("Regimes, cells, seeds"): the nine registered tasks
  (:data:`lagtheory.experiments.confirmatory.registration.CONFIRMATORY_TASKS`) with the settings, budgets
  T and batch size 32 of their exploratory study, times SGD and Adam, times the six levels of
  :data:`lagtheory.experiments.confirmatory.registration.CONFIRMATORY_LEVELS` (the centre, readout 1 and 3 at ratio 1
  and 3, LP-FT): 108 cells (:func:`confirmatory_cells`). A cell's name is the name of the exploratory cell it
  repeats on fresh seeds (``<task>/<optimiser>/<sweep>/<level>``).
* **Grid runs** ("Runs"; :func:`grid_runs`): at every base rate of the registered grid
  (:data:`lagtheory.experiments.confirmatory.registration.RATE_GRIDS`: SGD 1e-3..1e2, 11 rates; Adam
  1e-4..1, 9 rates; attention step ``eta*sqrt(r)``, output ``eta/sqrt(r)``), joint, lag under equal
  total steps (warm-up T/4 out of the budget) and lag under equal joint-phase steps (warm-up T/4, then T
  joint steps). Joint has no warm-up, so it is the same run under both accountings (the same phases,
  :func:`lagtheory.schedules.make_schedule`): it is run once and serves both.
* **Tuning runs** ("Tuning, both ways"; :func:`tuning_runs`): joint at every grid rate, lag at every grid
  rate times the warm-up fractions 1/8, 1/4, 1/2 (:data:`~lagtheory.experiments.confirmatory.registration.WARM_FRACTIONS`)
  under both accountings, on the exploratory seeds, evaluated on the *validation* set
  (:func:`validation_setting`: the task's test set drawn from its test seed plus 500).
* **Validation cells** ("The predictor"; :func:`validation_levels`): readout 0.05, 0.5, 2, 10 times ratio
  0.5, 2, 30, attention N(0, 0.1^2), equal total steps, joint and lag (warm-up T/4).

A run's training configuration is :func:`lagtheory.experiments.exploratory.design.training_config` of its regime, with
the warm-up replaced for a fraction other than 1/4 (:func:`run_config`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lagtheory.schedules import ACCOUNTINGS
from lagtheory.training import OPTIMISERS

from ..engine.cells import TrainingConfig
from ..exploratory.design import TaskDesign, main_level, training_config
from ..exploratory.studies import STUDIES
from ..parameters import fill_doc
from ..paths import BOOK_DATA, record_path
from ..predictor.balance import VALIDATION_RATIOS, VALIDATION_SCALES
from .registration import CONFIRMATORY_LEVELS, CONFIRMATORY_TASKS, RATE_GRIDS, WARM_FRACTIONS

GRID_WARM_FRACTION = 0.25
"""Lag's warm-up in the grid runs and the shared-rate variant, as a fraction of the budget (T/4)."""
VALIDATION_SEED_OFFSET = 500
"""The validation set of the tuning runs is drawn from the task's test seed plus this."""


def confirmatory_tasks() -> list[tuple[str, TaskDesign]]:
    """(study name, task design) of the nine registered tasks
    (:data:`~lagtheory.experiments.confirmatory.registration.CONFIRMATORY_TASKS`, in its order), each design
    taken from its exploratory study by name: a task a study gains later is not a confirmatory task.

    Returns
    -------
    list of (str, TaskDesign)
        The registered tasks, each with the name of its study.

    Raises
    ------
    KeyError
        If a study no longer has a registered task (naming both).
    """
    tasks = []
    for study, names in CONFIRMATORY_TASKS.items():
        designs = {design.name: design for design in STUDIES[study].tasks}
        for name in names:
            if name not in designs:
                raise KeyError(f"the registered task {name!r} is no longer a task of the study {study!r}")
            tasks.append((study, designs[name]))
    return tasks


@fill_doc
@dataclass(frozen=True)
class ConfirmatoryCell:
    """A confirmatory cell: the ``study`` and ``task`` of its task, ``optimiser``, its registered ``label``
    (a key of :data:`~lagtheory.experiments.confirmatory.registration.CONFIRMATORY_LEVELS`), the exploratory cell it
    repeats (``exploratory``, "<sweep>/<level>"), and its regime.

    Attributes
    ----------
    study : str
        The exploratory study of the task (a key of
        :data:`~lagtheory.experiments.confirmatory.registration.CONFIRMATORY_TASKS`).
    task : str
        The task's name (a :class:`~lagtheory.experiments.exploratory.design.TaskDesign` name).
    %(optimiser)s
    label : str
        The registered level, a key of :data:`~lagtheory.experiments.confirmatory.registration.CONFIRMATORY_LEVELS`.
    exploratory : str
        The exploratory cell it repeats, "<sweep>/<level>" (the level's value there).
    readout_scale : float
        The readout initialisation scale of the regime.
    ratio : float
        The attention/output step-size ratio r of the regime.
    attention_init : str
        The attention initialisation: "random", or "preset" for LP-FT.
    """

    study: str
    task: str
    optimiser: str
    label: str
    exploratory: str
    readout_scale: float
    ratio: float
    attention_init: str

    @property
    def name(self) -> str:
        """``<task>/<optimiser>/<sweep>/<level>``, the name of the exploratory cell it repeats."""
        return f"{self.task}/{self.optimiser}/{self.exploratory}"

    @property
    def slug(self) -> str:
        """The name as a file name (no '/' or spaces)."""
        return self.name.replace("/", "-").replace(" ", "-")


def regime_of(exploratory: str) -> tuple[float, float, str]:
    """(readout scale, ratio, attention initialisation) of an exploratory cell "<sweep>/<level>" of
    :data:`~lagtheory.experiments.confirmatory.registration.CONFIRMATORY_LEVELS`; LP-FT ("attention_init/preset") is the
    centre's readout and ratio with the attention preset.

    Parameters
    ----------
    exploratory : str
        "main/scale=S ratio=R" with S, R as :func:`lagtheory.experiments.exploratory.design.main_level` writes them, or
        "attention_init/preset".

    Returns
    -------
    tuple of (float, float, str)
        The readout scale, the ratio and the attention initialisation ("random", or "preset" for LP-FT).

    Raises
    ------
    ValueError
        If ``exploratory`` has neither form (a "main/" level that is not written as ``main_level`` writes it).
    KeyError
        If a "main/" level of "key=value" parts lacks ``scale`` or ``ratio``.
    """
    sweep, _, level = exploratory.partition("/")
    if sweep == "attention_init" and level == "preset":
        return 0.3, 1.0, "preset"
    if sweep == "main":
        fields = dict(part.split("=") for part in level.split())
        scale, ratio = float(fields["scale"]), float(fields["ratio"])
        if main_level(scale, ratio) == level:
            return scale, ratio, "random"
    raise ValueError(f"exploratory must be 'main/scale=S ratio=R' or 'attention_init/preset', got {exploratory!r}")


def confirmatory_cells(
    tasks: Sequence[tuple[str, TaskDesign]] | None = None, optimisers: Sequence[str] = OPTIMISERS
) -> list[ConfirmatoryCell]:
    """The registered cells: every task (default :func:`confirmatory_tasks`) and optimiser times the six levels
    of :data:`~lagtheory.experiments.confirmatory.registration.CONFIRMATORY_LEVELS` (108 by default).

    Parameters
    ----------
    tasks : sequence of (str, TaskDesign), optional
        (study name, task design) of the tasks; None (default): :func:`confirmatory_tasks`.
    optimisers : sequence of str, optional
        Optimisers among "sgd" and "adam" (``OPTIMISERS`` of :mod:`lagtheory.experiments.exploratory.design`; default: both).

    Returns
    -------
    list of ConfirmatoryCell
        Per task, per optimiser, the six levels in the registered order.

    Raises
    ------
    ValueError
        If an optimiser is neither "sgd" nor "adam" (checked when there is a task).
    """
    tasks = confirmatory_tasks() if tasks is None else tasks
    cells = []
    for study, design in tasks:
        for optimiser in optimisers:
            if optimiser not in OPTIMISERS:
                raise ValueError(f"optimisers must be among {OPTIMISERS}, got {optimiser!r}")
            for label, exploratory in CONFIRMATORY_LEVELS.items():
                scale, ratio, init = regime_of(exploratory)
                cells.append(ConfirmatoryCell(study, design.name, optimiser, label, exploratory, scale, ratio, init))
    return cells


@dataclass(frozen=True)
class Run:
    """One run of a cell (all its seeds): ``schedule`` "joint" or "lag" at ``base_rate``, lag's warm-up
    ``warm_fraction`` of the budget (None for joint), under ``accounting`` ("total" or "joint"); joint's
    run serves both accountings (``accounting`` "both").

    Attributes
    ----------
    schedule : str
        "joint" or "lag".
    base_rate : float
        The base rate eta, positive (attention step ``eta*sqrt(r)``, output ``eta/sqrt(r)``).
    warm_fraction : float or None
        Lag's warm-up as a fraction of the budget, in (0, 1); None for joint.
    accounting : str
        "total" (equal total steps) or "joint" (equal joint-phase steps) for lag; "both" for joint.

    Raises
    ------
    ValueError
        If ``schedule`` is neither "joint" nor "lag", a joint run has a ``warm_fraction`` or an accounting
        other than "both", a lag run's ``warm_fraction`` is not in (0, 1) or its accounting is not in
        :data:`~lagtheory.schedules.ACCOUNTINGS`, or ``base_rate`` is not positive.
    """

    schedule: str
    base_rate: float
    warm_fraction: float | None
    accounting: str

    def __post_init__(self) -> None:
        if self.schedule == "joint":
            if self.warm_fraction is not None or self.accounting != "both":
                raise ValueError("a joint run has warm_fraction None and accounting 'both'")
        elif self.schedule == "lag":
            if self.warm_fraction is None or not 0 < self.warm_fraction < 1 or self.accounting not in ACCOUNTINGS:
                raise ValueError(
                    f"a lag run needs warm_fraction in (0, 1) and accounting in {ACCOUNTINGS}, got "
                    f"{self.warm_fraction!r}, {self.accounting!r}"
                )
        else:
            raise ValueError(f"schedule must be 'joint' or 'lag', got {self.schedule!r}")
        if not self.base_rate > 0:
            raise ValueError(f"base_rate must be positive, got {self.base_rate!r}")

    @property
    def key(self) -> str:
        """``joint rate=<r>`` or ``lag rate=<r> warm=<f> accounting=<a>`` (rates and fractions by ``%g``)."""
        if self.schedule == "joint":
            return f"joint rate={self.base_rate:g}"
        return f"lag rate={self.base_rate:g} warm={self.warm_fraction:g} accounting={self.accounting}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return dataclasses.asdict(self)


def run_config(design: TaskDesign, cell: ConfirmatoryCell, run: Run) -> TrainingConfig:
    """The training configuration of ``run`` in ``cell``: :func:`lagtheory.experiments.exploratory.design.training_config`
    of the cell's regime at the run's base rate, the warm-up ``max(1, round(T * fraction))`` steps for a lag
    run whose fraction is not 1/4, and the run's accounting (a joint run: "total", the same phases).

    Parameters
    ----------
    design : TaskDesign
        The cell's task (its budget T, batch size and setting).
    cell : ConfirmatoryCell
        The cell (its optimiser and regime).
    run : Run
        The run (its base rate, warm-up fraction and accounting).

    Returns
    -------
    TrainingConfig
        The run's training configuration.
    """
    config = training_config(
        design,
        cell.optimiser,
        run.base_rate,
        readout_scale=cell.readout_scale,
        ratio=cell.ratio,
        attention_init=cell.attention_init,
        accounting="total" if run.accounting == "both" else run.accounting,
    )
    if run.warm_fraction is not None and run.warm_fraction != GRID_WARM_FRACTION:
        warm = max(1, round(config.steps * run.warm_fraction))
        config = dataclasses.replace(config, warm_steps=warm, big_step=config.attention_lr * warm)
    return config


def grid_runs(optimiser: str) -> list[Run]:
    """The grid stage's runs of a cell (module docstring): per rate of ``RATE_GRIDS[optimiser]`` joint, lag
    (T/4) under equal total steps and lag (T/4) under equal joint-phase steps.

    Parameters
    ----------
    optimiser : str
        A key of :data:`~lagtheory.experiments.confirmatory.registration.RATE_GRIDS` ("sgd" or "adam").

    Returns
    -------
    list of Run
        Three runs per grid rate (33 for SGD, 27 for Adam).

    Raises
    ------
    KeyError
        If ``optimiser`` has no rate grid.
    """
    runs = []
    for rate in RATE_GRIDS[optimiser]:
        runs.append(Run("joint", rate, None, "both"))
        runs.extend(Run("lag", rate, GRID_WARM_FRACTION, accounting) for accounting in ACCOUNTINGS)
    return runs


def tuning_runs(optimiser: str) -> list[Run]:
    """The tuning stage's runs of a cell: per grid rate joint, and lag at every warm-up fraction of
    :data:`~lagtheory.experiments.confirmatory.registration.WARM_FRACTIONS` under both accountings.

    Parameters
    ----------
    optimiser : str
        A key of :data:`~lagtheory.experiments.confirmatory.registration.RATE_GRIDS` ("sgd" or "adam").

    Returns
    -------
    list of Run
        Seven runs per grid rate (77 for SGD, 63 for Adam).

    Raises
    ------
    KeyError
        If ``optimiser`` has no rate grid.
    """
    runs = []
    for rate in RATE_GRIDS[optimiser]:
        runs.append(Run("joint", rate, None, "both"))
        runs.extend(Run("lag", rate, fraction, accounting) for fraction in WARM_FRACTIONS for accounting in ACCOUNTINGS)
    return runs


def validation_setting(setting: Any) -> Any:
    """The task setting with its test set drawn from the test seed plus 500 (the tuning's validation set).

    Parameters
    ----------
    setting : object
        A task setting: a dataclass with an integer field ``test_seed``.

    Returns
    -------
    object
        A copy with ``test_seed`` raised by :data:`VALIDATION_SEED_OFFSET`.
    """
    return dataclasses.replace(setting, test_seed=setting.test_seed + VALIDATION_SEED_OFFSET)


def validation_levels() -> list[tuple[float, float]]:
    """(readout scale, ratio) of the predictor's validation cells of one task and optimiser (12).

    Returns
    -------
    list of (float, float)
        :data:`~lagtheory.experiments.predictor.balance.VALIDATION_SCALES` times
        :data:`~lagtheory.experiments.predictor.balance.VALIDATION_RATIOS` (the cells whose predictions were
        committed before they ran), readout scale outer.
    """
    return [(scale, ratio) for scale in VALIDATION_SCALES for ratio in VALIDATION_RATIOS]


def shared_rates(cells: Sequence[ConfirmatoryCell], folder: Path = BOOK_DATA) -> dict[str, float]:
    """The shared calibrated rate of each cell ("Tuning, both ways"): the exploratory calibration's rate of its
    main-grid cell in ``folder/summary_<study>.json``; LP-FT takes the centre's.

    Parameters
    ----------
    cells : sequence of ConfirmatoryCell
        The cells.
    folder : pathlib.Path, optional
        Where the exploratory records are (default ``book/data``, relative to the working directory).

    Returns
    -------
    dict of str to float
        Cell name -> its shared calibrated base rate.

    Raises
    ------
    FileNotFoundError
        If a cell's study has no record in ``folder``.
    KeyError
        If the record has no calibrated rate of a cell's task, optimiser and level.
    TypeError
        If the calibration left the cell's level without a rate (stored as null).
    """
    records: dict[str, Any] = {}
    rates = {}
    for cell in cells:
        if cell.study not in records:
            records[cell.study] = json.loads(record_path(cell.study, folder).read_text())["calibration"]
        base = records[cell.study][cell.task][cell.optimiser]["base_rates"]
        rates[cell.name] = float(base[main_level(cell.readout_scale, cell.ratio)])
    return rates
