"""The per-seed records of the empirical chapters: ``book/data/summary_<study>.json``.

A record holds, for every cell of a study, every seed's value of every
quantity for every schedule, so anyone can re-analyse the runs paired:

    {"format": "lagtheory-study-1", "study", "description", "metric", "primary",
     "higher_is_better", "binary", "margin", "margin_rule",
     "versions": {"lagtheory", "torch", "numpy", "scipy", "python"},
     "command": how the file was written, "seeds": [...], "schedules": [...],
     "cells": {name: {"configuration": {"cell", "setting", "training"},
                      "values": {quantity: {schedule: [one entry per seed]}},
                      "curves": {quantity: {schedule: [mean over seeds per step]}}}}}

Per-seed values are stored at full float64 precision (JSON's shortest
round-trip repr), curves (for figures only) with 6 significant digits.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .engine import json_ready
from .paired import Comparison, compare
from .studies import Cell, Study, cell_configuration, cell_values, curves

FORMAT = "lagtheory-study-1"


def versions() -> dict[str, str]:
    """The versions of the package and of the libraries the runs depend on."""
    return {
        "lagtheory": metadata.version("lagtheory"),
        "torch": metadata.version("torch"),
        "numpy": metadata.version("numpy"),
        "scipy": metadata.version("scipy"),
        "python": platform.python_version(),
    }


def _rounded(values: NDArray[np.float64], digits: int = 6) -> list:
    return [float(f"{value:.{digits}g}") if np.isfinite(value) else None for value in np.asarray(values).ravel()]


def study_record(
    the_study: Study,
    results: Mapping[str, tuple[Cell, Any]],
    schedules: Sequence[str],
    seeds: Sequence[int],
    command: str,
) -> dict[str, Any]:
    """The record of a study's runs (module docstring); ``results`` from :func:`lagtheory.experiments.studies.run_cells`."""
    cells = {}
    for name, (cell, result) in results.items():
        values = cell_values(the_study, result, cell.training)
        cells[name] = {
            "configuration": cell_configuration(cell),
            "values": {
                quantity: {schedule: json_ready(array[k]) for k, schedule in enumerate(schedules)}
                for quantity, array in values.items()
            },
            "curves": {
                quantity: {schedule: _rounded(array[k]) for k, schedule in enumerate(schedules)}
                for quantity, array in curves(result).items()
            },
        }
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
        "versions": versions(),
        "command": command,
        "seeds": list(seeds),
        "schedules": list(schedules),
        "cells": cells,
    }


def write_record(record: Mapping[str, Any], path: str | Path) -> None:
    """Write a record as JSON (one line per cell quantity is not needed: compact, sorted keys)."""
    validate_record(record, "record")
    Path(path).write_text(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record and check its format."""
    record = json.loads(Path(path).read_text())
    validate_record(record, str(path))
    return record


def validate_record(record: Any, name: str) -> None:
    """The format of the module docstring; ValueError naming ``name`` and the bad field."""
    if not isinstance(record, Mapping) or record.get("format") != FORMAT:
        raise ValueError(f"{name} must be a study record of format {FORMAT!r}")
    for key, kind in (
        ("study", str),
        ("primary", str),
        ("higher_is_better", bool),
        ("binary", bool),
        ("margin", float),
        ("seeds", list),
        ("schedules", list),
        ("cells", Mapping),
        ("versions", Mapping),
    ):
        if not isinstance(record.get(key), kind):
            raise ValueError(f"{name} must have a field {key!r} of type {kind.__name__}")
    seeds = len(record["seeds"])
    for cell, content in record["cells"].items():
        primary = content.get("values", {}).get(record["primary"])
        if not isinstance(primary, Mapping) or set(primary) != set(record["schedules"]):
            raise ValueError(f"{name}: cell {cell!r} must hold the primary metric for every schedule")
        if any(len(values) != seeds for values in primary.values()):
            raise ValueError(f"{name}: cell {cell!r} must hold one primary value per seed")


def per_seed(record: Mapping[str, Any], cell: str, quantity: str, schedule: str) -> NDArray:
    """The stored per-seed values of one quantity of one schedule in one cell, as an array (seeds, ...)."""
    return np.array(record["cells"][cell]["values"][quantity][schedule])


def mismatches(
    record: Mapping[str, Any],
    cell: str,
    values: Mapping[str, NDArray],
    schedules: Sequence[str],
    seeds: Sequence[int],
    rtol: float,
) -> list[str]:
    """Compare freshly computed per-seed quantities (:func:`lagtheory.experiments.studies.rerun`) of some
    schedules and seeds with the record: the quantities that differ beyond relative tolerance ``rtol``
    (and by 1e-12 absolutely; exactly for booleans and integers)."""
    index = [record["seeds"].index(seed) for seed in seeds]
    found = []
    for quantity, fresh in values.items():
        for k, schedule in enumerate(schedules):
            stored = per_seed(record, cell, quantity, schedule)[index]
            now = np.asarray(fresh[k])
            if stored.dtype.kind in "biu" or now.dtype.kind in "biu":
                same = np.array_equal(stored, now)
            else:
                same = np.allclose(stored, now, rtol=rtol, atol=1e-12, equal_nan=True)
            if not same:
                found.append(f"{quantity} of {schedule}")
    return found


def comparisons(
    record: Mapping[str, Any], schedule: str, baseline: str = "joint", cells: Sequence[str] | None = None
) -> list[Comparison]:
    """The unadjusted paired comparison (:func:`lagtheory.experiments.paired.compare`) of ``schedule`` against
    ``baseline`` on the primary metric, one per cell (all cells by default); adjust them together with
    :func:`lagtheory.experiments.paired.compare_family`."""
    names = list(record["cells"]) if cells is None else list(cells)
    return [
        compare(
            f"{cell}: {schedule} vs {baseline}",
            per_seed(record, cell, record["primary"], schedule).astype(np.float64),
            per_seed(record, cell, record["primary"], baseline).astype(np.float64),
            record["higher_is_better"],
            record["margin"],
            binary=record["binary"],
        )
        for cell in names
    ]
