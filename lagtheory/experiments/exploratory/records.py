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

import functools
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

from ..engine.config import TrainingConfig, config_from_dict
from ..engine.config import config_to_dict as config_to_dict  # a record's JSON form, imported from here by chapters
from ..parameters import fill_doc
from ..paths import BOOK_DATA, record_path
from ..statistics.paired import Comparison, compare_many
from .design import (
    Cell,
    Study,
)

FORMAT = "lagtheory-study-2"
STUDY_NAMES = ("languages", "regression", "icl")
"""The exploratory studies whose records are the set the registration was written from (seeds 0..29)."""


def cell_from_configuration(the_study: Study, configuration: Mapping[str, Any]) -> Cell:
    """The :class:`~lagtheory.experiments.exploratory.design.Cell` of a stored configuration (:func:`~lagtheory.experiments.exploratory.entries.cell_configuration`).

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
    %(cell)s
    quantity : str
        A stored quantity.
    schedule : str
        A schedule of the cell.

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
    %(cell)s
    schedule : str
        A schedule of the cell.

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
    schedules: Sequence[str],
    seeds: Sequence[int],
    values: Mapping[str, NDArray],
    rtol: float,
) -> list[str]:
    """Compare freshly computed per-seed quantities (:func:`lagtheory.experiments.exploratory.runner.rerun`) of some
    schedules and seeds with the record: the quantities that differ beyond the tolerance. The arguments come in
    the order of :func:`lagtheory.experiments.confirmatory.records.mismatches`'s: the record, the cell, which runs,
    the seeds, the fresh values, the tolerance.

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
    %(cell)s
    schedules : sequence of str
        Schedules of the cell.
    seeds : sequence of int
        Seeds of the record.
    values : mapping of str to ndarray
        Quantity -> fresh values (schedules, seeds, ...), in the order of ``schedules`` and ``seeds``.
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
    return list(
        _compare_cells(
            tuple(f"{cell}: {schedule} vs {baseline}" for cell in cells),
            tuple(per_seed(record, cell, record["primary"], schedule).astype(np.float64).tobytes() for cell in cells),
            tuple(per_seed(record, cell, record["primary"], baseline).astype(np.float64).tobytes() for cell in cells),
            record["higher_is_better"],
            record["margin"],
            record["binary"],
        )
    )


@functools.lru_cache(maxsize=256)
def _compare_cells(
    names: tuple[str, ...],
    a: tuple[bytes, ...],
    b: tuple[bytes, ...],
    higher_is_better: bool,
    margin: float,
    binary: bool,
) -> tuple[Comparison, ...]:
    """:func:`compare_many` of per-seed outcome vectors given as their float64 bytes: keyed by the values
    themselves, so a chapter that asks for the same family twice (the regime maps of the verdict and the
    language chapters) computes it once, and a changed record is computed again. Comparisons are frozen."""
    return tuple(
        compare_many(
            names,
            [np.frombuffer(x) for x in a],
            [np.frombuffer(x) for x in b],
            higher_is_better,
            margin,
            binary=binary,
        )
    )
