"""The subcommands of the one command (:mod:`lagtheory.experiments.run`) beyond the exploratory studies and the
confirmatory study's stages: the transformer's pilot and registered study, the lag timing, and the analyses and
files written from committed records. Each is a :class:`Subcommand`: the options it takes (the command refuses the
others, naming them), its parts (``--part``, when it has several), where its record goes by default, and the
function that runs it.

To add a study: write its function ``(args, output, command) -> Path | None`` (``output`` is ``--output`` or the
default, checked by the command; ``command`` the command line to store in the record), add its
:class:`Subcommand` to :data:`SUBCOMMANDS` under its name, and name any new option in
:func:`lagtheory.experiments.run.parser`; the command's checks then apply to it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .confirmatory import analysis, answer, lag_study, records, sensitivity, stability, transformer_replication
from .confirmatory.transformer_analysis import analyse_record
from .confirmatory.transformer_design import write_design
from .confirmatory.transformer_runs import OUTPUT_FOLDER as TRANSFORMER_RUNS
from .confirmatory.transformer_runs import STUDY_FOLDER, run_registered
from .exploratory import lag_timing, reanalysis, transformer_groups, transformer_pilot, zero_readout
from .paths import CONFIRMATORY_RUNS, PREDICTOR_SUCCESSOR, RUNS, TRANSFORMER_DESIGN, WINDOW_SENSITIVITY
from .predictor import evaluation
from .predictor import transformer as predictor_transformer

Run = Callable[[argparse.Namespace, "Path | None", str], "Path | None"]


@dataclass(frozen=True)
class Subcommand:
    """One subcommand of :mod:`lagtheory.experiments.run`.

    Attributes
    ----------
    run : callable
        ``run(args, output, command)``: runs it and returns the file written (None when it only prints or writes
        the files of its own module).
    options : frozenset of str
        The options it takes (argparse's names: ``workers``, ``finished_only``, ...).
    parts : tuple of str
        The values of ``--part`` (required when not empty).
    output : callable or None
        ``output(args)``: the default record (None: it takes no ``--output``).
    """

    run: Run
    options: frozenset[str] = frozenset()
    parts: tuple[str, ...] = ()
    output: Callable[[argparse.Namespace], Path] | None = None


def _pilot(args: argparse.Namespace, output: Path | None, command: str) -> Path:
    assert output is not None
    return transformer_pilot.write_stage(args.stage, output, command, args.workers, args.quiet, args.finished_only)


def _registered(args: argparse.Namespace, output: Path | None, command: str) -> Path:
    assert output is not None
    if args.part == "design":
        return write_design(output)
    if args.part == "run":
        return run_registered(args.workers, output, command, args.quiet)
    return analyse_record(args.record[0] if args.record else STUDY_FOLDER / "study.json.gz", output)


def _lag_timing(args: argparse.Namespace, output: Path | None, command: str) -> Path:
    assert output is not None
    return lag_timing.main(output, args.design or TRANSFORMER_DESIGN)


def _confirmatory_analysis(args: argparse.Namespace, output: Path | None, command: str) -> Path:
    assert output is not None
    return analysis.analyse_records(args.record[0], args.record[1] if len(args.record) > 1 else None, output)


def _printed(function: Callable[[], object]) -> Run:
    def run(args: argparse.Namespace, output: Path | None, command: str) -> None:
        function()

    return run


def _records(args: argparse.Namespace, output: Path | None, command: str) -> None:
    for path in records.main():
        print(f"wrote {path}")


def _answer(args: argparse.Namespace, output: Path | None, command: str) -> None:
    print(answer.readme_paragraph(answer.plain_answer()))


def _replication(args: argparse.Namespace, output: Path | None, command: str) -> Path:
    assert output is not None
    return transformer_replication.write_part(
        args.part, output, args.record[0] if args.record else None, args.workers, args.quiet
    )


def _lag_study(args: argparse.Namespace, output: Path | None, command: str) -> Path:
    assert output is not None
    return lag_study.write_part(args.part, output, args.record[0] if args.record else None)


LAG_STUDY_PARTS = ("pilot", "design", "run", "analyse")
"""The parts of the registered lag study's command; its exploratory pilot, its design, its run, its analysis."""

REGISTERED_PARTS = ("design", "run", "analyse")
"""The parts of the registered transformer study's command; derive its design, run it, analyse its record."""
_REGISTERED_OUTPUTS = {"design": "design.json", "run": "study.json.gz", "analyse": "analysis.json"}

SUBCOMMANDS: dict[str, Subcommand] = {
    "transformer-pilot": Subcommand(
        _pilot,
        frozenset({"stage", "output", "overwrite", "workers", "quiet", "finished_only"}),
        output=lambda args: transformer_pilot.OUTPUT_FOLDER / f"{args.stage}.json.gz",
    ),
    "transformer-registered": Subcommand(
        _registered,
        frozenset({"part", "output", "overwrite", "workers", "quiet", "record"}),
        parts=REGISTERED_PARTS,
        output=lambda args: TRANSFORMER_RUNS / _REGISTERED_OUTPUTS[args.part],
    ),
    "transformer-replication": Subcommand(
        _replication,
        frozenset({"part", "output", "overwrite", "workers", "quiet", "record"}),
        parts=REGISTERED_PARTS,
        output=lambda args: (
            transformer_replication.OUTPUT_FOLDER
            / {"design": "design.json", "run": "replication.json.gz", "analyse": "analysis.json"}[args.part]
        ),
    ),
    "zero-readout": Subcommand(
        lambda args, output, command: zero_readout.write_record(output),
        frozenset({"output", "overwrite"}),
        output=lambda args: RUNS / "transformer_zero_readout.json",
    ),
    "lag-study": Subcommand(
        _lag_study,
        frozenset({"part", "output", "overwrite", "record"}),
        parts=LAG_STUDY_PARTS,
        output=lambda args: RUNS / "lag_study" / f"{args.part}.json",
    ),
    "transformer-groups": Subcommand(
        lambda args, output, command: transformer_groups.write_record(output, args.seeds),
        frozenset({"output", "overwrite", "seeds"}),
        output=lambda args: RUNS / "transformer_groups.json",
    ),
    "lag-timing": Subcommand(
        _lag_timing, frozenset({"output", "overwrite", "design"}), output=lambda args: RUNS / "lag_timing.json"
    ),
    "sensitivity": Subcommand(
        lambda args, output, command: sensitivity.main(output=output),
        frozenset({"output", "overwrite"}),
        output=lambda args: WINDOW_SENSITIVITY,
    ),
    "successor": Subcommand(
        lambda args, output, command: stability.main(output=output),
        frozenset({"output", "overwrite"}),
        output=lambda args: PREDICTOR_SUCCESSOR,
    ),
    "confirmatory-analysis": Subcommand(
        _confirmatory_analysis,
        frozenset({"record", "output", "overwrite"}),
        output=lambda args: CONFIRMATORY_RUNS / "analysis.json",
    ),
    "confirmatory-records": Subcommand(_records),
    "reanalysis": Subcommand(_printed(reanalysis.main)),
    "predictor": Subcommand(_printed(evaluation.main)),
    "predictor-transformer": Subcommand(_printed(predictor_transformer.main)),
    "answer": Subcommand(_answer),
}
"""Subcommand name -> :class:`Subcommand`."""
