"""The runner of the exploratory studies (:mod:`lagtheory.experiments.exploratory.studies`): a study's units,
their work, the record they make, and the seeded re-run of stored runs.

:func:`run_study` calibrates (where the study is calibrated) and runs every cell of a study through the
engine (all cells of a task and optimiser in one batched loop, :func:`lagtheory.experiments.engine.cells.run_rows`)
and returns its record (:mod:`lagtheory.experiments.exploratory.records`); ``python -m
lagtheory.experiments.run <study>`` runs those batches as units of :mod:`lagtheory.experiments.engine.distributed`
and writes the record. A calibration unit (:func:`run_unit`) is the one calibration work of both layers: the
confirmatory study's validation stage sends its own. :func:`rerun` runs part of a stored cell again, alone,
from its stored configuration, and :func:`reproduce` compares a seeded sample of a record's runs with it.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from numpy.typing import NDArray

from ..engine.cells import CellResult, Task, check_seeds, run_rows
from ..engine.distributed import run_units_serially
from ..parameters import fill_doc
from .calibration import calibrate
from .design import Cell, Study, TaskDesign, rows_of
from .entries import cell_entry, cell_values, study_record
from .records import cell_from_configuration, config_from_dict, config_to_dict, mismatches, reproduction_sample
from .studies import study


@fill_doc
def run_cells(
    the_study: Study,
    cells: Sequence[Cell],
    seeds: Sequence[int],
    progress: Callable[[int], None] | None = None,
    task: Task | None = None,
    device: str = "cpu",
) -> dict[str, tuple[Cell, CellResult]]:
    """Run cells of one task and optimiser in one batched loop.

    Parameters
    ----------
    the_study : Study
        The study.
    cells : sequence of Cell
        A non-empty sequence of cells of one task, optimiser and batch size.
    seeds : sequence of int
        Distinct integers >= 0.
    %(progress)s
    task : Task, optional
        The engine task, if already built.
    device : str, optional
        Where the engine trains.

    Returns
    -------
    dict of str to tuple of (Cell, CellResult)
        Cell name -> (cell, its result).

    Raises
    ------
    ValueError
        If ``cells`` is empty or mixes tasks, optimisers or batch sizes, or the seeds are invalid.
    """
    seeds = check_seeds(seeds)
    if not cells or len({(cell.task, cell.optimiser, cell.training.batch_size) for cell in cells}) != 1:
        raise ValueError("cells must be a non-empty list of cells of one task and optimiser")
    task = the_study.build(cells[0].task, cells[0].setting) if task is None else task
    result = run_rows(task, rows_of(cells), seeds, progress, device=device)
    results = {}
    start = 0
    for cell in cells:
        rows = list(range(start, start + len(cell.schedules)))
        results[cell.name] = (cell, result.subset(rows))
        start += len(cell.schedules)
    return results


Execute = Callable[[Mapping[str, Any], Callable[[Any], Mapping[str, Any]], Mapping[str, int], str], Mapping[str, Any]]
"""How :func:`run_study` has units run; ``(units, work, weights, what they count) -> unit name -> result``;
:func:`serially` here, or :func:`lagtheory.experiments.engine.distributed.run_units` on a cluster."""


def serially(
    units: Mapping[str, Any], work: Callable[[Any], Mapping[str, Any]], weights: Mapping[str, int], unit: str
) -> dict[str, dict[str, Any]]:
    """Every unit in this process, one after the other (:func:`lagtheory.experiments.engine.distributed.run_units_serially`).

    Parameters
    ----------
    units : mapping of str to object
        Unit name -> payload.
    work : callable
        ``work(payload)``, the unit's result.
    weights : mapping of str to int
        Unit name -> its relative cost (not used here).
    unit : str
        What the units count, for progress messages (not used here).

    Returns
    -------
    dict of str to dict
        Unit name -> result.
    """
    return run_units_serially(units, work)


def task_payload(design: TaskDesign) -> dict[str, Any]:
    """A task design as JSON-ready data (its setting by :func:`lagtheory.experiments.engine.config.config_to_dict`).

    Parameters
    ----------
    design : TaskDesign
        The task design.

    Returns
    -------
    dict
        ``name``, ``setting``, ``steps``, ``batch_size`` and ``description``.
    """
    return {
        "name": design.name,
        "setting": config_to_dict(design.setting),
        "steps": design.steps,
        "batch_size": design.batch_size,
        "description": design.description,
    }


def design_of(the_study: Study, payload: Mapping[str, Any]) -> TaskDesign:
    """The :class:`~lagtheory.experiments.exploratory.design.TaskDesign` of :func:`task_payload`'s output.

    Parameters
    ----------
    the_study : Study
        The study. Its ``setting_types`` give the setting's type.
    payload : mapping
        The output of :func:`task_payload`.

    Returns
    -------
    TaskDesign
        The design.
    """
    name = payload["name"]
    setting = config_from_dict(the_study.setting_types[name], payload["setting"])
    return TaskDesign(name, setting, payload["steps"], payload["batch_size"], payload["description"])


def calibration_units(the_study: Study, device: str = "cpu") -> dict[str, dict[str, Any]]:
    """The calibration of every task and optimiser of a calibrated study as units (none otherwise): name
    ``calibration-<task>-<optimiser>`` -> payload for :func:`run_unit`.

    Parameters
    ----------
    the_study : Study
        The study.
    device : str, optional
        Where the engine trains.

    Returns
    -------
    dict of str to dict
        Unit name -> payload; empty for a study that is not calibrated.
    """
    if not the_study.calibrated:
        return {}
    return {
        f"calibration-{design.name}-{optimiser}": {
            "kind": "calibration",
            "study": the_study.name,
            "task": task_payload(design),
            "optimiser": optimiser,
            "device": device,
        }
        for design in the_study.tasks
        for optimiser in the_study.optimisers
    }


def cell_units(
    the_study: Study, seeds: Sequence[int], calibrations: Mapping[str, Mapping[str, Any]], device: str = "cpu"
) -> dict[str, dict[str, Any]]:
    """The cells of every task and optimiser as units, one per batched engine call (all cells of a task and
    optimiser, as the serial run batches them): name ``cells-<task>-<optimiser>`` -> payload for
    :func:`run_unit`, with the calibrated base rates.

    Parameters
    ----------
    the_study : Study
        The study.
    seeds : sequence of int
        Distinct integers >= 0.
    calibrations : mapping
        Task -> optimiser -> :func:`~lagtheory.experiments.exploratory.calibration.calibrate`'s result (unused
        for a study that is not calibrated).
    device : str, optional
        Where the engine trains.

    Returns
    -------
    dict of str to dict
        Unit name -> payload.

    Raises
    ------
    ValueError
        If the seeds are invalid.
    """
    seeds = list(check_seeds(seeds))
    return {
        f"cells-{design.name}-{optimiser}": {
            "kind": "cells",
            "study": the_study.name,
            "task": task_payload(design),
            "optimiser": optimiser,
            "seeds": seeds,
            "base_rates": dict(calibrations[design.name][optimiser]["base_rates"]) if the_study.calibrated else {},
            "device": device,
        }
        for design in the_study.tasks
        for optimiser in the_study.optimisers
    }


def run_unit(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The work of one unit (:func:`calibration_units`, :func:`cell_units`, and the confirmatory validation
    stage's calibrations), JSON-ready: ``calibration`` (:func:`lagtheory.experiments.exploratory.calibration.calibrate`'s
    result, at the payload's ``levels`` where it gives them, a cell with no rate kept as None where it says
    ``keep_undefined``) or ``cells`` (cell name -> :func:`lagtheory.experiments.exploratory.entries.cell_entry`),
    ``seconds`` its wall time and ``cpu_seconds`` this process's CPU time; a payload's ``registration`` hash is
    returned with the result. The study's ``build`` and ``cells`` are those of
    :data:`~lagtheory.experiments.exploratory.studies.STUDIES` under the payload's study name; the task design
    (setting, steps, batch size) is the payload's own.

    Parameters
    ----------
    payload : mapping
        A payload of :func:`calibration_units` or :func:`cell_units` (or a calibration payload with ``levels``,
        ``keep_undefined`` and ``registration``).

    Returns
    -------
    dict
        ``calibration`` or ``cells``, ``seconds``, ``cpu_seconds`` (and ``registration``).

    Raises
    ------
    ValueError
        If the payload's kind is neither ``"calibration"`` nor ``"cells"``, or its study is unknown.
    """
    start, cpu = time.perf_counter(), time.process_time()
    the_study = study(payload["study"])
    design = design_of(the_study, payload["task"])
    task = the_study.build(design.name, design.setting)
    if payload["kind"] == "calibration":
        levels = payload.get("levels")
        found: dict[str, Any] = {
            "calibration": calibrate(
                the_study,
                design,
                payload["optimiser"],
                task=task,
                device=payload["device"],
                levels=None if levels is None else [tuple(level) for level in levels],
                keep_undefined=payload.get("keep_undefined", False),
            )
        }
    elif payload["kind"] == "cells":
        cells = the_study.cells(design, payload["optimiser"], payload["base_rates"])
        results = run_cells(the_study, cells, payload["seeds"], task=task, device=payload["device"])
        found = {"cells": {name: cell_entry(cell, result) for name, (cell, result) in results.items()}}
    else:
        raise ValueError(f"payload kind must be 'calibration' or 'cells', got {payload['kind']!r}")
    if "registration" in payload:
        found["registration"] = payload["registration"]
    return found | {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu}


def run_study(
    the_study: Study, seeds: Sequence[int], command: str, execute: Execute = serially, device: str = "cpu"
) -> dict[str, Any]:
    """Calibrate (a calibrated study) and run every cell of a study; its record
    (:func:`lagtheory.experiments.exploratory.entries.study_record`, written by ``command``).

    The work is done in units (:func:`calibration_units`, then :func:`cell_units` with the chosen base
    rates), each by :func:`run_unit`, through ``execute``: :func:`serially`, or on a dask cluster
    (:mod:`lagtheory.experiments.run`). A unit depends only on its payload, so the record is the same
    whichever way the units ran (the tests compare, bit for bit).

    Parameters
    ----------
    the_study : Study
        The study.
    seeds : sequence of int
        Distinct integers >= 0.
    command : str
        The command that writes the record, stored in it.
    execute : callable, optional
        How the units run (:data:`Execute`; default :func:`serially`).
    device : str, optional
        Where the engine trains.

    Returns
    -------
    dict
        The study's record.
    """
    for design in the_study.tasks:  # a design whose cells cannot be built fails before any work
        for optimiser in the_study.optimisers:
            the_study.cells(design, optimiser, defaultdict(lambda: 1.0))
    calibrations: dict[str, dict[str, Any]] = {design.name: {} for design in the_study.tasks}
    seconds: dict[str, float] = {design.name: 0.0 for design in the_study.tasks}
    units = calibration_units(the_study, device)
    for name, result in (execute(units, run_unit, dict.fromkeys(units, 1), "calibration") if units else {}).items():
        calibrations[units[name]["task"]["name"]][units[name]["optimiser"]] = result["calibration"]
        seconds[units[name]["task"]["name"]] += result["seconds"]
    units = cell_units(the_study, seeds, calibrations, device)
    weights = {
        name: len(the_study.cells(design_of(the_study, p["task"]), p["optimiser"], p["base_rates"]))
        for name, p in units.items()
    }
    cells: dict[str, Any] = {}
    for name, result in execute(units, run_unit, weights, "cell").items():
        cells.update(result["cells"])
        seconds[units[name]["task"]["name"]] += result["seconds"]
    return study_record(the_study, calibrations, cells, seeds, command, seconds)


def rerun(
    the_study: Study, configuration: Mapping[str, Any], schedules: Sequence[str], seeds: Sequence[int]
) -> dict[str, NDArray]:
    """Run a stored cell again, alone, for some of its schedules and seeds; its per-seed quantities
    (:func:`lagtheory.experiments.exploratory.entries.cell_values`).

    Parameters
    ----------
    the_study : Study
        The study.
    configuration : mapping
        The cell's stored configuration (a record's ``cells[name]["configuration"]``).
    schedules : sequence of str
        Schedules among the cell's.
    seeds : sequence of int
        Distinct integers >= 0.

    Returns
    -------
    dict of str to ndarray
        The per-seed quantities of the runs.

    Raises
    ------
    ValueError
        If a schedule is not among the cell's, or the seeds are invalid.
    """
    cell = cell_from_configuration(the_study, configuration)
    if any(schedule not in cell.schedules for schedule in schedules):
        raise ValueError(f"schedules must be among the cell's {cell.schedules}, got {schedules!r}")
    sample = Cell(
        cell.name, cell.task, cell.optimiser, cell.sweep, cell.level, tuple(schedules), cell.setting, cell.training
    )
    ((_, result),) = run_cells(the_study, [sample], seeds).values()
    return cell_values(result, cell)


class Reproduction(NamedTuple):
    """One re-run of :func:`reproduce`: a stored cell, the schedules and seeds run again, and the
    quantities that differ from the record beyond the tolerance (empty when reproduced)."""

    cell: str
    schedules: list[str]
    seeds: list[int]
    different: list[str]


def reproduce(
    the_study: Study, record: Mapping[str, Any], seed: int, cells: int = 3, rtol: float = 1e-6
) -> list[Reproduction]:
    """Run a seeded sample of a record's stored runs again, alone, and compare them with the record: the
    empirical chapters' reproduction check. The sample is :func:`lagtheory.experiments.exploratory.records.reproduction_sample`
    (``cells`` cells, two schedules and three seeds of each, drawn with ``seed``); each is re-run by
    :func:`rerun` and compared by :func:`lagtheory.experiments.exploratory.records.mismatches` at ``rtol``.

    Parameters
    ----------
    the_study : Study
        The study.
    record : mapping
        The study's stored record.
    seed : int
        Draws the sample.
    cells : int, optional
        The number of cells sampled.
    rtol : float, optional
        The relative tolerance of the comparison.

    Returns
    -------
    list of Reproduction
        One per sampled cell.
    """
    found = []
    for name, schedules, seeds in reproduction_sample(record, seed, cells=cells):
        fresh = rerun(the_study, record["cells"][name]["configuration"], schedules, seeds)
        found.append(Reproduction(name, schedules, seeds, mismatches(record, name, schedules, seeds, fresh, rtol=rtol)))
    return found
