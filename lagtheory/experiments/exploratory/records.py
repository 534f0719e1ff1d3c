"""The per-seed records of the empirical chapters: ``book/data/summary_<study>.json``.

A record holds, for every cell of a study, every seed's value of every stored
quantity for every schedule of the cell, so anyone can re-analyse the runs
paired::

    {"format": "lagtheory-study-2", "study", "description", "metric", "primary",
     "higher_is_better", "binary", "margin", "margin_rule", "seeds_rule",
     "design": the constants of the sweep (scales, ratios, centre, budgets, ...),
     "versions": {"lagtheory", "torch", "numpy", "scipy", "python"},
     "command": how the file was written, "seeds": [...],
     "calibration": {task: {optimiser: the base-rate calibration}},
     "seconds": {task: wall time of its calibration and sweep, for information},
     "cells": {name: {"configuration": {"cell", "task", "optimiser", "sweep", "level",
                                        "schedules", "setting", "training"},
                      "values": {quantity: {schedule: [one entry per seed]}},
                      "curves": {quantity: {schedule: [mean over seeds per step]}}}}}

Per-seed values are stored at full float64 precision (JSON's shortest
round-trip repr, NaN as null), curves (for figures only, centre cells only)
with 6 significant digits.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import platform
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..engine.cells import CellResult
from ..engine.config import TrainingConfig, config_from_dict, config_to_dict, json_ready
from ..parameters import fill_doc
from ..paths import BOOK_DATA, record_path
from ..statistics.paired import Comparison, compare
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

FORMAT = "lagtheory-study-2"
STUDY_NAMES = ("languages", "regression", "icl")
"""The exploratory studies whose records are the set the registration was written from (seeds 0..29)."""


@fill_doc
def cell_values(result: CellResult, cell: Cell) -> dict[str, NDArray]:
    """The per-seed quantities stored for a cell, name -> (schedules, seeds, ...): the primary metric, the
    held-out loss, whether the run diverged, the displacement of each group after 10 steps, the task's
    scalar metrics, and for the centre cell also the per-size metrics and the trained parameters.

    Parameters
    ----------
    %(result)s
    %(cell)s

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
    for name in ("recognised", "horizon", "accuracy_above_training", "recognised_at", "hard_accuracy"):
        if name in metrics:
            values[name] = metrics[name]
    if is_centre(cell) or cell.sweep in ("attention_init", "accounting"):
        for name in ("accuracy", "test_errors"):
            if name in metrics:
                values[name] = metrics[name]
        values.update({f"final_{name}": value for name, value in result.final.items()})
    return values


@fill_doc
def curves(result: CellResult) -> dict[str, NDArray]:
    """Mean over seeds of the training loss and of every trace, per schedule and step.

    Parameters
    ----------
    %(result)s

    Returns
    -------
    dict of str to ndarray
        ``loss`` and every trace -> (schedules, steps).
    """
    with np.errstate(invalid="ignore"):
        means = {"loss": np.nanmean(np.where(np.isnan(result.losses), np.nan, result.losses), axis=1)}
    means.update({name: trace.mean(axis=1) for name, trace in result.traces.items()})
    return means


@fill_doc
def cell_configuration(cell: Cell) -> dict[str, Any]:
    """The full configuration of a cell, JSON-ready.

    Parameters
    ----------
    %(cell)s

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
    """A cell's setting in its record form: :func:`config_to_dict`, less each option of the setting type's
    ``LATER_OPTIONS`` (options added after its first records; none when the type has no such attribute) that is
    at its default, so that a record written before the option existed still states the setting exactly
    (:func:`config_from_dict` fills the defaults back in).

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


def cell_from_configuration(the_study: Study, configuration: Mapping[str, Any]) -> Cell:
    """The :class:`~lagtheory.experiments.exploratory.design.Cell` of a stored configuration (:func:`cell_configuration`).

    Parameters
    ----------
    the_study : Study
        Its ``setting_types`` give the setting's type.
    configuration : mapping
        A stored configuration.

    Returns
    -------
    Cell
        The cell.
    """
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


def versions() -> dict[str, str]:
    """The versions of the package and of the libraries the runs depend on."""
    return {
        "lagtheory": metadata.version("lagtheory"),
        "torch": metadata.version("torch"),
        "numpy": metadata.version("numpy"),
        "scipy": metadata.version("scipy"),
        "python": platform.python_version(),
    }


def write_gzipped(record: Mapping[str, Any], path: Path) -> None:
    """Write ``record`` as compact JSON to the gzip file ``path``, byte for byte the same for the same record
    (no file name, modification time 0).

    Parameters
    ----------
    record : mapping
        A JSON-ready record without NaN or infinity.
    path : pathlib.Path
        The file written (its folder is created).

    Raises
    ------
    ValueError
        If the record holds NaN or infinity (JSON's ``allow_nan=False``).
    """
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as out:
        out.write(text.encode())


def _rounded(values: NDArray[np.float64], digits: int = 6) -> list:
    return [float(f"{value:.{digits}g}") if np.isfinite(value) else None for value in np.asarray(values).ravel()]


def storable(value: Any) -> Any:
    """A value as a record stores it (both layers' records): JSON-ready (:func:`json_ready`), with non-finite
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


@fill_doc
def cell_entry(cell: Cell, result: CellResult) -> dict[str, Any]:
    """A cell's part of the record (module docstring): its configuration, every seed's value of every
    stored quantity (:func:`cell_values`) per schedule, and for the centre cell the curves; JSON-ready.

    Parameters
    ----------
    %(cell)s
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
    %(the_study)s
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


def write_record(record: Mapping[str, Any], path: str | Path) -> None:
    """Write a record as JSON (one line per cell quantity is not needed: compact, sorted keys).

    Parameters
    ----------
    record : mapping
        A record of this format.
    path : str or pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        If ``record`` is not of the format (:func:`validate_record`).
    """
    validate_record(record, "record")
    Path(path).write_text(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record and check its format.

    Parameters
    ----------
    path : str or pathlib.Path
        A JSON file.

    Returns
    -------
    dict
        The record.

    Raises
    ------
    ValueError
        If the file is not a record of this format.
    """
    record = json.loads(Path(path).read_text())
    validate_record(record, str(path))
    return record


def load_exploratory(folder: str | Path = BOOK_DATA) -> dict[str, dict[str, Any]]:
    """The exploratory records (:data:`STUDY_NAMES`), the set the registration was written from.

    Parameters
    ----------
    folder : str or pathlib.Path, optional
        Where the ``summary_<study>.json`` files are.

    Returns
    -------
    dict of str to dict
        Study name -> record.

    Raises
    ------
    ValueError
        If a file is not a study record.
    """
    return {study: load_record(record_path(study, Path(folder))) for study in STUDY_NAMES}


def validate_record(record: Any, name: str) -> None:
    """The format of the module docstring; ValueError naming ``name`` and the bad field.

    Parameters
    ----------
    record : object
        The record checked.
    name : str
        How the record is named in the error message.

    Raises
    ------
    ValueError
        Naming ``name`` and the bad field, if ``record`` is not of the format.
    """
    if not isinstance(record, Mapping) or record.get("format") != FORMAT:
        raise ValueError(f"{name} must be a study record of format {FORMAT!r}")
    for key, kind in (
        ("study", str),
        ("primary", str),
        ("higher_is_better", bool),
        ("binary", bool),
        ("margin", float),
        ("seeds", list),
        ("cells", Mapping),
        ("calibration", Mapping),
        ("versions", Mapping),
    ):
        if not isinstance(record.get(key), kind):
            raise ValueError(f"{name} must have a field {key!r} of type {kind.__name__}")
    seeds = len(record["seeds"])
    for cell, content in record["cells"].items():
        schedules = content.get("configuration", {}).get("schedules")
        primary = content.get("values", {}).get(record["primary"])
        if not isinstance(primary, Mapping) or not isinstance(schedules, list) or set(primary) != set(schedules):
            raise ValueError(f"{name}: cell {cell!r} must hold the primary metric for every schedule of the cell")
        if any(len(values) != seeds for values in primary.values()):
            raise ValueError(f"{name}: cell {cell!r} must hold one primary value per seed")


@fill_doc
def per_seed(record: Mapping[str, Any], cell: str, quantity: str, schedule: str) -> NDArray:
    """The stored per-seed values of one quantity of one schedule in one cell, as an array (seeds, ...);
    None (a non-finite value) becomes NaN.

    Parameters
    ----------
    %(record)s
    %(cell_name)s
    quantity : str
        A stored quantity.
    %(cell_schedule)s

    Returns
    -------
    ndarray
        (seeds, ...).

    Raises
    ------
    KeyError
        If the cell, quantity or schedule is not in the record.
    """
    values = record["cells"][cell]["values"][quantity][schedule]
    array = np.array(values, dtype=object)
    if array.dtype == object and any(v is None for v in np.ravel(array)):
        return np.array(np.where(array == None, np.nan, array), dtype=np.float64)  # noqa: E711
    return np.array(values)


@fill_doc
def cells_where(record: Mapping[str, Any], **conditions: Any) -> list[str]:
    """The names of the cells whose configuration has every ``key=value`` of ``conditions``
    (task, optimiser, sweep, level), in the record's order.

    Parameters
    ----------
    %(record)s
    **conditions : object
        Configuration key -> required value.

    Returns
    -------
    list of str
        The cell names.
    """
    return [
        name
        for name, content in record["cells"].items()
        if all(content["configuration"][key] == value for key, value in conditions.items())
    ]


@fill_doc
def failed_runs(record: Mapping[str, Any], cell: str, schedule: str) -> NDArray[np.bool_]:
    """The seeds (a boolean mask) whose run failed: its held-out loss is not finite or above the cap (by more
    than a relative 1e-6), so the primary metric holds the cap
    (:func:`lagtheory.experiments.exploratory.design.capped_log_loss`), not the loss.

    Parameters
    ----------
    %(record)s
    %(cell_name)s
    %(cell_schedule)s

    Returns
    -------
    ndarray
        bool (seeds,).
    """
    test_loss = per_seed(record, cell, "test_loss", schedule).astype(np.float64)
    primary = per_seed(record, cell, record["primary"], schedule).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return ~np.isfinite(test_loss) | (np.log10(test_loss) > primary + 1e-6 / math.log(10))


@fill_doc
def reproduction_sample(
    record: Mapping[str, Any], seed: int, cells: int = 2, schedules: int = 2, seeds: int = 3
) -> list[tuple[str, list[str], list[int]]]:
    """A seeded random sample of stored runs to re-run: ``cells`` cells, and in each ``schedules`` of its
    schedules and ``seeds`` of the record's seeds, all drawn by ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    %(record)s
    seed : int
        Seeds the draw.
    cells : int, optional
        Cells drawn, at most the record's.
    schedules : int, optional
        Schedules per cell (fewer where the cell has fewer).
    seeds : int, optional
        Seeds per cell, at most the record's.

    Returns
    -------
    list of tuple of (str, list of str, list of int)
        (cell, schedules, seeds) per drawn cell.
    """
    rng = np.random.default_rng(seed)
    names = [str(name) for name in rng.choice(list(record["cells"]), size=cells, replace=False)]
    sample = []
    for name in names:
        own = record["cells"][name]["configuration"]["schedules"]
        chosen = [str(s) for s in rng.choice(own, size=min(schedules, len(own)), replace=False)]
        sample.append((name, chosen, sorted(int(s) for s in rng.choice(record["seeds"], size=seeds, replace=False))))
    return sample


@fill_doc
def mismatches(
    record: Mapping[str, Any],
    cell: str,
    values: Mapping[str, NDArray],
    schedules: Sequence[str],
    seeds: Sequence[int],
    rtol: float,
) -> list[str]:
    """Compare freshly computed per-seed quantities (:func:`lagtheory.experiments.exploratory.runner.rerun`) of some
    schedules and seeds with the record: the quantities that differ beyond the tolerance.

    Booleans and integers must agree exactly (NaN equals NaN). A ``log10_`` quantity (the primary metric)
    must agree within ``rtol`` absolutely: a relative change ``rtol`` of a loss moves its log10 by
    ``rtol / ln 10``, while near a loss of 1 a relative test of the log10 would magnify a rounding-level
    change without bound. Any other float must agree within relative ``rtol`` (and 1e-12 absolutely), except
    in failed runs (:func:`failed_runs`): there the loss blew up or passed the cap, its raw values follow a
    diverging trajectory and change with the order of float operations, and only the primary metric (the
    cap) and the exact quantities are compared.

    Parameters
    ----------
    %(record)s
    %(cell_name)s
    values : mapping of str to ndarray
        Quantity -> fresh values (schedules, seeds, ...), in the order of ``schedules`` and ``seeds``.
    schedules : sequence of str
        Schedules of the cell.
    seeds : sequence of int
        Seeds of the record.
    rtol : float
        The tolerance.

    Returns
    -------
    list of str
        ``"<quantity> of <schedule>"`` per difference; empty when reproduced.
    """
    index = [record["seeds"].index(seed) for seed in seeds]
    found = []
    for k, schedule in enumerate(schedules):
        failed = failed_runs(record, cell, schedule)[index]
        for quantity, fresh in values.items():
            stored = per_seed(record, cell, quantity, schedule)[index]
            now = np.asarray(fresh[k])
            if stored.dtype.kind in "biu" and now.dtype.kind in "biu":
                same = np.array_equal(stored, now)
            else:
                stored, now = stored.astype(np.float64), now.astype(np.float64)
                if quantity.startswith("log10_"):
                    same = np.allclose(stored, now, rtol=0.0, atol=rtol, equal_nan=True)
                else:
                    keep = ~failed
                    same = np.allclose(stored[keep], now[keep], rtol=rtol, atol=1e-12, equal_nan=True)
            if not same:
                found.append(f"{quantity} of {schedule}")
    return found


@fill_doc
def comparisons(
    record: Mapping[str, Any], schedule: str, baseline: str = "joint", cells: Sequence[str] | None = None
) -> list[Comparison]:
    """The unadjusted paired comparison (:func:`lagtheory.experiments.statistics.paired.compare`) of ``schedule`` against
    ``baseline`` on the primary metric, one per cell (all cells that run both, by default); adjust them
    together with :func:`lagtheory.experiments.statistics.paired.compare_family`.

    Parameters
    ----------
    %(record)s
    schedule : str
        The schedule compared.
    baseline : str, optional
        The schedule it is compared with.
    cells : sequence of str, optional
        The cells (default every cell that runs both).

    Returns
    -------
    list of Comparison
        Unadjusted, one per cell.
    """
    if cells is None:
        cells = [
            name
            for name, content in record["cells"].items()
            if {schedule, baseline} <= set(content["configuration"]["schedules"])
        ]
    return [
        compare(
            f"{cell}: {schedule} vs {baseline}",
            per_seed(record, cell, record["primary"], schedule).astype(np.float64),
            per_seed(record, cell, record["primary"], baseline).astype(np.float64),
            record["higher_is_better"],
            record["margin"],
            binary=record["binary"],
        )
        for cell in cells
    ]
