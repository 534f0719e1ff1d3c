"""The stages of the registered confirmatory study (``book/registration.md``): what each stage runs, and the
stage record assembled from its units. ``python -m lagtheory.experiments.run confirmatory --stage <stage>``
(:mod:`lagtheory.experiments.run`) runs one.

Stages (:data:`STAGES`; the registered section's headings in quotes; cells and runs:
:mod:`lagtheory.experiments.confirmatory.design`):

* ``grid`` ("Regimes, cells, seeds", "Runs"): the 108 cells, joint and lag (T/4) at every base rate of the
  grid under both accountings (joint once: it is the same run under both), on the 100 confirmatory seeds.
  The shared-calibrated-rate variant ("Tuning, both ways") reads these runs at the cell's
  ``shared_rate`` (the exploratory calibration's rate of the cell, LP-FT the centre's), and outcome (c)
  reads all of them.
* ``tuning`` ("Tuning, both ways"): best-vs-best tuning on the exploratory seeds 0..29, evaluated on the
  validation set (test seed + 500); the record holds every run and, per cell and accounting, the chosen
  configuration of each schedule (:mod:`lagtheory.experiments.confirmatory.tuning`). Stored apart from the
  confirmatory records (it is no confirmatory record: its seeds are exploratory).
* ``best``: the chosen configurations that the grid does not hold (lag at a warm-up of 1/8 or 1/2; joint's
  choice and lag's at 1/4 are grid runs) on the confirmatory seeds; the record lists every choice.
* ``validation`` ("The predictor"): the 216 validation cells, each at the rate the exploratory calibration
  rule (:func:`lagtheory.experiments.exploratory.calibration.calibrate`) chooses on the calibration seeds,
  joint and lag (T/4) under equal total steps, on the confirmatory seeds.

Each unit (one cell, or the cells of one task and optimiser) is the work of
:func:`lagtheory.experiments.confirmatory.runs.run_unit`, a calibration that of
:func:`lagtheory.experiments.exploratory.runner.run_unit`; every unit payload, and so its fingerprint, and
every record carry the registration hash. The trial options (seeds, tasks, optimisers, levels, steps:
:func:`plan`) run part of a stage or a shorter budget; such a record says so in its ``trial`` field and is not
the registered study.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lagtheory.schedules import ACCOUNTINGS
from lagtheory.training import OPTIMISERS

from ..exploratory.design import TaskDesign, main_level
from ..exploratory.records import config_to_dict, versions
from ..exploratory.runner import run_unit as calibration_work
from ..exploratory.runner import task_payload
from .design import (
    GRID_WARM_FRACTION,
    ConfirmatoryCell,
    Run,
    confirmatory_cells,
    confirmatory_tasks,
    grid_runs,
    shared_rates,
    tuning_runs,
    validation_levels,
    validation_setting,
)
from .registration import CONFIRMATORY_LEVELS, CONFIRMATORY_SEEDS, EXPLORATORY_SEEDS
from .runs import cell_payload, run_unit, unit_payload
from .tuning import best_runs, choose

FORMAT = "lagtheory-confirmatory-1"
"""The format of a stage record."""
STAGES = ("grid", "tuning", "best", "validation")
"""The stages, in the order they may run (the best stage reads the tuning stage's record)."""
TRIAL_OPTIONS = ("seeds", "tasks", "optimisers", "levels", "steps")
"""The options of :func:`plan` that make a run a trial."""

Execute = Callable[[Mapping[str, Any], Callable[[Any], Mapping[str, Any]], Mapping[str, int], str], Mapping[str, Any]]
"""How a stage has its units run, ``(units, work, weights, what they count) -> unit name -> result`` (the
same as :data:`lagtheory.experiments.exploratory.runner.Execute`)."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a stage runs: its tasks, optimisers, cell labels, seeds, and the trial options used.

    Attributes
    ----------
    stage : str
        One of :data:`STAGES`.
    tasks : list of (str, TaskDesign)
        (study name, task design) of the tasks run, with the budget of ``steps`` where given.
    optimisers : tuple of str
        The optimisers run.
    levels : tuple of str
        The registered cell labels run (keys of
        :data:`~lagtheory.experiments.confirmatory.registration.CONFIRMATORY_LEVELS`, in their order).
    seeds : tuple of int
        The seeds of the stage (the first ``seeds`` where given).
    trial : dict or None
        The trial options given, option -> value; None for the registered study.
    """

    stage: str
    tasks: list[tuple[str, TaskDesign]]
    optimisers: tuple[str, ...]
    levels: tuple[str, ...]
    seeds: tuple[int, ...]
    trial: dict[str, Any] | None


def plan(
    stage: str,
    seeds: int | None = None,
    tasks: Sequence[str] | None = None,
    optimisers: Sequence[str] | None = None,
    levels: Sequence[str] | None = None,
    steps: int | None = None,
) -> Plan:
    """The tasks, cells and seeds of a stage, the trial options checked against the registered design.

    Parameters
    ----------
    stage : str
        One of :data:`STAGES`.
    seeds : int, optional
        Only the first ``seeds`` seeds of the stage.
    tasks : sequence of str, optional
        Only these registered tasks.
    optimisers : sequence of str, optional
        Only these optimisers.
    levels : sequence of str, optional
        Only these registered cell labels (not for the validation stage, whose cells are its own).
    steps : int, optional
        The step budget T of every task.

    Returns
    -------
    Plan
        What the stage runs.

    Raises
    ------
    ValueError
        If ``stage`` is not a stage, ``tasks``, ``optimisers`` or ``levels`` names an unknown task, optimiser or
        label, ``levels`` is given to the validation stage, or ``seeds`` exceeds the stage's seeds (each
        message names the option, as the command line spells it).
    """
    if stage not in STAGES:
        raise ValueError(f"--stage must be one of {STAGES}, got {stage!r}")
    chosen = confirmatory_tasks()
    if tasks is not None:
        names = [design.name for _, design in chosen]
        if unknown := [name for name in tasks if name not in names]:
            raise ValueError(f"--tasks must be among {names}, got {unknown}")
        chosen = [(study, design) for study, design in chosen if design.name in tasks]
    if steps is not None:
        chosen = [(study, dataclasses.replace(design, steps=steps)) for study, design in chosen]
    if optimisers is not None and (unknown := [name for name in optimisers if name not in OPTIMISERS]):
        raise ValueError(f"--optimisers must be among {list(OPTIMISERS)}, got {unknown}")
    labels = tuple(CONFIRMATORY_LEVELS)
    if levels is not None and stage == "validation":
        raise ValueError("--levels selects registered cells; the validation stage has its own (readout x ratio) cells")
    if levels is not None:
        if unknown := [label for label in levels if label not in labels]:
            raise ValueError(f"--levels must be among {list(labels)}, got {unknown}")
        labels = tuple(label for label in labels if label in levels)
    all_seeds = EXPLORATORY_SEEDS if stage == "tuning" else CONFIRMATORY_SEEDS
    if seeds is not None and seeds > len(all_seeds):
        raise ValueError(f"--seeds must be at most {len(all_seeds)}, got {seeds}")
    options = {"seeds": seeds, "tasks": tasks, "optimisers": optimisers, "levels": levels, "steps": steps}
    trial = {
        name: list(value) if isinstance(value, tuple) else value for name, value in options.items() if value is not None
    }
    return Plan(
        stage,
        chosen,
        tuple(optimisers) if optimisers is not None else OPTIMISERS,
        labels,
        tuple(all_seeds[:seeds] if seeds is not None else all_seeds),
        trial or None,
    )


def cells_options(trial: Mapping[str, Any] | None) -> dict[str, Any]:
    """The trial options that decide the cells and their budgets (the seeds differ between stages).

    Parameters
    ----------
    trial : mapping or None
        A plan's (or a record's) trial options.

    Returns
    -------
    dict
        The options but ``seeds``.
    """
    return {key: value for key, value in (trial or {}).items() if key != "seeds"}


def selected_cells(the_plan: Plan) -> list[ConfirmatoryCell]:
    """The registered cells of the plan's tasks, optimisers and labels.

    Parameters
    ----------
    the_plan : Plan
        What the stage runs.

    Returns
    -------
    list of ConfirmatoryCell
        The cells, in :func:`~lagtheory.experiments.confirmatory.design.confirmatory_cells`' order.
    """
    cells = confirmatory_cells(the_plan.tasks, the_plan.optimisers)
    return [cell for cell in cells if cell.label in the_plan.levels]


def cell_configuration(cell: ConfirmatoryCell, design: TaskDesign, validation_set: bool) -> dict[str, Any]:
    """A cell's configuration as stored in a record.

    Parameters
    ----------
    cell : ConfirmatoryCell
        The cell.
    design : TaskDesign
        Its task.
    validation_set : bool
        Whether the cell is evaluated on the validation set (the setting stored is then that one).

    Returns
    -------
    dict
        The cell's fields with its ``name``, the task's ``setting``, ``steps`` and ``batch_size``, and
        ``validation_set``.
    """
    setting = validation_setting(design.setting) if validation_set else design.setting
    return dataclasses.asdict(cell) | {
        "name": cell.name,
        "setting": config_to_dict(setting),
        "steps": design.steps,
        "batch_size": design.batch_size,
        "validation_set": validation_set,
    }


def weights(units: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """Each unit's relative cost for the progress bar: its number of cells (a calibration counts one).

    Parameters
    ----------
    units : mapping of str to mapping
        Unit name -> payload.

    Returns
    -------
    dict of str to int
        Unit name -> weight, at least 1.
    """
    return {name: max(1, len(payload.get("cells", [1]))) for name, payload in units.items()}


def run_stage(
    the_plan: Plan,
    execute: Execute,
    registration: str,
    command: str,
    device: str = "cpu",
    tuning: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run a stage's units through ``execute`` and return its record.

    Parameters
    ----------
    the_plan : Plan
        What the stage runs (:func:`plan`).
    execute : callable
        How the units run (:data:`Execute`).
    registration : str
        The registration hash every payload and the record carry.
    command : str
        The command that writes the record, stored in it.
    device : str, optional
        Where the workers train, "cpu" (default) or "cuda".
    tuning : mapping, optional
        The best stage's tuning record (required there; checked by :func:`check_tuning`).

    Returns
    -------
    dict
        The stage record: ``format``, ``registration``, ``stage``, ``command``, ``versions``, ``seeds``,
        ``trial``, ``cells``, ``seconds`` (unit -> [wall seconds, CPU seconds of its worker]) and, by stage,
        ``choices`` (tuning, best) or ``calibration`` and ``uncalibrated`` (validation).

    Raises
    ------
    ValueError
        If the best stage is given no tuning record.
    """
    record: dict[str, Any] = {
        "format": FORMAT,
        "registration": registration,
        "stage": the_plan.stage,
        "command": command,
        "versions": versions(),
        "seeds": list(the_plan.seeds),
        "trial": the_plan.trial,
        "cells": {},
        "seconds": {},
    }
    if the_plan.stage == "validation":
        record.update(validation_stage(the_plan, execute, registration, device))
        return record
    designs = {design.name: (study, design) for study, design in the_plan.tasks}
    cells = selected_cells(the_plan)
    validation_set = the_plan.stage == "tuning"
    if the_plan.stage == "best":
        if tuning is None:
            raise ValueError("the best stage needs the tuning stage's record")
        record["choices"] = {cell.name: tuning["choices"][cell.name] for cell in cells}
        runs_of = {cell.name: best_runs(record["choices"][cell.name]) for cell in cells}
    else:
        make = grid_runs if the_plan.stage == "grid" else tuning_runs
        runs_of = {cell.name: make(cell.optimiser) for cell in cells}
    units = {
        f"{the_plan.stage}-{cell.slug}": unit_payload(
            cell.study,
            designs[cell.task][1],
            [cell_payload(cell, runs_of[cell.name])],
            the_plan.seeds,
            registration,
            validation_set,
            device,
        )
        for cell in cells
        if runs_of[cell.name]
    }
    print(f"confirmatory {the_plan.stage}: {len(units)} units, {len(the_plan.seeds)} seeds", file=sys.stderr)
    results = execute(units, run_unit, weights(units), "cell")
    rates = shared_rates(cells)
    for cell in cells:
        record["cells"][cell.name] = {
            "configuration": cell_configuration(cell, designs[cell.task][1], validation_set),
            "shared_rate": rates[cell.name],
            "runs": {},
        }
    for name, result in results.items():
        for cell_name, runs in result["cells"].items():
            record["cells"][cell_name]["runs"] = runs
        record["seconds"][name] = [result["seconds"], result["cpu_seconds"]]
    if the_plan.stage == "tuning":
        record["choices"] = {
            name: {
                f"{schedule} {accounting}": choose(entry["runs"], schedule, accounting)
                for schedule in ("joint", "lag")
                for accounting in ACCOUNTINGS
            }
            for name, entry in record["cells"].items()
        }
    return record


def check_tuning(tuning: Mapping[str, Any], registration: str, the_plan: Plan) -> None:
    """Refuse a tuning record for the best stage that is of another registration, another stage, or was run
    with other trial options for its cells.

    Parameters
    ----------
    tuning : mapping
        The tuning record.
    registration : str
        The registration hash of the best stage.
    the_plan : Plan
        The best stage's plan.

    Raises
    ------
    ValueError
        If the record is no tuning record of this registration, or its trial options for the cells differ.
    """
    if tuning.get("registration") != registration or tuning.get("stage") != "tuning":
        raise ValueError("--tuning must be a tuning record of this registration")
    if cells_options(tuning.get("trial")) != cells_options(the_plan.trial):
        raise ValueError(f"--tuning was run with trial flags {tuning.get('trial')}, this command with {the_plan.trial}")


def validation_stage(the_plan: Plan, execute: Execute, registration: str, device: str = "cpu") -> dict[str, Any]:
    """The validation stage (module docstring): calibration units, then one unit of cells per task and
    optimiser; the record's ``calibration`` and ``cells``.

    Parameters
    ----------
    the_plan : Plan
        What the stage runs (its tasks, optimisers and seeds).
    execute : callable
        How the units run (:data:`Execute`).
    registration : str
        The registration hash.
    device : str, optional
        Where the workers train.

    Returns
    -------
    dict
        ``calibration`` (task -> optimiser -> calibration), ``cells`` (cell name -> ``configuration``,
        ``calibrated_rate``, ``runs``), ``uncalibrated`` (cells left out: no calibrated rate) and ``seconds``.
    """
    levels = validation_levels()
    calibration_units = {
        f"calibration-{design.name}-{optimiser}": {
            "kind": "calibration",
            "registration": registration,
            "study": study,
            "task": task_payload(design),
            "optimiser": optimiser,
            "levels": [list(level) for level in levels],
            "keep_undefined": True,
            "device": device,
        }
        for study, design in the_plan.tasks
        for optimiser in the_plan.optimisers
    }
    print(f"confirmatory validation: {len(calibration_units)} calibrations", file=sys.stderr)
    calibrated = execute(calibration_units, calibration_work, weights(calibration_units), "calibration")
    out: dict[str, Any] = {"calibration": {}, "cells": {}, "uncalibrated": [], "seconds": {}}
    units = {}
    for study, design in the_plan.tasks:
        for optimiser in the_plan.optimisers:
            name = f"calibration-{design.name}-{optimiser}"
            calibration = calibrated[name]["calibration"]
            out["calibration"].setdefault(design.name, {})[optimiser] = calibration
            out["seconds"][name] = [calibrated[name]["seconds"], calibrated[name]["cpu_seconds"]]
            cells = []
            for scale, ratio in levels:
                level = main_level(scale, ratio)
                cell = ConfirmatoryCell(
                    study, design.name, optimiser, "validation", f"validation/{level}", scale, ratio, "random"
                )
                rate = calibration["base_rates"][level]
                if rate is None:  # no grid rate without a diverging calibration run: left out (Deviations)
                    out["uncalibrated"].append(cell.name)
                    continue
                runs = [Run("joint", rate, None, "both"), Run("lag", rate, GRID_WARM_FRACTION, "total")]
                cells.append(cell_payload(cell, runs))
                out["cells"][cell.name] = {
                    "configuration": cell_configuration(cell, design, False),
                    "calibrated_rate": rate,
                    "runs": {},
                }
            if cells:
                units[f"validation-{design.name}-{optimiser}"] = unit_payload(
                    study, design, cells, the_plan.seeds, registration, False, device
                )
    print(f"confirmatory validation: {len(units)} units of 12 cells, {len(the_plan.seeds)} seeds", file=sys.stderr)
    for name, result in execute(units, run_unit, weights(units), "cell").items():
        for cell_name, runs in result["cells"].items():
            out["cells"][cell_name]["runs"] = runs
        out["seconds"][name] = [result["seconds"], result["cpu_seconds"]]
    return out
