"""A study's record written from its runs (the format is :mod:`lagtheory.experiments.exploratory.records`'s): per
cell, every seed's stored values (:func:`cell_values`), the curves of the centre cells, the cell's configuration,
the design's constants, and the whole record (:func:`study_record`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..engine.cells import CellResult
from ..engine.config import config_to_dict, json_ready
from ..parameters import fill_doc
from ..tasks.languages.task import LANGUAGE_METRICS
from ..tasks.sequences.driver import SEQUENCE_METRICS
from ..tasks.transformer.task import TRANSFORMER_METRICS
from .calibration import RATE_GRIDS
from .design import (
    BASE_RATE_FACTORS,
    BUDGETS,
    CENTRE,
    MAIN_SCHEDULES,
    PRIMARY,
    RATIOS,
    READOUT_SCALES,
    SWEPT_ATTENTION_INITS,
    Cell,
    Study,
    capped_log_loss,
    is_centre,
)
from .records import FORMAT, versions

STORED_METRICS = tuple(
    name
    for name in dict.fromkeys((*LANGUAGE_METRICS, *SEQUENCE_METRICS, *TRANSFORMER_METRICS))
    if name not in ("test_loss", "zero_loss")
)
"""The task families' metrics (:data:`~lagtheory.experiments.tasks.languages.task.LANGUAGE_METRICS`,
:data:`~lagtheory.experiments.tasks.sequences.driver.SEQUENCE_METRICS`,
:data:`~lagtheory.experiments.tasks.transformer.task.TRANSFORMER_METRICS`) that a cell stores as the task gives
them; ``test_loss`` is stored on its own and with ``zero_loss`` makes the primary metric."""
DETAIL_METRICS = ("accuracy", "test_errors")
"""The per-size metrics, stored only at the centre cells and the initialisation and accounting sweeps."""


def cell_values(result: CellResult, cell: Cell) -> dict[str, NDArray]:
    """The per-seed quantities stored for a cell, name -> (schedules, seeds, ...): the primary metric, the
    held-out loss, whether the run diverged, the displacement of each group after 10 steps, the task's
    metrics of :data:`STORED_METRICS`, the per-size ones (:data:`DETAIL_METRICS`) and the trained parameters only
    for the centre cell and the initialisation and accounting sweeps.

    Parameters
    ----------
    result : CellResult
        The cell's runs.
    cell : Cell
        The cell.

    Returns
    -------
    dict of str to ndarray
        Quantity -> (schedules, seeds, ...).
    """
    metrics = result.metrics
    values = {
        PRIMARY: capped_log_loss(metrics["test_loss"], metrics["zero_loss"]),
        "test_loss": metrics["test_loss"],
        "diverged": ~np.isfinite(metrics["test_loss"]),
        "attention_moved_at_10": result.traces["attention_moved"][..., min(10, result.losses.shape[-1] - 1)],
        "output_moved_at_10": result.traces["output_moved"][..., min(10, result.losses.shape[-1] - 1)],
    }
    detailed = is_centre(cell) or cell.sweep in ("attention_init", "accounting")
    for name in STORED_METRICS:
        if name in metrics and (detailed or name not in DETAIL_METRICS):
            values[name] = metrics[name]
    if detailed:
        values.update({f"final_{name}": value for name, value in result.final.items()})
    return values


def curves(result: CellResult) -> dict[str, NDArray]:
    """Mean over seeds of the training loss and of every trace, per schedule and step.

    Parameters
    ----------
    result : CellResult
        The cell's runs.

    Returns
    -------
    dict of str to ndarray
        ``loss`` and every trace -> (schedules, steps).
    """
    with np.errstate(invalid="ignore"):
        means = {"loss": np.nanmean(np.where(np.isnan(result.losses), np.nan, result.losses), axis=1)}
    means.update({name: trace.mean(axis=1) for name, trace in result.traces.items()})
    return means


def cell_configuration(cell: Cell) -> dict[str, Any]:
    """The full configuration of a cell, JSON-ready.

    Parameters
    ----------
    cell : Cell
        The cell.

    Returns
    -------
    dict
        ``cell``, ``task``, ``optimiser``, ``sweep``, ``level``, ``schedules``, ``setting``, ``training``.
    """
    return {
        "cell": cell.name,
        "task": cell.task,
        "optimiser": cell.optimiser,
        "sweep": cell.sweep,
        "level": cell.level,
        "schedules": list(cell.schedules),
        "setting": setting_record(cell.setting),
        "training": config_to_dict(cell.training),
    }


def setting_record(setting: Any) -> dict[str, Any]:
    """A cell's setting in its record form: :func:`~lagtheory.experiments.engine.config.config_to_dict`, less each option of the setting type's
    ``LATER_OPTIONS`` (options added after its first records; none when the type has no such attribute) that is
    at its default, so that a record written before the option existed still states the setting exactly
    (:func:`~lagtheory.experiments.engine.config.config_from_dict` fills the defaults back in).

    Parameters
    ----------
    setting : object
        A setting dataclass instance.

    Returns
    -------
    dict
        Its fields, JSON-ready, less the later options at their defaults.
    """
    found = config_to_dict(setting)
    defaults = {field.name: field.default for field in dataclasses.fields(setting)}
    for name in getattr(type(setting), "LATER_OPTIONS", ()):
        if found[name] == defaults[name]:
            del found[name]
    return found


def _rounded(values: NDArray[np.float64], digits: int = 6) -> list:
    return [float(f"{value:.{digits}g}") if np.isfinite(value) else None for value in np.asarray(values).ravel()]


def storable(value: Any) -> Any:
    """A value as a record stores it (both layers' records): JSON-ready (:func:`~lagtheory.experiments.engine.config.json_ready`), with non-finite
    floats as None (JSON has no NaN).

    Parameters
    ----------
    value : object
        Nested lists, tuples, numpy arrays and scalars.

    Returns
    -------
    object
        The same structure with lists and Python numbers, None for every NaN or infinity.
    """
    value = json_ready(value)
    if isinstance(value, list):
        return [storable(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def design_constants() -> dict[str, Any]:
    """The constants of the sweep (:mod:`lagtheory.experiments.exploratory.design`) and the calibration grids, as stored in a record."""
    return {
        "readout_scales": list(READOUT_SCALES),
        "ratios": list(RATIOS),
        "centre": list(CENTRE),
        "main_schedules": list(MAIN_SCHEDULES),
        "budgets": list(BUDGETS),
        "base_rate_factors": list(BASE_RATE_FACTORS),
        "attention_inits": list(SWEPT_ATTENTION_INITS),
        "rate_grids": {optimiser: list(grid) for optimiser, grid in RATE_GRIDS.items()},
    }


def cell_entry(cell: Cell, result: CellResult) -> dict[str, Any]:
    """A cell's part of the record (module docstring): its configuration, every seed's value of every
    stored quantity (:func:`cell_values`) per schedule, and for the centre cell the curves; JSON-ready.

    Parameters
    ----------
    cell : Cell
        The cell.
    result : CellResult
        Its runs.

    Returns
    -------
    dict
        ``configuration``, ``values`` and (centre cell) ``curves``.
    """
    values = cell_values(result, cell)
    entry = {
        "configuration": cell_configuration(cell),
        "values": {
            quantity: {schedule: storable(array[k]) for k, schedule in enumerate(cell.schedules)}
            for quantity, array in values.items()
        },
    }
    if is_centre(cell):
        entry["curves"] = {
            quantity: {schedule: _rounded(array[k]) for k, schedule in enumerate(cell.schedules)}
            for quantity, array in curves(result).items()
        }
    return entry


@fill_doc
def study_record(
    the_study: Study,
    calibrations: Mapping[str, Mapping[str, Any]],
    cells: Mapping[str, Mapping[str, Any]],
    seeds: Sequence[int],
    command: str,
    seconds: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The record of a study's runs (module docstring); ``cells`` cell name -> :func:`cell_entry` (all
    tasks and optimisers merged, :func:`lagtheory.experiments.exploratory.runner.run_study`); ``seconds`` the wall
    time of each task (calibration and sweep), kept for information (it depends on the machine).

    Parameters
    ----------
    the_study : Study
        The study.
    calibrations : mapping
        Task -> optimiser -> calibration result.
    cells : mapping of str to mapping
        Cell name -> :func:`cell_entry`.
    %(seeds)s
    command : str
        How the record is written.
    seconds : mapping of str to float, optional
        Task -> wall time.

    Returns
    -------
    dict
        The record.
    """
    return {
        "format": FORMAT,
        "study": the_study.name,
        "description": the_study.description,
        "metric": the_study.metric,
        "primary": the_study.primary,
        "higher_is_better": the_study.higher_is_better,
        "binary": the_study.binary,
        "margin": the_study.margin,
        "margin_rule": the_study.margin_rule,
        "seeds_rule": the_study.seeds_rule,
        "design": design_constants() if the_study.constants is None else json_ready(dict(the_study.constants)),
        "versions": versions(),
        "command": command,
        "seeds": list(seeds),
        "calibration": json_ready(dict(calibrations)),
        "seconds": {task: round(value) for task, value in (seconds or {}).items()},
        "cells": dict(cells),
    }
