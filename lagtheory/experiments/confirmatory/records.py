"""The committed records of the confirmatory study (``book/registration.md``): where they live, how they are
read and committed, and a seeded re-run of a sample of their runs (the confirmatory chapter's reproduction
check).

The command (:mod:`lagtheory.experiments.run`, stages of :mod:`lagtheory.experiments.confirmatory.stages`) writes each stage's record to
``runs/confirmatory/<stage>.json``, outside git. Once a stage has finished, the command::

    python -m lagtheory.experiments.run confirmatory-records

(or its alias ``python -m lagtheory.experiments.confirmatory.records``, which the confirmatory chapter quotes)

copies every finished stage record into :data:`~lagtheory.experiments.paths.CONFIRMATORY_RECORDS` gzipped (deterministically: no name, time 0) and
writes the registered analyses of what is there: ``analysis.json``
(:func:`lagtheory.experiments.confirmatory.analysis.analyse` of the grid record, with the best record once it
exists) and ``predictor.json`` (:mod:`lagtheory.experiments.confirmatory.predictor`, once the validation stage
has run).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..exploratory.records import load_exploratory, write_gzipped
from ..paths import CONFIRMATORY_RECORDS, CONFIRMATORY_RUNS, PREDICTOR_PREDICTIONS
from .analysis import analyse, design_power
from .design import ConfirmatoryCell, Run, confirmatory_tasks
from .predictor import predictor_outcome, validation_rows
from .registration import check_record
from .runs import cell_payload, run_unit, unit_payload
from .stages import STAGES

EXACT = ("failed", "recognised", "horizon")
"""Per-seed quantities a re-run must reproduce exactly."""


def stage_path(stage: str, folder: Path = CONFIRMATORY_RECORDS) -> Path:
    """The committed record of ``stage``: ``<folder>/<stage>.json.gz``.

    Parameters
    ----------
    stage : str
        One of :data:`~lagtheory.experiments.confirmatory.stages.STAGES`.
    folder : pathlib.Path, optional
        Where the committed records live (default :data:`~lagtheory.experiments.paths.CONFIRMATORY_RECORDS`).

    Returns
    -------
    pathlib.Path
        The record's path (whether or not it exists).

    Raises
    ------
    ValueError
        If ``stage`` is not one of :data:`~lagtheory.experiments.confirmatory.stages.STAGES`.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
    return folder / f"{stage}.json.gz"


def load_stage(path: str | Path, expected: str | None = None) -> dict[str, Any]:
    """Read a stage record (gzipped when its name ends in ``.gz``) and check that it carries the registration
    hash and is no trial.

    Parameters
    ----------
    path : str or Path
        The record's file.
    expected : str, optional
        The registration hash it must carry (default: the stored hash,
        :func:`lagtheory.experiments.confirmatory.registration.stored_hash`, read relative to the working directory).

    Returns
    -------
    dict
        The record.

    Raises
    ------
    ValueError
        If the record lacks the registration hash or is a trial.
    """
    path = Path(path)
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    record = json.loads(text)
    check_record(record, expected)
    if record.get("trial") is not None:
        raise ValueError(f"{path} is a trial record ({record['trial']}), not the registered study")
    return record


def committed_stages(folder: Path = CONFIRMATORY_RECORDS, expected: str | None = None) -> dict[str, dict[str, Any]]:
    """Every committed stage record in ``folder``, by stage, in :data:`~lagtheory.experiments.confirmatory.stages.STAGES` order, each read by
    :func:`load_stage` (``expected``: the registration hash they must carry).

    Parameters
    ----------
    folder : pathlib.Path, optional
        Where the committed records live (default :data:`~lagtheory.experiments.paths.CONFIRMATORY_RECORDS`).
    expected : str, optional
        The registration hash every record must carry (default: the stored hash).

    Returns
    -------
    dict of str to dict
        Stage -> record, for the stages whose record exists.

    Raises
    ------
    ValueError
        If a record lacks the registration hash or is a trial.
    """
    return {
        stage: load_stage(stage_path(stage, folder), expected) for stage in STAGES if stage_path(stage, folder).exists()
    }


def reproduction_sample(
    record: Mapping[str, Any], seed: int, cells: int = 2, seeds: int = 3
) -> list[tuple[str, str, list[int]]]:
    """A seeded sample of stored runs to re-run: ``cells`` cells, one run of each and ``seeds`` of the record's
    seeds, all drawn by ``numpy.random.default_rng(seed)``; (cell name, run key, seeds).

    Parameters
    ----------
    record : mapping
        A stage record (its ``cells`` and ``seeds``).
    seed : int
        The seed of the draw.
    cells : int, optional
        Cells drawn without replacement, from 0 to the record's cells (default 2).
    seeds : int, optional
        Seeds drawn without replacement per cell, from 0 to the record's seeds (default 3).

    Returns
    -------
    list of (str, str, list of int)
        Per drawn cell: its name, the key of one of its runs, and the drawn seeds in increasing order.

    Raises
    ------
    ValueError
        If ``cells`` or ``seeds`` exceeds what the record holds, or is negative (numpy's draw).
    """
    rng = np.random.default_rng(seed)
    names = [str(name) for name in rng.choice(sorted(record["cells"]), size=cells, replace=False)]
    sample = []
    for name in names:
        key = str(rng.choice(sorted(record["cells"][name]["runs"])))
        chosen = sorted(int(s) for s in rng.choice(record["seeds"], size=seeds, replace=False))
        sample.append((name, key, chosen))
    return sample


def rerun(record: Mapping[str, Any], cell_name: str, run_key: str, seeds: Sequence[int]) -> dict[str, list]:
    """Train one stored run of ``record`` again on ``seeds`` (one batched engine call through
    :func:`lagtheory.experiments.confirmatory.runs.run_unit`, one torch thread) and return its per-seed values.

    Parameters
    ----------
    record : mapping
        A stage record.
    cell_name : str
        A cell of the record.
    run_key : str
        One of the cell's stored runs.
    seeds : sequence of int
        The seeds to train on: distinct non-negative integers, at least one.

    Returns
    -------
    dict of str to list
        Quantity -> one value per seed, as the runner stores them (:func:`lagtheory.experiments.confirmatory.runs.outcomes`).

    Raises
    ------
    KeyError
        If the record has no such cell or run.
    ValueError
        If ``seeds`` is empty, holds a negative seed or a seed twice.
    TypeError
        If a seed is not an integer.
    """
    entry = record["cells"][cell_name]
    configuration = entry["configuration"]
    fields = ConfirmatoryCell.__dataclass_fields__
    cell = ConfirmatoryCell(**{name: configuration[name] for name in fields})
    stored = entry["runs"][run_key]
    run = Run(stored["schedule"], stored["base_rate"], stored["warm_fraction"], stored["accounting"])
    design = {d.name: d for _, d in confirmatory_tasks()}[cell.task]
    payload = unit_payload(
        cell.study,
        design,
        [cell_payload(cell, [run])],
        seeds,
        record["registration"],
        configuration["validation_set"],
    )
    return run_unit(payload)["cells"][cell_name][run_key]["values"]


def mismatches(
    record: Mapping[str, Any],
    cell_name: str,
    run_key: str,
    seeds: Sequence[int],
    fresh: Mapping[str, list],
    atol: float,
) -> list[str]:
    """The quantities of a re-run (:func:`rerun`) that differ from the record on ``seeds``.

    :data:`EXACT` quantities must agree exactly. ``log10_test_loss`` must agree within ``atol`` (absolute, in
    decades) on the seeds where the run did not fail; a failed run's loss follows a diverging trajectory whose
    digits depend on the order of float operations, so there only the failure flag is compared. The other
    stored quantities are functions of these and are not compared.

    Parameters
    ----------
    record : mapping
        The stage record.
    cell_name : str
        The cell re-run.
    run_key : str
        The run re-run.
    seeds : sequence of int
        The seeds re-run, each among the record's ``seeds``.
    fresh : mapping of str to list
        The re-run's per-seed values (:func:`rerun`), in the order of ``seeds``.
    atol : float
        The absolute tolerance of ``log10_test_loss`` in decades, >= 0.

    Returns
    -------
    list of str
        The quantities that differ (empty: the re-run reproduces the record).

    Raises
    ------
    ValueError
        If a seed is not among the record's seeds.
    """
    stored = record["cells"][cell_name]["runs"][run_key]["values"]
    index = [record["seeds"].index(seed) for seed in seeds]
    found = []
    for quantity in EXACT:
        if quantity in stored and [stored[quantity][i] for i in index] != list(fresh[quantity]):
            found.append(quantity)
    kept = [k for k, i in enumerate(index) if not stored["failed"][i]]
    before = np.array([stored["log10_test_loss"][index[k]] for k in kept], dtype=np.float64)
    now = np.array([fresh["log10_test_loss"][k] for k in kept], dtype=np.float64)
    if not np.allclose(before, now, rtol=0.0, atol=atol):
        found.append("log10_test_loss")
    return found


def main(folder: Path = CONFIRMATORY_RECORDS, source: Path = CONFIRMATORY_RUNS) -> list[Path]:
    """The command of the module docstring; returns the paths written.

    Parameters
    ----------
    folder : pathlib.Path, optional
        Where the committed records and analyses are written (default :data:`~lagtheory.experiments.paths.CONFIRMATORY_RECORDS`).
    source : pathlib.Path, optional
        Where the runner's stage records are read (default :data:`~lagtheory.experiments.paths.CONFIRMATORY_RUNS`).

    Returns
    -------
    list of pathlib.Path
        The files written: the stage records copied, then ``analysis.json`` and ``predictor.json`` where written.

    Raises
    ------
    ValueError
        If a stage record lacks the registration hash or is a trial, or a validation cell has no committed
        prediction.
    """
    written = []
    for stage in STAGES:
        if (source / f"{stage}.json").exists():
            record = load_stage(source / f"{stage}.json")
            write_gzipped(record, stage_path(stage, folder))
            written.append(stage_path(stage, folder))
    stages = committed_stages(folder)
    if "grid" in stages:
        result = analyse(stages["grid"], stages.get("best"), power=design_power(load_exploratory()))
        (folder / "analysis.json").write_text(json.dumps(result, sort_keys=True, separators=(",", ":")) + "\n")
        written.append(folder / "analysis.json")
    if "validation" in stages:
        rows = validation_rows(stages["validation"], json.loads(PREDICTOR_PREDICTIONS.read_text())["cells"])
        result = {"registration": stages["validation"]["registration"], "outcome": predictor_outcome(rows)}
        (folder / "predictor.json").write_text(json.dumps({**result, "cells": rows}, sort_keys=True, indent=1) + "\n")
        written.append(folder / "predictor.json")
    return written


if __name__ == "__main__":  # the command the confirmatory chapter quotes: an alias of the one command
    from lagtheory.experiments.run import alias

    alias("lagtheory.experiments.confirmatory.records")
