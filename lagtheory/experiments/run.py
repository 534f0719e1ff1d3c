"""Run a study of the empirical chapters on a dask cluster and write its per-seed record.

The command::

    python -m lagtheory.experiments.run languages|regression|icl|transformer|transformer_sinusoidal
        [--seeds N] [--output PATH] [--scheduler tcp://HOST:PORT] [--workers N] [--device cpu|cuda]
        [--tasks NAME ...] [--steps T]

calibrates the base rates (a calibrated study) and runs every cell of the study
(:func:`lagtheory.experiments.exploratory.studies.run_study`), each batch of cells (all cells of a task and
optimiser) as one unit of :func:`lagtheory.experiments.engine.distributed.run_units`: on a
``LocalCluster`` of ``--workers`` single-threaded worker processes of this machine, or on the
running cluster at ``--scheduler``. A progress bar counts the calibrations, then the cells. Every
finished unit is written at once to ``<output>.units/``; the same command run again skips them (it
resumes), and refuses a folder written for another design. The record goes to ``--output``
(default ``book/data/summary_<study>.json``) and the time of each task is printed.

``--device cuda`` trains on the workers' GPU (:func:`lagtheory.experiments.engine.cells.run_rows`); on a
machine without one the command refuses. ``--tasks`` and ``--steps`` run part of a study, or all of
it with another step budget T: a trial, not the study's design (the record's configurations say
what ran). The command::

    python -m lagtheory.experiments.run confirmatory --stage grid|tuning|best|validation|all [...]

runs a stage of the registered confirmatory study instead (:mod:`lagtheory.experiments.confirmatory.runs`;
``python -m lagtheory.experiments.run confirmatory --help``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from .engine.cells import check_device
from .engine.distributed import finished, run_units
from .exploratory.records import write_record
from .exploratory.studies import STUDIES, run_study

BOOK_DATA = Path("book") / "data"
"""Where records go by default; ``book/data`` under the working directory, the repository root
(the package may be installed as a wheel, far from any checkout)."""


def parser() -> argparse.ArgumentParser:
    """The command line (module docstring)."""
    parse = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parse.add_argument("study", choices=sorted(STUDIES))
    parse.add_argument("--seeds", type=int, default=None, help="seeds 0..N-1 (default: the study's number)")
    parse.add_argument(
        "--output", type=Path, default=None, help="default book/data/summary_<study>.json under the working directory"
    )
    parse.add_argument("--scheduler", default=None, help="address of a running dask scheduler, tcp://HOST:PORT")
    parse.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster (default 2)")
    parse.add_argument("--device", default="cpu", help="cpu (default) or cuda: where the workers train")
    parse.add_argument("--tasks", nargs="+", default=None, help="run only these tasks of the study")
    parse.add_argument("--steps", type=int, default=None, help="step budget T of every task (default: the study's)")
    parse.add_argument("--quiet", action="store_true", help="no progress bar")
    return parse


def main(arguments: list[str] | None = None) -> Path:
    """Parse the command line, run the study's units, write the record; return its path (``confirmatory``:
    :func:`lagtheory.experiments.confirmatory.runs.main` with the other arguments).

    Parameters
    ----------
    arguments : list of str, optional
        The command line without the program's name (default ``sys.argv[1:]``).

    Returns
    -------
    pathlib.Path
        The record written.

    Raises
    ------
    SystemExit
        If the command line is invalid (argparse's error, naming the option).
    """
    given = sys.argv[1:] if arguments is None else arguments
    if given[:1] == ["confirmatory"]:
        from .confirmatory.runs import main as confirmatory_main

        return confirmatory_main(given[1:])
    parse = parser()
    args = parse.parse_args(arguments)
    if args.output is None and not BOOK_DATA.is_dir():
        parse.error(
            f"--output: no folder {BOOK_DATA} in the working directory; run from the repository root or pass a path"
        )
    if args.workers < 1:
        parse.error(f"--workers must be at least 1, got {args.workers}")
    if args.seeds is not None and args.seeds < 1:
        parse.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.steps is not None and args.steps < 1:
        parse.error(f"--steps must be at least 1, got {args.steps}")
    if args.scheduler is not None and "://" not in args.scheduler:
        parse.error(f"--scheduler must be an address such as tcp://HOST:8786, got {args.scheduler!r}")
    if args.scheduler is None:  # a remote cluster's workers may have a GPU that this client lacks
        try:
            check_device(args.device)
        except ValueError as error:
            parse.error(f"--device: {error}")
    the_study = STUDIES[args.study]
    tasks = the_study.tasks
    if args.tasks is not None:
        names = [design.name for design in tasks]
        unknown = [name for name in args.tasks if name not in names]
        if unknown:
            parse.error(f"--tasks must be among {names}, got {unknown}")
        tasks = tuple(design for design in tasks if design.name in args.tasks)
    if args.steps is not None:
        tasks = tuple(dataclasses.replace(design, steps=args.steps) for design in tasks)
    the_study = dataclasses.replace(the_study, tasks=tasks)
    seeds = tuple(range(args.seeds if args.seeds is not None else the_study.seeds))
    output = args.output or BOOK_DATA / f"summary_{the_study.name}.json"
    folder = output.with_name(output.name.removesuffix(".json") + ".units")
    command = shlex.join(["python", "-m", "lagtheory.experiments.run", *(arguments or sys.argv[1:])])

    torch.set_num_threads(1)
    print(
        f"{the_study.name}: {len(the_study.tasks)} tasks x {len(the_study.optimisers)} optimisers, {len(seeds)} seeds; "
        f"units in {folder}",
        file=sys.stderr,
    )
    with contextlib.ExitStack() as stack:
        scheduler: list[str] = [] if args.scheduler is None else [args.scheduler]

        def on_cluster(
            units: Mapping[str, Any], work: Callable[[Any], Mapping[str, Any]], weights: Mapping[str, int], unit: str
        ) -> Mapping[str, Any]:
            if not scheduler and set(units) - set(finished(units, folder)):
                # one local cluster for the whole run (calibrations, then cells), started once there is work
                from dask.distributed import LocalCluster

                cluster = stack.enter_context(
                    LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0")
                )
                scheduler.append(cluster.scheduler_address)
            return run_units(
                units,
                work,
                folder,
                scheduler=scheduler[0] if scheduler else None,
                progress=not args.quiet,
                weights=weights,
                unit=unit,
            )

        record = run_study(the_study, seeds, command, on_cluster, device=args.device)
    for task, value in record["seconds"].items():
        print(f"{task}: {value} s of work (calibration and cells, every optimiser)", file=sys.stderr)
    write_record(record, output)
    print(f"wrote {output}; to resume an interrupted run, run the same command again: {command}", file=sys.stderr)
    return output


if __name__ == "__main__":
    main()
