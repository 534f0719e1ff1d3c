"""The registered transformer study's runs (``book/registration.md``, its transformer section): every compared
language and the control, joint and lag (T/4) at every rate of the design's grid, plus lag at its tuned
configuration where the grid does not hold it, on the registered seeds, with the registered test set; equal total
steps (:func:`study_units`). :func:`run_registered` runs them (resumable) and writes the study's record
(``runs/transformer_study/study.json.gz``; the committed copy is in ``book/data/transformer_study/``), refusing to
start when the registered section does not hash to its stored value or the design file is not the registered one.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from ..engine.config import TrainingConfig, config_from_dict
from ..engine.distributed import run_units
from ..exploratory.records import versions, write_gzipped
from ..exploratory.transformer_pilot import SEED_CHUNK
from ..parameters import fill_doc
from ..paths import REGISTRATION_PAGE, REGISTRATION_TRANSFORMER_HASH
from ..tasks.transformer.task import TransformerSetting
from ..tasks.transformer.units import run_unit, training_at, unit_payload
from .registration import page_hash, stored_hash
from .transformer_design import design_hash, load_design

FORMAT = "lagtheory-transformer-study-1"
STUDY_FOLDER = Path("book/data/transformer_study")
"""Where the committed study record and analysis are."""
OUTPUT_FOLDER = Path("runs") / "transformer_study"


@fill_doc
def study_rows(design: Mapping[str, Any], language: str) -> list[tuple[str, Any]]:
    """The runs of a language (module docstring): joint and lag (T/4) at every grid rate, and lag at its tuned
    configuration when the grid does not hold it (compared languages only).

    Parameters
    ----------
    %(design)s
    language : str
        A language of the design.

    Returns
    -------
    list of (str, TrainingConfig)
        The rows.
    """
    base = config_from_dict(TrainingConfig, design["training"])
    rows = []
    for rate in design["rates"]:
        rows += [("joint", training_at(rate, base=base)), ("lag", training_at(rate, 0.25, base=base))]
    if language in design["compared"]:
        lag = design["choices"][language]["lag"]
        if lag["warm_fraction"] != 0.25:
            rows.append(("lag", training_at(lag["rate"], lag["warm_fraction"], base=base)))
    return rows


@fill_doc
def study_units(design: Mapping[str, Any], registration: str, seeds: Sequence[int] | None = None) -> dict[str, Any]:
    """The study's units: per language (compared and control) and chunk of seeds, its rows.

    Parameters
    ----------
    %(design)s
    registration : str
        The transformer section's hash, carried by every payload.
    seeds : sequence of int, optional
        The seeds (default the design's).

    Returns
    -------
    dict of str to dict
        Unit name -> payload.
    """
    setting = config_from_dict(TransformerSetting, design["setting"])
    seeds = list(design["seeds"] if seeds is None else seeds)
    rows = {language: study_rows(design, language) for language in [*design["compared"], design["control"]]}
    return chunked_units("study", rows, setting, seeds, 4 * SEED_CHUNK, registration)


def chunked_units(
    prefix: str,
    rows: Mapping[str, Sequence[tuple[str, TrainingConfig]]],
    setting: TransformerSetting,
    seeds: Sequence[int],
    chunk: int,
    registration: str,
) -> dict[str, Any]:
    """Units named ``<prefix>-<language>-<first seed index>``: per language and chunk of seeds, its rows (the one
    unit builder of the registered study and its replication).

    Parameters
    ----------
    prefix : str
        The study's part (``"study"``, ``"replication"``).
    rows : mapping
        Language -> its (schedule, training) rows.
    setting : TransformerSetting
        The task's setting.
    seeds : sequence of int
        The seeds, cut into chunks of ``chunk``.
    chunk : int
        Seeds per unit.
    registration : str
        The registered section's hash, carried by every payload.

    Returns
    -------
    dict of str to dict
        Unit name -> payload.
    """
    units = {}
    for language, language_rows in rows.items():
        for start in range(0, len(seeds), chunk):
            payload = unit_payload(language, setting, list(language_rows), list(seeds[start : start + chunk]))
            units[f"{prefix}-{language}-{start}"] = {**payload, "registration": registration}
    return units


@fill_doc
def check_registered(
    page: Path = REGISTRATION_PAGE, hash_file: Path = REGISTRATION_TRANSFORMER_HASH, section: str = "transformer"
) -> str:
    """A registered section's stored hash (by default the transformer study's), after checking that the page
    still hashes to it.

    Parameters
    ----------
    %(page)s
    hash_file : pathlib.Path, optional
        The section's hash file.
    section : str, optional
        The section's name on the page (``"transformer"``, ``"replication"``).

    Returns
    -------
    str
        The hash.

    Raises
    ------
    ValueError
        If the section no longer hashes to the stored value.
    """
    registration = stored_hash(hash_file)
    if page_hash(page, section) != registration:
        raise ValueError(f"{page}'s {section} section no longer hashes to {hash_file}: refusing to run")
    return registration


def run_registered(workers: int, output: Path, command: str, quiet: bool = False) -> Path:
    """Run every unit of the registered study (resumable: finished units are kept in ``<output>.units``) and
    write its record: the registration hash, the design file's hash, the units with their per-seed values, and
    the wall time of this command.

    Parameters
    ----------
    workers : int
        Worker processes of the local dask cluster.
    output : pathlib.Path
        The study's record (gzipped JSON).
    command : str
        The command line that ran the study, stored in its record.
    quiet : bool, optional
        Whether to leave out the progress bar of the study's units.

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    start = time.perf_counter()
    registration = check_registered()
    design = load_design()
    torch.set_num_threads(1)
    units = study_units(design, registration)
    head = {"format": FORMAT, "registration": registration, "design_sha256": design_hash(), "command": command}
    return record_units(units, {**head, "seeds": list(design["seeds"])}, start, output, workers, quiet)


def record_units(
    units: Mapping[str, Any], head: Mapping[str, Any], start: float, output: Path, workers: int, quiet: bool
) -> Path:
    """Run a study's units (resumable: finished units are kept in ``<output>.units``) and write its record: the
    fields of ``head``, the package versions, the wall time since ``start`` and the units with their per-seed
    values; the one runner of the registered study and its replication.

    Parameters
    ----------
    units : mapping
        The units by name, each the payload of
        :func:`~lagtheory.experiments.tasks.transformer.units.run_unit` (its ``rows`` are not stored).
    head : mapping
        The record's own fields (format, registration hash, design file hash, command, seeds).
    start : float
        ``time.perf_counter()`` when the command began.
    output : pathlib.Path
        The record (gzipped JSON).
    workers : int
        Worker processes of the local dask cluster.
    quiet : bool
        Whether to leave out the progress bar.

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    folder = output.with_name(output.name.removesuffix(".json.gz") + ".units")
    results = run_units(units, run_unit, folder, workers=workers, progress=not quiet)
    record = {
        **head,
        "versions": versions(),
        "wall_seconds": time.perf_counter() - start,
        "units": {name: {**{k: v for k, v in units[name].items() if k != "rows"}, **results[name]} for name in units},
    }
    write_gzipped(record, output)
    return output


def seconds_per_run(record: Mapping[str, Any]) -> float:
    """Worker CPU seconds per run (one schedule on one seed) of a study record, over all its units.

    Parameters
    ----------
    record : mapping
        A study record (its ``units``, each with ``cpu_seconds``, ``rows`` and ``seeds``).

    Returns
    -------
    float
        CPU seconds per run.
    """
    units = record["units"].values()
    runs = sum(len(u["rows"]) * len(u["seeds"]) for u in units)
    return sum(u["cpu_seconds"] for u in units) / runs
