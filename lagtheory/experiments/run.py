"""The one command of the experiments: run a study of the empirical chapters, or a stage of the registered
confirmatory study, on a dask cluster, and write its record; or any other study, stage or analysis of the
experiments (:data:`~lagtheory.experiments.subcommands.SUBCOMMANDS`). One option parser serves every study and
stage, and checks each option once: an option a subcommand does not take is refused, naming it.

The command::

    python -m lagtheory.experiments.run languages|regression|icl|transformer|transformer_sinusoidal
        [--seeds N] [--tasks NAME ...] [--steps T]
        [--output PATH] [--overwrite] [--scheduler tcp://HOST:PORT] [--workers N] [--device cpu|cuda] [--quiet]

calibrates the base rates (a calibrated study) and runs every cell of the study
(:func:`lagtheory.experiments.exploratory.runner.run_study`), each batch of cells (all cells of a task and
optimiser) as one unit of :func:`lagtheory.experiments.engine.distributed.run_units`. The command::

    python -m lagtheory.experiments.run confirmatory --stage grid|tuning|best|validation|all
        [the same options] [--optimisers sgd|adam ...] [--levels LABEL ...] [--tuning PATH]

runs a stage of the registered confirmatory study (:mod:`lagtheory.experiments.confirmatory.stages`; ``all``:
the four in order, a stage whose record this same command already wrote is kept). It refuses to start when
``book/registration.md`` no longer hashes to ``book/data/registration.sha256``.

Units run on a ``LocalCluster`` of ``--workers`` single-threaded worker processes of this machine, started once
there is work, or on the running cluster at ``--scheduler``; a progress bar counts them. Every finished unit
is written at once to ``<output>.units/``; the same command run again skips them (it resumes), and refuses a
folder written for another design. The record goes to ``--output``: by default
``runs/summary_<study>.json`` or ``runs/confirmatory/<stage>.json`` under the working directory, a folder git
ignores (:mod:`lagtheory.experiments.paths`). The command never writes over an existing record: it refuses
before any work unless ``--overwrite`` is given, so a trial run cannot replace the book's committed record
(to replace it on purpose, pass its path to ``--output`` with ``--overwrite``).

``--device cuda`` trains on the workers' GPU (:func:`lagtheory.experiments.engine.cells.run_rows`); on a machine
without one the command refuses. ``--seeds``, ``--tasks``, ``--steps`` (and for the confirmatory study
``--optimisers``, ``--levels``) run part of a study or stage, or all of it with another step budget T: a trial,
not the study's design (the record's configurations say what ran; a confirmatory record says so in its
``trial`` field).

The other subcommands (:mod:`lagtheory.experiments.subcommands`)::

    python -m lagtheory.experiments.run transformer-pilot --stage configuration|tuning|diagnostics
        [--output PATH] [--overwrite] [--workers N] [--quiet] [--finished-only]
    python -m lagtheory.experiments.run transformer-registered --part design|run|analyse
        [--output PATH] [--overwrite] [--workers N] [--quiet] [--record PATH]
    python -m lagtheory.experiments.run transformer-replication --part design|run|analyse
        [--output PATH] [--overwrite] [--workers N] [--quiet] [--record PATH]
    python -m lagtheory.experiments.run zero-readout [--output PATH] [--overwrite]
    python -m lagtheory.experiments.run lag-study --part pilot|design|run|analyse [--output PATH] [--overwrite]
        [--record PATH]
    python -m lagtheory.experiments.run transformer-groups [--seeds N] [--output PATH] [--overwrite]
    python -m lagtheory.experiments.run lag-timing [--output PATH] [--overwrite] [--design PATH]
    python -m lagtheory.experiments.run sensitivity|successor [--output PATH] [--overwrite]
    python -m lagtheory.experiments.run confirmatory-analysis --record GRID [BEST] [--output PATH] [--overwrite]
    python -m lagtheory.experiments.run confirmatory-records|reanalysis|predictor|predictor-transformer|answer

run the transformer's pilot (:mod:`lagtheory.experiments.exploratory.transformer_pilot`), registered study
(:mod:`lagtheory.experiments.confirmatory.transformer`), its registered replication
(:mod:`lagtheory.experiments.confirmatory.transformer_replication`) and zero-readout pilot
(:mod:`lagtheory.experiments.exploratory.zero_readout`), the registered lag study
(:mod:`lagtheory.experiments.confirmatory.lag_study`) and which group of the transformer carries the decision
(:mod:`lagtheory.experiments.exploratory.transformer_groups`), the lag timing
(:mod:`lagtheory.experiments.exploratory.lag_timing`), outcome (c)'s Monte Carlo error
(:mod:`lagtheory.experiments.confirmatory.sensitivity`), the successor to the predictor
(:mod:`lagtheory.experiments.confirmatory.stability`), the confirmatory analysis of two stage records, and the
files written from the committed records. The module commands that the book quotes
(:data:`ALIASES`, e.g. ``python -m lagtheory.experiments.confirmatory.transformer run``, which its registered
section quotes) are aliases: they call :func:`alias`, which runs this command.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import torch

from lagtheory.training import OPTIMISERS

from .confirmatory.registration import page_hash, stored_hash
from .confirmatory.stages import STAGES, TRIAL_OPTIONS, check_tuning, plan, run_stage
from .engine.cells import check_device
from .engine.distributed import close_workers, finished, run_units
from .exploratory.records import write_record
from .exploratory.runner import run_study
from .exploratory.studies import STUDIES
from .exploratory.transformer_pilot import PILOT_STAGES
from .paths import CONFIRMATORY_RUNS, RUNS, record_path, units_folder
from .subcommands import SUBCOMMANDS

CONFIRMATORY = "confirmatory"
"""The name the command gives the registered confirmatory study."""
MIN_STEPS = 4
"""The shortest step budget T of a trial, so that every warm-up is at least one step (lag's T/8 in tuning)."""
STUDY_OPTIONS = frozenset({"output", "overwrite", "scheduler", "workers", "device", "quiet", "seeds", "tasks", "steps"})
"""The options of an exploratory study (:data:`~lagtheory.experiments.exploratory.studies.STUDIES`)."""
CONFIRMATORY_OPTIONS = STUDY_OPTIONS | {"optimisers", "levels", "stage", "tuning"}
"""The options of the confirmatory study's stages."""
ALIASES: dict[str, tuple[str, bool]] = {
    "lagtheory.experiments.confirmatory.transformer": ("transformer-registered", True),
    "lagtheory.experiments.exploratory.transformer_pilot": ("transformer-pilot", False),
    "lagtheory.experiments.exploratory.reanalysis": ("reanalysis", False),
    "lagtheory.experiments.predictor.evaluation": ("predictor", False),
    "lagtheory.experiments.predictor.transformer": ("predictor-transformer", False),
    "lagtheory.experiments.confirmatory.records": ("confirmatory-records", False),
    "lagtheory.experiments.confirmatory.transformer_replication": ("transformer-replication", True),
    "lagtheory.experiments.confirmatory.lag_study": ("lag-study", True),
}
"""The module commands the book quotes (the registered transformer section, the registration page's dated
entries, the confirmatory chapter), each kept as an alias of a subcommand: module -> (subcommand, whether the
module's first argument is the subcommand's ``--part``). No other module of the package is runnable (a test)."""


def options_of(study: str) -> frozenset[str]:
    """The options subcommand ``study`` takes (argparse's names).

    Parameters
    ----------
    study : str
        A subcommand of the command.

    Returns
    -------
    frozenset of str
        Its options.
    """
    if study == CONFIRMATORY:
        return CONFIRMATORY_OPTIONS
    return STUDY_OPTIONS if study in STUDIES else SUBCOMMANDS[study].options


def parser() -> argparse.ArgumentParser:
    """The command line (module docstring), one for every study and stage.

    Returns
    -------
    argparse.ArgumentParser
        The parser of ``python -m lagtheory.experiments.run``.
    """
    parse = argparse.ArgumentParser(
        prog="python -m lagtheory.experiments.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parse.add_argument("study", choices=[*sorted(STUDIES), CONFIRMATORY, *SUBCOMMANDS])
    parse.add_argument("--output", type=Path, default=None, help="default runs/summary_<study>.json (ignored by git)")
    parse.add_argument("--overwrite", action="store_true", help="replace the record at --output if it exists")
    parse.add_argument("--scheduler", default=None, help="address of a running dask scheduler, tcp://HOST:PORT")
    parse.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster (default 2)")
    parse.add_argument("--device", default="cpu", help="cpu (default) or cuda: where the workers train")
    parse.add_argument("--quiet", action="store_true", help="no progress bar")
    trial = parse.add_argument_group("trials (part of a study or stage, or another budget: not its design)")
    trial.add_argument("--seeds", type=int, default=None, help="a study: seeds 0..N-1; a stage: its first N seeds")
    trial.add_argument("--tasks", nargs="+", default=None, help="only these tasks")
    trial.add_argument("--steps", type=int, default=None, help=f"step budget T of every task (at least {MIN_STEPS})")
    trial.add_argument("--optimisers", nargs="+", default=None, choices=OPTIMISERS, help="confirmatory: only these")
    trial.add_argument("--levels", nargs="+", default=None, help="confirmatory: only these registered cells (labels)")
    stage = parse.add_argument_group("the confirmatory study and the transformer pilot")
    stage.add_argument(
        "--stage",
        choices=(*STAGES, "all", *PILOT_STAGES),
        default=None,
        help=f"confirmatory: a stage of {STAGES}, or all four in order; transformer-pilot: one of {PILOT_STAGES}",
    )
    stage.add_argument("--tuning", type=Path, default=None, help="the best stage's tuning record (default: its output)")
    other = parse.add_argument_group("the other subcommands")
    parts = sorted({part for subcommand in SUBCOMMANDS.values() for part in subcommand.parts})
    other.add_argument(
        "--part",
        choices=parts,
        default=None,
        help="transformer-registered, transformer-replication: design, run or analyse",
    )
    other.add_argument("--finished-only", action="store_true", help="transformer-pilot: a record of the finished units")
    other.add_argument("--record", type=Path, nargs="+", default=None, help="the record(s) an analysis reads")
    other.add_argument("--design", type=Path, default=None, help="lag-timing: the transformer study's design file")
    return parse


def described(options: frozenset[str]) -> list[str]:
    """Options as the command line spells them, sorted (``finished_only`` -> ``--finished-only``).

    Parameters
    ----------
    options : frozenset of str
        argparse's names.

    Returns
    -------
    list of str
        The options.
    """
    return sorted(f"--{option.replace('_', '-')}" for option in options)


def check(args: argparse.Namespace, parse: argparse.ArgumentParser) -> None:
    """Every check of an option that does not depend on the study's design, made once for all studies.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    parse : argparse.ArgumentParser
        Its parser, which reports an invalid option.

    Raises
    ------
    SystemExit
        If ``--workers`` or ``--seeds`` is below 1, ``--steps`` below :data:`MIN_STEPS`, ``--scheduler`` is no
        address, the device is not available (checked without ``--scheduler``: a remote cluster's workers may
        have a GPU this client lacks), an option is given to a subcommand that does not take it
        (:func:`options_of`), ``--stage`` or ``--part`` is missing where required or not one of the subcommand's,
        or ``--record`` names more records than the subcommand reads (argparse's error, naming the option).
    """
    if args.workers < 1:
        parse.error(f"--workers must be at least 1, got {args.workers}")
    if args.seeds is not None and args.seeds < 1:
        parse.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.steps is not None and args.steps < MIN_STEPS:
        parse.error(f"--steps must be at least {MIN_STEPS} (every warm-up at least one step), got {args.steps}")
    if args.scheduler is not None and "://" not in args.scheduler:
        parse.error(f"--scheduler must be an address such as tcp://HOST:8786, got {args.scheduler!r}")
    taken = options_of(args.study)
    for name in sorted(vars(args)):
        if name != "study" and name not in taken and getattr(args, name) != parse.get_default(name):
            option = described(frozenset({name}))[0]
            if name in CONFIRMATORY_OPTIONS - STUDY_OPTIONS:
                parse.error(f"{option} applies to the {CONFIRMATORY} study only")
            parse.error(
                f"{option} does not apply to {args.study} (it takes {', '.join(described(options_of(args.study))) or 'no options'})"
            )
    if "stage" in taken and args.stage is None:
        parse.error(f"--stage is required by {args.study}")
    stages = (*STAGES, "all") if args.study == CONFIRMATORY else PILOT_STAGES
    if args.stage is not None and args.stage not in stages:
        parse.error(f"--stage of {args.study} must be one of {stages}, got {args.stage!r}")
    parts = SUBCOMMANDS[args.study].parts if args.study in SUBCOMMANDS else ()
    if parts and args.part is None:
        parse.error(f"--part is required by {args.study}: one of {parts}")
    if args.record is not None:
        most = 2 if args.study == "confirmatory-analysis" else 1
        if len(args.record) > most or (args.study == "transformer-registered" and args.part != "analyse"):
            parse.error(
                f"--record takes at most {most} record(s) for {args.study} (transformer-registered: analyse only)"
            )
    if args.study == "confirmatory-analysis" and args.record is None:
        parse.error("--record is required by confirmatory-analysis: the grid record, and the best record if any")
    if "device" in taken and args.scheduler is None:
        try:
            check_device(args.device)
        except ValueError as error:
            parse.error(f"--device: {error}")


def command_line(arguments: list[str]) -> str:
    """The command a record stores: ``python -m lagtheory.experiments.run`` and ``arguments``.

    Parameters
    ----------
    arguments : list of str
        The command line after the program's name.

    Returns
    -------
    str
        The command, quoted for a POSIX shell.
    """
    return shlex.join(["python", "-m", "lagtheory.experiments.run", *arguments])


@contextlib.contextmanager
def cluster(args: argparse.Namespace, folder: Path) -> Iterator[Callable[..., Mapping[str, Any]]]:
    """How the command's units run: ``execute(units, work, weights, unit)`` on the cluster at ``--scheduler``, or
    on one local cluster of ``--workers`` processes started when there is first a unit to run (a resumed run
    whose units are all written starts none) and shut down at the end of the block.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line: its ``scheduler``, ``workers`` and ``quiet``.
    folder : pathlib.Path
        Where each finished unit is written (and found when the command resumes).

    Yields
    ------
    callable
        ``execute(units, work, weights, unit)``: unit name -> result
        (:func:`lagtheory.experiments.engine.distributed.run_units`).
    """
    with contextlib.ExitStack() as stack:
        scheduler: list[str] = [] if args.scheduler is None else [args.scheduler]

        def execute(
            units: Mapping[str, Any], work: Callable[[Any], Mapping[str, Any]], weights: Mapping[str, int], unit: str
        ) -> Mapping[str, Any]:
            if not scheduler and set(units) - set(finished(units, folder)):
                from dask.distributed import LocalCluster

                local = stack.enter_context(
                    LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0")
                )
                stack.callback(close_workers, local)  # before the cluster closes: no worker killed while exiting
                scheduler.append(local.scheduler_address)
            return run_units(
                units,
                work,
                folder,
                scheduler=scheduler[0] if scheduler else None,
                progress=not args.quiet,
                weights=weights,
                unit=unit,
            )

        yield execute


def output_of(args: argparse.Namespace, parse: argparse.ArgumentParser, default: Path) -> Path:
    """The record's path (``--output``, or ``default``); refused if it exists and ``--overwrite`` is not given.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    parse : argparse.ArgumentParser
        Its parser.
    default : pathlib.Path
        The default output.

    Returns
    -------
    pathlib.Path
        The path, its folder created.

    Raises
    ------
    SystemExit
        If the record exists and ``--overwrite`` is not given.
    """
    output = args.output or default
    if output.exists() and not args.overwrite:
        parse.error(f"--output: {output} exists; pass --overwrite to replace it, or another --output")
    output.parent.mkdir(parents=True, exist_ok=True)
    return output


def main(arguments: list[str] | None = None) -> Path | None:
    """Parse the command line, run the study's or stage's units, write the record; return its path (with
    ``--stage all``, the last stage's).

    Parameters
    ----------
    arguments : list of str, optional
        The command line without the program's name (default ``sys.argv[1:]``).

    Returns
    -------
    pathlib.Path or None
        The record written (None for a subcommand that only prints, or writes its module's own files).

    Raises
    ------
    SystemExit
        If the command line is invalid (argparse's error, naming the option: :func:`check`, the study's design,
        an existing record without ``--overwrite``), or ``book/registration.md`` no longer hashes to the stored
        hash (confirmatory).
    """
    given = list(sys.argv[1:] if arguments is None else arguments)
    parse = parser()
    args = parse.parse_args(given)
    check(args, parse)
    torch.set_num_threads(1)
    if args.study in SUBCOMMANDS:
        subcommand = SUBCOMMANDS[args.study]
        output = None if subcommand.output is None else output_of(args, parse, subcommand.output(args))
        written = subcommand.run(args, output, command_line(given))
        if written is not None:
            print(f"wrote {written}", file=sys.stderr)
        return written
    if args.study == CONFIRMATORY:
        return confirmatory(args, parse, given)
    the_study = STUDIES[args.study]
    tasks = the_study.tasks
    if args.tasks is not None:
        names = [design.name for design in tasks]
        if unknown := [name for name in args.tasks if name not in names]:
            parse.error(f"--tasks must be among {names}, got {unknown}")
        tasks = tuple(design for design in tasks if design.name in args.tasks)
    if args.steps is not None:
        tasks = tuple(dataclasses.replace(design, steps=args.steps) for design in tasks)
    the_study = dataclasses.replace(the_study, tasks=tasks)
    seeds = tuple(range(args.seeds if args.seeds is not None else the_study.seeds))
    output = output_of(args, parse, record_path(the_study.name, RUNS))
    folder = units_folder(output)
    command = command_line(given)
    print(
        f"{the_study.name}: {len(the_study.tasks)} tasks x {len(the_study.optimisers)} optimisers, {len(seeds)} seeds; "
        f"units in {folder}",
        file=sys.stderr,
    )
    with cluster(args, folder) as execute:
        record = run_study(the_study, seeds, command, execute, device=args.device)
    for task, value in record["seconds"].items():
        print(f"{task}: {value} s of work (calibration and cells, every optimiser)", file=sys.stderr)
    write_record(record, output)
    print(f"wrote {output}", file=sys.stderr)
    return output


def confirmatory(args: argparse.Namespace, parse: argparse.ArgumentParser, given: list[str]) -> Path:
    """The confirmatory study's part of :func:`main`: one stage, or every stage in order (``--stage all``).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (checked by :func:`check`).
    parse : argparse.ArgumentParser
        Its parser.
    given : list of str
        The command line, as given.

    Returns
    -------
    pathlib.Path
        The record written (with ``--stage all``, the last stage's).

    Raises
    ------
    SystemExit
        As :func:`main` raises it.
    """
    if args.stage == "all":
        if args.output is not None or args.tuning is not None:
            parse.error("--stage all writes every stage to its default output: drop --output and --tuning")
        rest = [a for k, a in enumerate(given) if a != "--stage" and given[k - 1 : k] != ["--stage"]]
        rest = [a for a in rest if not a.startswith("--stage=")]
        rest.remove(CONFIRMATORY)
        last = CONFIRMATORY_RUNS / f"{STAGES[-1]}.json"
        for stage in STAGES:
            existing = CONFIRMATORY_RUNS / f"{stage}.json"
            stage_arguments = [CONFIRMATORY, "--stage", stage, *rest]
            if existing.exists() and not args.overwrite:
                written = json.loads(existing.read_text()).get("command")
                if written != command_line(stage_arguments):
                    parse.error(f"{existing} exists, written by {written!r}; pass --overwrite to replace it")
                print(f"confirmatory {stage}: {existing} exists, written by this command; kept", file=sys.stderr)
            else:
                last = main(stage_arguments)
        return last
    output = output_of(args, parse, CONFIRMATORY_RUNS / f"{args.stage}.json")
    try:
        the_plan = plan(args.stage, **{name: getattr(args, name) for name in TRIAL_OPTIONS})
    except ValueError as error:
        parse.error(str(error))
    registration = stored_hash()
    if page_hash() != registration:
        parse.error("book/registration.md no longer hashes to book/data/registration.sha256: refusing to run")
    tuning = None
    if args.stage == "best":
        tuning = json.loads((args.tuning or CONFIRMATORY_RUNS / "tuning.json").read_text())
        try:
            check_tuning(tuning, registration, the_plan)
        except ValueError as error:
            parse.error(str(error))
    folder = units_folder(output)
    command = command_line(given)
    print(f"confirmatory {args.stage}: units in {folder}", file=sys.stderr)
    with cluster(args, folder) as execute:
        record = run_stage(the_plan, execute, registration, command, args.device, tuning)
    output.write_text(json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n")
    print(f"wrote {output}", file=sys.stderr)
    return output


def alias(module: str, arguments: list[str] | None = None) -> Path | None:
    """Run the command as the module command ``python -m <module>`` that the book quotes (:data:`ALIASES`): the
    same arguments (its first one as ``--part`` where the module took it as a word), the same code.

    Parameters
    ----------
    module : str
        A key of :data:`ALIASES`.
    arguments : list of str, optional
        The module command's arguments (default ``sys.argv[1:]``).

    Returns
    -------
    pathlib.Path or None
        As :func:`main` returns it.
    """
    study, first_is_part = ALIASES[module]
    given = list(sys.argv[1:] if arguments is None else arguments)
    if first_is_part and given and not given[0].startswith("-"):
        given = ["--part", *given]
    return main([study, *given])


if __name__ == "__main__":
    main()
