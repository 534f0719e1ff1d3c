"""The units of the registered confirmatory study's stages (:mod:`lagtheory.experiments.confirmatory.stages`):
their payloads and their work (:func:`run_unit`), on a dask worker or in this process.

Per run and seed a unit stores (:func:`outcomes`) ``failed`` (held-out loss, the mean over the test sizes
above the training range, not finite or at or above that of the prediction 0: H1), ``test_loss``,
``zero_loss``, ``log10_test_loss`` (None where not finite), ``capped_log10_test_loss``
(:func:`lagtheory.experiments.exploratory.design.capped_log_loss`) and, for languages, ``recognised`` (the exact
worst-case check classifies every word of every checked length up to 1e12 right: H2) and ``horizon``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..engine.cells import check_seeds, run_rows
from ..engine.config import config_to_dict
from ..exploratory.design import TaskDesign, capped_log_loss
from ..exploratory.entries import storable
from ..exploratory.runner import design_of, task_payload
from ..exploratory.studies import STUDIES
from ..parameters import fill_doc
from .design import ConfirmatoryCell, Run, run_config, validation_setting


def outcomes(metrics: Mapping[str, NDArray]) -> dict[str, NDArray]:
    """The registered per-seed outcomes of every row, name -> (rows, seeds) (module docstring), from the task's
    test metrics (``test_loss`` and ``zero_loss`` of every task; ``recognised``, ``horizon`` of languages).

    Parameters
    ----------
    metrics : mapping of str to array_like
        The engine's test metrics, name -> (rows, seeds): ``test_loss`` and ``zero_loss`` (required),
        ``recognised`` and ``horizon`` (kept when present).

    Returns
    -------
    dict of str to ndarray
        ``failed``, ``test_loss``, ``zero_loss``, ``log10_test_loss`` (NaN where the loss is not finite and
        positive), ``capped_log10_test_loss``, and ``recognised``, ``horizon`` when given; each (rows, seeds).

    Raises
    ------
    KeyError
        If ``metrics`` lacks ``test_loss`` or ``zero_loss``.
    """
    test = np.asarray(metrics["test_loss"], dtype=np.float64)
    zero = np.asarray(metrics["zero_loss"], dtype=np.float64)
    finite = np.isfinite(test)
    with np.errstate(divide="ignore", invalid="ignore"):
        log10 = np.where(finite & (test > 0), np.log10(np.where(finite & (test > 0), test, 1.0)), np.nan)
    values = {
        "failed": ~finite | (np.where(finite, test, np.inf) >= zero),
        "test_loss": test,
        "zero_loss": zero,
        "log10_test_loss": log10,
        "capped_log10_test_loss": capped_log_loss(test, zero),
    }
    for name in ("recognised", "horizon"):
        if name in metrics:
            values[name] = np.asarray(metrics[name])
    return values


def cell_payload(cell: ConfirmatoryCell, runs: Sequence[Run]) -> dict[str, Any]:
    """A cell and its runs as JSON-ready data.

    Parameters
    ----------
    cell : ConfirmatoryCell
        The cell.
    runs : sequence of Run
        Its runs in this unit.

    Returns
    -------
    dict
        ``cell`` (the cell's fields) and ``runs`` (each run's :meth:`Run.as_dict
        <lagtheory.experiments.confirmatory.design.Run.as_dict>`).
    """
    return {"cell": dataclasses.asdict(cell), "runs": [run.as_dict() for run in runs]}


@fill_doc
def unit_payload(
    study: str,
    design: TaskDesign,
    cells: Sequence[Mapping[str, Any]],
    seeds: Sequence[int],
    registration: str,
    validation_set: bool = False,
    device: str = "cpu",
) -> dict[str, Any]:
    """The payload of a unit of runs (:func:`run_unit`): cells (:func:`cell_payload`) of one task and
    optimiser, trained together in one batched engine call.

    Parameters
    ----------
    study : str
        The name of the task's exploratory study (a key of :data:`~lagtheory.experiments.exploratory.studies.STUDIES`).
    %(task_design)s
    cells : sequence of mapping
        The cells and their runs, each as :func:`cell_payload` gives it.
    seeds : sequence of int
        The seeds: distinct non-negative integers, at least one.
    registration : str
        The registration hash the unit is run under.
    validation_set : bool, optional
        Evaluate on the validation set (:func:`~lagtheory.experiments.confirmatory.design.validation_setting`)
        rather than the test set (default False).
    device : str, optional
        Where the worker trains, "cpu" (default) or "cuda".

    Returns
    -------
    dict
        The JSON-ready payload, ``kind`` "runs".

    Raises
    ------
    ValueError
        If ``seeds`` is empty, holds a negative seed or a seed twice.
    TypeError
        If a seed is not an integer.
    """
    return {
        "kind": "runs",
        "registration": registration,
        "study": study,
        "task": task_payload(design),
        "cells": [dict(cell) for cell in cells],
        "seeds": list(check_seeds(seeds)),
        "validation_set": validation_set,
        "device": device,
    }


def run_unit(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The work of one unit of runs (:func:`unit_payload`): every run of every cell of the payload in one
    batched :func:`lagtheory.experiments.engine.cells.run_rows` call, outcomes per run by :func:`outcomes`;
    JSON-ready, with the registration hash, ``seconds`` of wall time and ``cpu_seconds`` of this process's CPU
    time (what one uncontended core would take). A stage's calibrations are units of
    :func:`lagtheory.experiments.exploratory.runner.run_unit`, the one calibration work of both layers.

    Parameters
    ----------
    payload : mapping
        A unit's payload, ``kind`` "runs" (:func:`unit_payload`).

    Returns
    -------
    dict
        ``registration``, ``cells`` (cell name -> run key -> the run's fields, ``training`` and per-seed
        ``values``), ``seconds`` and ``cpu_seconds``.

    Raises
    ------
    ValueError
        If the payload's ``kind`` is not "runs".
    """
    if payload["kind"] != "runs":
        raise ValueError(f"payload kind must be 'runs', got {payload['kind']!r}")
    start, cpu = time.perf_counter(), time.process_time()
    the_study = STUDIES[payload["study"]]
    design = design_of(the_study, payload["task"])
    setting = validation_setting(design.setting) if payload["validation_set"] else design.setting
    task = the_study.build(design.name, setting)
    plan = []
    for entry in payload["cells"]:
        cell = ConfirmatoryCell(**entry["cell"])
        for run in (Run(**fields) for fields in entry["runs"]):
            plan.append((cell, run, run_config(design, cell, run)))
    result = run_rows(
        task, [(run.schedule, config) for _, run, config in plan], payload["seeds"], device=payload["device"]
    )
    values = outcomes(result.metrics)
    cells: dict[str, dict[str, Any]] = {}
    for row, (cell, run, config) in enumerate(plan):
        cells.setdefault(cell.name, {})[run.key] = {
            **run.as_dict(),
            "training": config_to_dict(config),
            "values": {name: storable(value[row]) for name, value in values.items()},
        }
    return {
        "registration": payload["registration"],
        "cells": cells,
        "seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu,
    }
