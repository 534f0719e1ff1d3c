"""Run the registered confirmatory study (``book/registration.md``) stage by stage, resumable, on dask.

The command::

    python -m lagtheory.experiments.run confirmatory --stage grid|tuning|best|validation|all
        [--output PATH] [--workers N] [--scheduler tcp://HOST:PORT] [--device cpu|cuda] [--quiet]
        [--tuning PATH]                                          (best stage: the tuning record)
        [--seeds N] [--tasks NAME ...] [--optimisers sgd|adam ...] [--levels LABEL ...] [--steps T]  (trials)

Stages (the registered section's headings in quotes; cells and runs: :mod:`.design`):

* ``grid`` ("Regimes, cells, seeds", "Runs"): the 108 cells, joint and lag (T/4) at every base rate of the
  grid under both accountings (joint once: it is the same run under both), on the 100 confirmatory seeds.
  The shared-calibrated-rate variant ("Tuning, both ways") reads these runs at the cell's
  ``shared_rate`` (the exploratory calibration's rate of the cell, LP-FT the centre's), and outcome (c)
  reads all of them.
* ``tuning`` ("Tuning, both ways"): best-vs-best tuning on the exploratory seeds 0..29, evaluated on the
  validation set (test seed + 500); the record holds every run and, per cell and accounting, the chosen
  configuration of each schedule (lowest mean capped log10 held-out loss; ties to the smaller rate, then
  the shorter warm-up). Stored apart from the confirmatory records (it is no confirmatory record: its
  seeds are exploratory).
* ``best``: the chosen configurations that the grid does not hold (lag at a warm-up of 1/8 or 1/2; joint's
  choice and lag's at 1/4 are grid runs) on the confirmatory seeds; the record lists every choice.
* ``validation`` ("The predictor"): the 216 validation cells, each at the rate the exploratory calibration
  rule (:func:`lagtheory.experiments.exploratory.calibration.calibrate`) chooses on the calibration seeds, joint and lag
  (T/4) under equal total steps, on the confirmatory seeds.

``--stage all`` runs the four in this order, each to its default output (the whole registered sweep in one
command). Each unit (one cell, or the calibration or cells of one task and optimiser) is written atomically to
``<output>.units/`` when it finishes; the same command run again skips finished units (it resumes) and
refuses a folder written for another design. Every unit payload, and so its fingerprint, and every record
carry the registration hash; the command refuses to start when ``book/registration.md`` no longer hashes to
``book/data/registration.sha256``. Outputs go to ``runs/confirmatory/<stage>.json`` by default (outside
``book/data``, and ignored by git, while the sweep is partial).

Per run and seed a record stores (:func:`outcomes`) ``failed`` (held-out loss, the mean over the test sizes
above the training range, not finite or at or above that of the prediction 0: H1), ``test_loss``,
``zero_loss``, ``log10_test_loss`` (None where not finite), ``capped_log10_test_loss``
(:func:`lagtheory.experiments.exploratory.design.capped_log_loss`) and, for languages, ``recognised`` (the exact
worst-case check classifies every word of every checked length up to 1e12 right: H2) and ``horizon``.

The trial flags (``--seeds``, ``--tasks``, ``--optimisers``, ``--levels``, ``--steps``) run part of a stage
or a shorter budget; such a record says so in its ``trial`` field and is not the registered study.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from ..engine.cells import check_device, check_seeds, run_rows
from ..engine.distributed import run_units
from ..exploratory.calibration import calibrate
from ..exploratory.design import OPTIMISERS, TaskDesign, capped_log_loss, main_level
from ..exploratory.records import config_to_dict, versions
from ..exploratory.studies import STUDIES, design_of, task_payload
from .design import (
    ACCOUNTINGS,
    GRID_WARM_FRACTION,
    ConfirmatoryCell,
    Run,
    confirmatory_cells,
    confirmatory_tasks,
    grid_runs,
    run_config,
    tuning_runs,
    validation_levels,
    validation_setting,
)
from .registration import CONFIRMATORY_LEVELS, CONFIRMATORY_SEEDS, EXPLORATORY_SEEDS, page_hash, stored_hash

FORMAT = "lagtheory-confirmatory-1"
STAGES = ("grid", "tuning", "best", "validation")
OUTPUT_FOLDER = Path("runs") / "confirmatory"
"""Default folder of the stage records, under the working directory (the repository root)."""
BOOK_DATA = Path("book") / "data"


# -- per-run outcomes --------------------------------------------------------------------------------


def _stored(values: NDArray) -> list:
    """Per-seed values as JSON-ready Python numbers, non-finite floats as None."""
    out = []
    for value in np.asarray(values).tolist():
        out.append(None if isinstance(value, float) and not np.isfinite(value) else value)
    return out


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


# -- units -------------------------------------------------------------------------------------------


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
    design : TaskDesign
        The task.
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
    """The work of one unit: ``runs`` (every run of every cell of the payload, one batched
    :func:`lagtheory.experiments.engine.cells.run_rows` call, outcomes per run by :func:`outcomes`) or
    ``calibration`` (:func:`lagtheory.experiments.exploratory.calibration.calibrate` at the payload's levels). JSON-ready,
    with the registration hash, ``seconds`` of wall time and ``cpu_seconds`` of this process's CPU time (what
    one uncontended core would take).

    Parameters
    ----------
    payload : mapping
        A unit's payload: ``kind`` "runs" (:func:`unit_payload`) or "calibration" (``study``, ``task``,
        ``optimiser``, ``levels``, ``device``, ``registration``).

    Returns
    -------
    dict
        ``registration``, ``cells`` (cell name -> run key -> the run's fields, ``training`` and per-seed
        ``values``) or ``calibration``, ``seconds`` and ``cpu_seconds``.

    Raises
    ------
    ValueError
        If the payload's ``kind`` is neither "runs" nor "calibration".
    """
    start, cpu = time.perf_counter(), time.process_time()
    the_study = STUDIES[payload["study"]]
    design = design_of(the_study, payload["task"])
    if payload["kind"] == "calibration":
        task = the_study.build(design.name, design.setting)
        levels = [tuple(level) for level in payload["levels"]]
        result = calibrate(
            the_study,
            design,
            payload["optimiser"],
            task=task,
            device=payload["device"],
            levels=levels,
            keep_undefined=True,
        )
        return {
            "registration": payload["registration"],
            "calibration": result,
            "seconds": time.perf_counter() - start,
            "cpu_seconds": time.process_time() - cpu,
        }
    if payload["kind"] != "runs":
        raise ValueError(f"payload kind must be 'runs' or 'calibration', got {payload['kind']!r}")
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
            "values": {name: _stored(value[row]) for name, value in values.items()},
        }
    return {
        "registration": payload["registration"],
        "cells": cells,
        "seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu,
    }


# -- selection (best-vs-best) --------------------------------------------------------------------------


def choose(runs: Mapping[str, Mapping[str, Any]], schedule: str, accounting: str) -> dict[str, Any]:
    """The best configuration of ``schedule`` under ``accounting`` among a cell's tuning ``runs`` (run key ->
    stored run): the lowest mean over the seeds of the capped log10 held-out loss; ties to the smaller rate,
    then the shorter warm-up. Returns the run's fields and its ``mean``.

    Parameters
    ----------
    runs : mapping of str to mapping
        Run key -> stored run (its fields and per-seed ``values``, as :func:`run_unit` stores them).
    schedule : str
        "joint" or "lag".
    accounting : str
        "total" or "joint" (:data:`~lagtheory.experiments.confirmatory.design.ACCOUNTINGS`); a joint run
        (accounting "both") is a candidate under either.

    Returns
    -------
    dict
        ``schedule``, ``base_rate``, ``warm_fraction``, ``accounting`` of the chosen run and its ``mean``.

    Raises
    ------
    ValueError
        If ``schedule`` or ``accounting`` is not one of those, or ``runs`` holds no run of the schedule under
        the accounting.
    """
    if schedule not in ("joint", "lag") or accounting not in ACCOUNTINGS:
        raise ValueError(
            f"schedule must be 'joint' or 'lag' and accounting in {ACCOUNTINGS}, got {schedule!r}, {accounting!r}"
        )
    candidates = []
    for run in runs.values():
        if run["schedule"] != schedule or run["accounting"] not in ("both", accounting):
            continue
        mean = float(np.mean(np.asarray(run["values"]["capped_log10_test_loss"], dtype=np.float64)))
        candidates.append((mean, run["base_rate"], run["warm_fraction"] or 0.0, run))
    if not candidates:
        raise ValueError(f"runs hold no {schedule} run under accounting {accounting!r}")
    mean, _, _, best = min(candidates, key=lambda item: item[:3])
    return {key: best[key] for key in ("schedule", "base_rate", "warm_fraction", "accounting")} | {"mean": mean}


def best_runs(choices: Mapping[str, Mapping[str, Any]]) -> list[Run]:
    """The chosen runs of a cell (``choices``: "<schedule> <accounting>" -> :func:`choose`'s output) that the
    grid stage does not hold: lag at a warm-up other than 1/4 (joint's choice is a grid run, at every rate).

    Parameters
    ----------
    choices : mapping of str to mapping
        "<schedule> <accounting>" -> the chosen configuration (:func:`choose`'s output).

    Returns
    -------
    list of Run
        The distinct chosen lag runs at a warm-up other than 1/4, in the order of ``choices``.
    """
    runs = []
    for choice in choices.values():
        if choice["schedule"] == "lag" and choice["warm_fraction"] != GRID_WARM_FRACTION:
            run = Run("lag", choice["base_rate"], choice["warm_fraction"], choice["accounting"])
            if run not in runs:
                runs.append(run)
    return runs


# -- shared rates ------------------------------------------------------------------------------------


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
            records[cell.study] = json.loads((folder / f"summary_{cell.study}.json").read_text())["calibration"]
        base = records[cell.study][cell.task][cell.optimiser]["base_rates"]
        rates[cell.name] = float(base[main_level(cell.readout_scale, cell.ratio)])
    return rates


# -- the command -------------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    """The command line (module docstring).

    Returns
    -------
    argparse.ArgumentParser
        The parser of ``python -m lagtheory.experiments.run confirmatory``.
    """
    parse = argparse.ArgumentParser(
        prog="python -m lagtheory.experiments.run confirmatory",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parse.add_argument(
        "--stage", choices=(*STAGES, "all"), required=True, help="a stage, or all four in order (default outputs)"
    )
    parse.add_argument("--output", type=Path, default=None, help="default runs/confirmatory/<stage>.json")
    parse.add_argument(
        "--tuning", type=Path, default=None, help="best stage: the tuning record (default: its default output)"
    )
    parse.add_argument("--scheduler", default=None, help="address of a running dask scheduler, tcp://HOST:PORT")
    parse.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster (default 2)")
    parse.add_argument("--device", default="cpu", help="cpu (default) or cuda: where the workers train")
    parse.add_argument("--quiet", action="store_true", help="no progress bar")
    trial = parse.add_argument_group("trials (the record is marked as a trial, not the registered study)")
    trial.add_argument("--seeds", type=int, default=None, help="only the first N seeds of the stage")
    trial.add_argument("--tasks", nargs="+", default=None, help="only these tasks")
    trial.add_argument("--optimisers", nargs="+", default=None, choices=OPTIMISERS, help="only these optimisers")
    trial.add_argument("--levels", nargs="+", default=None, help="only these registered cells (labels)")
    trial.add_argument("--steps", type=int, default=None, help="step budget T of every task")
    return parse


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a command runs: the stage's tasks, optimisers, cell labels, seeds, and the trial flags used.

    Attributes
    ----------
    tasks : list of (str, TaskDesign)
        (study name, task design) of the tasks run, with the budget of ``--steps`` where given.
    optimisers : tuple of str
        The optimisers run.
    levels : tuple of str
        The registered cell labels run (keys of
        :data:`~lagtheory.experiments.confirmatory.registration.CONFIRMATORY_LEVELS`, in their order).
    seeds : tuple of int
        The seeds of the stage (the first ``--seeds`` where given).
    trial : dict or None
        The trial flags given, flag -> value; None for the registered study.
    """

    tasks: list[tuple[str, TaskDesign]]
    optimisers: tuple[str, ...]
    levels: tuple[str, ...]
    seeds: tuple[int, ...]
    trial: dict[str, Any] | None


def plan_of(args: argparse.Namespace, parse: argparse.ArgumentParser) -> Plan:
    """The tasks, cells and seeds of the command's stage, with the trial flags checked.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`parser`).
    parse : argparse.ArgumentParser
        Its parser, which reports an invalid flag.

    Returns
    -------
    Plan
        What the command runs.

    Raises
    ------
    SystemExit
        If ``--workers`` or ``--seeds`` is below 1, ``--steps`` below 4, ``--scheduler`` not an address,
        ``--tasks`` or ``--levels`` names an unknown task or label, ``--levels`` is given to the validation
        stage, or ``--seeds`` exceeds the stage's seeds (argparse's error, naming the option).
    """
    if args.workers < 1:
        parse.error(f"--workers must be at least 1, got {args.workers}")
    if args.seeds is not None and args.seeds < 1:
        parse.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.steps is not None and args.steps < 4:
        parse.error(f"--steps must be at least 4 (lag's warm-up is T/8 at least), got {args.steps}")
    if args.scheduler is not None and "://" not in args.scheduler:
        parse.error(f"--scheduler must be an address such as tcp://HOST:8786, got {args.scheduler!r}")
    tasks = confirmatory_tasks()
    if args.tasks is not None:
        names = [design.name for _, design in tasks]
        unknown = [name for name in args.tasks if name not in names]
        if unknown:
            parse.error(f"--tasks must be among {names}, got {unknown}")
        tasks = [(study, design) for study, design in tasks if design.name in args.tasks]
    if args.steps is not None:
        tasks = [(study, dataclasses.replace(design, steps=args.steps)) for study, design in tasks]
    levels = tuple(CONFIRMATORY_LEVELS)
    if args.levels is not None and args.stage == "validation":
        parse.error("--levels selects registered cells; the validation stage has its own (readout x ratio) cells")
    if args.levels is not None:
        unknown = [label for label in args.levels if label not in levels]
        if unknown:
            parse.error(f"--levels must be among {list(levels)}, got {unknown}")
        levels = tuple(label for label in levels if label in args.levels)
    all_seeds = EXPLORATORY_SEEDS if args.stage == "tuning" else CONFIRMATORY_SEEDS
    if args.seeds is not None and args.seeds > len(all_seeds):
        parse.error(f"--seeds must be at most {len(all_seeds)}, got {args.seeds}")
    seeds = all_seeds[: args.seeds] if args.seeds is not None else all_seeds
    flags = {name: getattr(args, name) for name in ("seeds", "tasks", "optimisers", "levels", "steps")}
    trial = {name: value for name, value in flags.items() if value is not None} or None
    optimisers = tuple(args.optimisers) if args.optimisers is not None else OPTIMISERS
    return Plan(tasks, optimisers, levels, tuple(seeds), trial)


def _cells_flags(trial: Mapping[str, Any] | None) -> dict[str, Any]:
    """The trial flags that decide the cells and their budgets (the seeds differ between stages)."""
    return {key: value for key, value in (trial or {}).items() if key != "seeds"}


def selected_cells(plan: Plan) -> list[ConfirmatoryCell]:
    """The registered cells of the plan's tasks, optimisers and labels.

    Parameters
    ----------
    plan : Plan
        What the command runs.

    Returns
    -------
    list of ConfirmatoryCell
        The cells, in :func:`~lagtheory.experiments.confirmatory.design.confirmatory_cells`' order.
    """
    cells = confirmatory_cells(plan.tasks, plan.optimisers)
    return [cell for cell in cells if cell.label in plan.levels]


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


def execute(units: Mapping[str, Any], args: argparse.Namespace, folder: Path, unit: str) -> dict[str, dict[str, Any]]:
    """Run the units on the cluster (:func:`lagtheory.experiments.engine.distributed.run_units`).

    Parameters
    ----------
    units : mapping of str to object
        Unit name -> payload for :func:`run_unit`.
    args : argparse.Namespace
        The parsed command line: its ``scheduler``, ``workers`` and ``quiet``.
    folder : pathlib.Path
        Where each finished unit is written (and found when the command resumes).
    unit : str
        What the progress bar counts ("cell", "calibration").

    Returns
    -------
    dict of str to dict
        Unit name -> :func:`run_unit`'s result, in the order of ``units``.

    Raises
    ------
    ValueError
        As :func:`~lagtheory.experiments.engine.distributed.run_units` raises it (an invalid ``workers`` or
        ``scheduler``, a unit name that is no file name, a folder written for other payloads).
    """
    weights = {name: max(1, len(payload.get("cells", [1]))) for name, payload in units.items()}
    return run_units(
        units,
        run_unit,
        folder,
        scheduler=args.scheduler,
        workers=args.workers,
        progress=not args.quiet,
        weights=weights,
        unit=unit,
    )


def main(arguments: list[str] | None = None) -> Path:
    """Parse the command line, run the stage's units, write its record; return the record's path (with
    ``--stage all``: every stage in ``STAGES`` order, each resuming from its own units; the last record's
    path).

    Parameters
    ----------
    arguments : list of str, optional
        The command line after ``confirmatory`` (default ``sys.argv[1:]``).

    Returns
    -------
    pathlib.Path
        The record written (the last stage's with ``--stage all``).

    Raises
    ------
    SystemExit
        If the command line is invalid (argparse's error, naming the option), the device is not available
        (checked without ``--scheduler``), ``book/registration.md`` no longer hashes to the stored hash, or
        the best stage's tuning record is of another registration or other trial flags.
    FileNotFoundError
        If the best stage's tuning record does not exist.
    """
    parse = parser()
    given = list(sys.argv[1:] if arguments is None else arguments)
    args = parse.parse_args(given)
    if args.stage == "all":
        if args.output is not None or args.tuning is not None:
            parse.error("--stage all writes every stage to its default output: drop --output and --tuning")
        rest = [a for k, a in enumerate(given) if a != "--stage" and given[k - 1 : k] != ["--stage"]]
        rest = [a for a in rest if not a.startswith("--stage=")]
        return [main(["--stage", stage, *rest]) for stage in STAGES][-1]
    plan = plan_of(args, parse)
    if args.scheduler is None:
        try:
            check_device(args.device)
        except ValueError as error:
            parse.error(f"--device: {error}")
    registration = stored_hash()
    if page_hash() != registration:
        parse.error("book/registration.md no longer hashes to book/data/registration.sha256: refusing to run")
    output = args.output or OUTPUT_FOLDER / f"{args.stage}.json"
    folder = output.with_name(output.name.removesuffix(".json") + ".units")
    command = shlex.join(
        [
            "python",
            "-m",
            "lagtheory.experiments.run",
            "confirmatory",
            *(arguments if arguments is not None else sys.argv[2:]),
        ]
    )
    torch.set_num_threads(1)
    designs = {design.name: (study, design) for study, design in plan.tasks}
    cells = selected_cells(plan)
    record: dict[str, Any] = {
        "format": FORMAT,
        "registration": registration,
        "stage": args.stage,
        "command": command,
        "versions": versions(),
        "seeds": list(plan.seeds),
        "trial": plan.trial,
        "cells": {},
        "seconds": {},  # unit -> [wall seconds, CPU seconds of its worker]
    }
    if args.stage == "validation":
        record.update(validation_stage(plan, args, folder, registration))
    else:
        validation_set = args.stage == "tuning"
        runs_of: dict[str, list[Run]] = {}
        if args.stage == "best":
            tuning = json.loads((args.tuning or OUTPUT_FOLDER / "tuning.json").read_text())
            if tuning.get("registration") != registration or tuning.get("stage") != "tuning":
                parse.error("--tuning must be a tuning record of this registration")
            if _cells_flags(tuning.get("trial")) != _cells_flags(plan.trial):
                parse.error(f"--tuning was run with trial flags {tuning.get('trial')}, this command with {plan.trial}")
            record["choices"] = {cell.name: tuning["choices"][cell.name] for cell in cells}
            runs_of = {cell.name: best_runs(record["choices"][cell.name]) for cell in cells}
        else:
            make = grid_runs if args.stage == "grid" else tuning_runs
            runs_of = {cell.name: make(cell.optimiser) for cell in cells}
        units = {
            f"{args.stage}-{cell.slug}": unit_payload(
                cell.study,
                designs[cell.task][1],
                [cell_payload(cell, runs_of[cell.name])],
                plan.seeds,
                registration,
                validation_set,
                args.device,
            )
            for cell in cells
            if runs_of[cell.name]
        }
        print(
            f"confirmatory {args.stage}: {len(units)} units, {len(plan.seeds)} seeds; units in {folder}",
            file=sys.stderr,
        )
        results = execute(units, args, folder, "cell")
        rates = shared_rates(cells)
        for cell in cells:
            design = designs[cell.task][1]
            record["cells"][cell.name] = {
                "configuration": cell_configuration(cell, design, validation_set),
                "shared_rate": rates[cell.name],
                "runs": {},
            }
        for name, result in results.items():
            for cell_name, runs in result["cells"].items():
                record["cells"][cell_name]["runs"] = runs
            record["seconds"][name] = [result["seconds"], result["cpu_seconds"]]
        if args.stage == "tuning":
            record["choices"] = {
                name: {
                    f"{schedule} {accounting}": choose(entry["runs"], schedule, accounting)
                    for schedule in ("joint", "lag")
                    for accounting in ACCOUNTINGS
                }
                for name, entry in record["cells"].items()
            }
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n")
    print(f"wrote {output}; to resume an interrupted run, run the same command again: {command}", file=sys.stderr)
    return output


def validation_stage(plan: Plan, args: argparse.Namespace, folder: Path, registration: str) -> dict[str, Any]:
    """The validation stage (module docstring): calibration units, then one unit of cells per task and
    optimiser; the record's ``calibration`` and ``cells``.

    Parameters
    ----------
    plan : Plan
        What the command runs (its tasks, optimisers and seeds).
    args : argparse.Namespace
        The parsed command line: its ``device``, ``scheduler``, ``workers`` and ``quiet``.
    folder : pathlib.Path
        Where each finished unit is written.
    registration : str
        The registration hash.

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
            "device": args.device,
        }
        for study, design in plan.tasks
        for optimiser in plan.optimisers
    }
    print(f"confirmatory validation: {len(calibration_units)} calibrations; units in {folder}", file=sys.stderr)
    calibrated = execute(calibration_units, args, folder, "calibration")
    out: dict[str, Any] = {"calibration": {}, "cells": {}, "uncalibrated": [], "seconds": {}}
    units = {}
    for study, design in plan.tasks:
        for optimiser in plan.optimisers:
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
                    study, design, cells, plan.seeds, registration, False, args.device
                )
    print(f"confirmatory validation: {len(units)} units of 12 cells, {len(plan.seeds)} seeds", file=sys.stderr)
    for name, result in execute(units, args, folder, "cell").items():
        for cell_name, runs in result["cells"].items():
            out["cells"][cell_name]["runs"] = runs
        out["seconds"][name] = [result["seconds"], result["cpu_seconds"]]
    return out
