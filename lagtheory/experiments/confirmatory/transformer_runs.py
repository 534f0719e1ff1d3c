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
    %(transformer_design)s
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
    %(transformer_design)s
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
    chunk = 4 * SEED_CHUNK
    units = {}
    for language in [*design["compared"], design["control"]]:
        for start in range(0, len(seeds), chunk):
            payload = unit_payload(language, setting, study_rows(design, language), seeds[start : start + chunk])
            units[f"study-{language}-{start}"] = {**payload, "registration": registration}
    return units


@fill_doc
def check_registered(page: Path = REGISTRATION_PAGE, hash_file: Path = REGISTRATION_TRANSFORMER_HASH) -> str:
    """The transformer section's stored hash, after checking that the page still hashes to it.

    Parameters
    ----------
    %(registration_page)s
    hash_file : pathlib.Path, optional
        The section's hash file.

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
    if page_hash(page, "transformer") != registration:
        raise ValueError(f"{page}'s transformer section no longer hashes to {hash_file}: refusing to run")
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
    folder = output.with_name(output.name.removesuffix(".json.gz") + ".units")
    results = run_units(units, run_unit, folder, workers=workers, progress=not quiet)
    record = {
        "format": FORMAT,
        "registration": registration,
        "design_sha256": design_hash(),
        "command": command,
        "versions": versions(),
        "seeds": list(design["seeds"]),
        "wall_seconds": time.perf_counter() - start,
        "units": {name: {**{k: v for k, v in units[name].items() if k != "rows"}, **results[name]} for name in units},
    }
    write_gzipped(record, output)
    return output
