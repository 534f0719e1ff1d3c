"""A replication of the registered transformer study that can decide (``book/registration.md``, its replication
section): the design as frozen data, its units, and its registered analysis.

**The design** (:func:`derive_replication`) is derived once from the registered study's design and record and
stored in :data:`REPLICATION_DESIGN`; the registered section quotes the file's SHA-256, and
:func:`load_replication` refuses a file with another hash. It repeats the registered study's model,
training and test words on the compared languages at the shared rate and at each schedule's tuned configuration
(:func:`replication_rows`), on fresh seeds :data:`FIRST_SEED` onwards, as many as
:func:`~lagtheory.experiments.confirmatory.transformer_report.replication_plan` finds for power
:data:`~lagtheory.experiments.confirmatory.transformer_design.TARGET_POWER` against the minimum effect of interest
:data:`~lagtheory.experiments.confirmatory.transformer_report.EFFECT` (five percentage points) at the largest
discordance the registered run observed.

**Runs** (:func:`replication_units`): per language, chunks of :data:`UNIT_SEEDS` seeds, every row of the
language in one batched engine call; the run resumes from its finished units.

**Analysis** (:func:`analyse_replication`): per outcome (failure; recognition at 16 N0) and variant, a family of
the compared languages; per language McNemar's exact test of the difference and the paired equivalence test
within the effect (two one-sided score tests on ``p10 - p01``), each with Holm's adjustment within the family;
verdicts: *helps* or *hurts* where the difference is shown (direction by the larger discordant count), with
the 95% score interval of lag's advantage; *equivalent* where only equivalence is shown; *undetermined*
otherwise, with the power against the discordances observed.
"""

from __future__ import annotations

import gzip
import json
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..engine.config import TrainingConfig, config_from_dict
from ..parameters import fill_doc
from ..paths import BOOK_DATA, REGISTRATION_PAGE, REGISTRATION_REPLICATION_HASH, RUNS, TRANSFORMER_DESIGN, design_file
from ..statistics.paired import holm, mcnemar_exact
from ..statistics.power import mcnemar_power
from ..tasks.transformer.task import TransformerSetting
from ..tasks.transformer.units import training_at
from .transformer import ALPHA, STUDY_FOLDER, VARIANTS, lag_key, load_design, pilot_rows
from .transformer_design import design_hash, load_frozen
from .transformer_design import registered_design_hash as quoted_design_hash
from .transformer_report import (
    EFFECT,
    REPLICATION_OUTCOMES,
    paired_tost,
    replication_flags,
    replication_plan,
    score_interval,
)
from .transformer_runs import check_registered, chunked_units, record_units

FORMAT = "lagtheory-transformer-replication-design-1"
REPLICATION_DESIGN = design_file("transformer_replication")
"""The frozen design file of the replication."""
REPLICATION_FOLDER = BOOK_DATA / "transformer_replication"
"""Where the replication's committed records go."""
OUTPUT_FOLDER = RUNS / "transformer_replication"
"""Where the command writes by default (ignored by git)."""
RECORD_FORMAT = "lagtheory-transformer-replication-1"
FIRST_SEED = 810_000
"""The replication's seeds are FIRST_SEED .. FIRST_SEED + n - 1, used by no other run."""
UNIT_SEEDS = 64
"""Seeds per unit, trained together in one batched loop (the batching the benchmark measures)."""


@fill_doc
def derive_replication(
    record: Mapping[str, Any], design: Mapping[str, Any], study_sha256: str, design_sha256: str
) -> dict[str, Any]:
    """The replication's design (module docstring) from the registered study's design and record.

    Parameters
    ----------
    record : mapping
        The registered transformer study's record (``book/data/transformer_study/study.json.gz``).
    %(design)s
    study_sha256, design_sha256 : str
        The SHA-256 of the study's record file and of its design file, kept in the design as its basis.

    Returns
    -------
    dict
        ``format``, ``basis``, ``setting``, ``training``, ``compared``, ``choices``, ``outcomes``, ``variants``,
        ``effect``, ``alpha``, ``plan`` (the replication plan without its per-comparison powers' floats beyond
        what JSON keeps), ``seeds`` and ``unit_seeds``.
    """
    plan = replication_plan(record, design)
    return {
        "format": FORMAT,
        "basis": {"study_sha256": study_sha256, "design_sha256": design_sha256},
        "setting": dict(design["setting"]),
        "training": dict(design["training"]),
        "compared": list(design["compared"]),
        "choices": {language: design["choices"][language] for language in design["compared"]},
        "outcomes": list(REPLICATION_OUTCOMES),
        "variants": list(VARIANTS),
        "effect": EFFECT,
        "alpha": ALPHA,
        "plan": plan,
        "seeds": list(range(FIRST_SEED, FIRST_SEED + plan["seeds"])),
        "unit_seeds": UNIT_SEEDS,
    }


def design_text(design: Mapping[str, Any]) -> str:
    """The design file's text: sorted keys, one-space indent, a final newline (the bytes its hash is of).

    Parameters
    ----------
    design : mapping
        The registered replication's design (:func:`~lagtheory.experiments.confirmatory.transformer_replication.load_replication`).

    Returns
    -------
    str
        The JSON text.
    """
    return json.dumps(design, sort_keys=True, indent=1) + "\n"


@fill_doc
def registered_design_hash(page: Path = REGISTRATION_PAGE) -> str:
    """The design file's SHA-256 that the replication section quotes
    (:func:`~lagtheory.experiments.confirmatory.transformer_design.registered_design_hash` of its section).

    Parameters
    ----------
    %(page)s

    Returns
    -------
    str
        The hash.

    Raises
    ------
    ValueError
        If the section quotes none, or more than one.
    """
    return quoted_design_hash(page, "replication")


@fill_doc
def load_replication(path: Path = REPLICATION_DESIGN, page: Path = REGISTRATION_PAGE) -> dict[str, Any]:
    """The replication's design from its frozen file, after checking the file's hash against the registered one.

    Parameters
    ----------
    path : pathlib.Path, optional
        The design file.
    %(page)s

    Returns
    -------
    dict
        The design.

    Raises
    ------
    ValueError
        If the file's hash is not the one the registered section quotes.
    """
    return load_frozen(path, registered_design_hash(page), "replication design")


@fill_doc
def replication_rows(design: Mapping[str, Any], language: str) -> list[tuple[str, str]]:
    """The row keys of a language (as the study's: ``joint rate=<r>``, ``lag rate=<r> warm=<f>``): joint and lag
    (T/4) at the shared rate, joint at its best rate and lag at its best configuration, each once.

    Parameters
    ----------
    design : mapping
        The registered replication's design (:func:`~lagtheory.experiments.confirmatory.transformer_replication.load_replication`).
    %(language)s

    Returns
    -------
    list of (str, str)
        (schedule, row key), in that order, duplicates dropped.
    """
    keys = [
        (schedule, key)
        for variant in VARIANTS
        for schedule, key in zip(("joint", "lag"), variant_keys(design, language, variant), strict=True)
    ]
    return list(dict.fromkeys(keys))


@fill_doc
def variant_keys(design: Mapping[str, Any], language: str, variant: str) -> tuple[str, str]:
    """Joint's and lag's row keys of a language in a variant ("shared" or "best").

    Parameters
    ----------
    design : mapping
        The registered replication's design (:func:`~lagtheory.experiments.confirmatory.transformer_replication.load_replication`).
    %(language)s
    variant : str
        "shared" (both schedules at the shared rate) or "best" (each at its tuned configuration).

    Returns
    -------
    tuple of str
        (joint's key, lag's key).
    """
    choice = design["choices"][language]
    if variant == "shared":
        return f"joint rate={choice['shared_rate']:g}", lag_key(choice["shared_rate"], 0.25)
    return f"joint rate={choice['joint']['rate']:g}", lag_key(choice["lag"]["rate"], choice["lag"]["warm_fraction"])


def replication_units(design: Mapping[str, Any], registration: str) -> dict[str, Any]:
    """The replication's units: per compared language and chunk of :data:`UNIT_SEEDS` seeds, its rows.

    Parameters
    ----------
    design : mapping
        The registered replication's design (:func:`~lagtheory.experiments.confirmatory.transformer_replication.load_replication`).
    registration : str
        The replication section's hash, carried by every payload.

    Returns
    -------
    dict of str to dict
        Unit name -> payload.
    """
    setting = config_from_dict(TransformerSetting, design["setting"])
    base = config_from_dict(TrainingConfig, design["training"])
    rows = {}
    for language in design["compared"]:
        rows[language] = []
        for schedule, key in replication_rows(design, language):
            rate = float(key.split("rate=")[1].split()[0])
            warm = float(key.split("warm=")[1]) if schedule == "lag" else 0.25
            rows[language].append((schedule, training_at(rate, warm, base=base)))
    return chunked_units("replication", rows, setting, design["seeds"], design["unit_seeds"], registration)


def analyse_replication(record: Mapping[str, Any], design: Mapping[str, Any]) -> dict[str, Any]:
    """The registered analysis (module docstring) of the replication's record under its design.

    Parameters
    ----------
    record : mapping
        The replication's record (its ``units``, as the study's) with the design's seeds.
    design : mapping
        The registered replication's design (:func:`~lagtheory.experiments.confirmatory.transformer_replication.load_replication`).

    Returns
    -------
    dict
        outcome -> variant -> language -> ``lag_better``, ``joint_better``, ``n``, ``advantage``, ``interval``
        (95% score), ``p``, ``p_adjusted`` (McNemar, Holm), ``p_equivalence``, ``p_equivalence_adjusted``
        (paired TOST within the effect, Holm), ``power_observed`` and ``verdict``.

    Raises
    ------
    ValueError
        If the record holds other seeds than the design's.
    """
    if list(record["seeds"]) != list(design["seeds"]):
        raise ValueError("record must hold the design's seeds")
    rows = pilot_rows(record)
    level = design["alpha"] / len(design["compared"])
    found: dict[str, dict[str, Any]] = {}
    for outcome in design["outcomes"]:
        found[outcome] = {}
        for variant in design["variants"]:
            family = {}
            for language in design["compared"]:
                joint, lag = (
                    replication_flags(rows[language][key]["values"], outcome)
                    for key in variant_keys(design, language, variant)
                )
                better = (joint & ~lag) if outcome == "failure" else (lag & ~joint)
                worse = (lag & ~joint) if outcome == "failure" else (joint & ~lag)
                b, c, n = int(better.sum()), int(worse.sum()), int(joint.size)
                family[language] = {
                    "lag_better": b,
                    "joint_better": c,
                    "n": n,
                    "advantage": (b - c) / n,
                    "interval": list(score_interval(b, c, n)),
                    "p": mcnemar_exact(np.asarray(better, dtype=int), np.asarray(worse, dtype=int)).p_value,
                    "p_equivalence": paired_tost(b, c, n, design["effect"]),
                    "power_observed": mcnemar_power(n, b / n, c / n, level),
                }
            for key in ("p", "p_equivalence"):
                for entry, p in zip(family.values(), holm([e[key] for e in family.values()]), strict=True):
                    entry[f"{key}_adjusted"] = float(p)
            for entry in family.values():
                entry["verdict"] = verdict(entry, design["alpha"])
            found[outcome][variant] = family
    return found


def verdict(entry: Mapping[str, Any], alpha: float) -> str:
    """A comparison's registered verdict: "helps"/"hurts" where the difference is shown (Holm-adjusted
    McNemar p < alpha; direction by the larger discordant count), "equivalent" where only the equivalence is
    (Holm-adjusted paired TOST p < alpha), else "undetermined".

    Parameters
    ----------
    entry : mapping
        ``lag_better``, ``joint_better``, ``p_adjusted`` and ``p_equivalence_adjusted``.
    alpha : float
        The level, in (0, 1).

    Returns
    -------
    str
        The verdict.
    """
    if entry["p_adjusted"] < alpha:
        return "helps" if entry["lag_better"] > entry["joint_better"] else "hurts"
    return "equivalent" if entry["p_equivalence_adjusted"] < alpha else "undetermined"


def run_replication(workers: int, output: Path, quiet: bool = False) -> Path:
    """Run every unit of the registered replication (resumable: finished units are kept in ``<output>.units``)
    and write its record: the registration hash, the design file's hash, the seeds, the units with their per-seed
    values, and the wall time of this invocation.

    Parameters
    ----------
    workers : int
        Worker processes of the local dask cluster (each trains one unit at a time, one thread).
    output : pathlib.Path
        The replication's record to write (gzipped JSON); its finished units are kept beside it.
    quiet : bool, optional
        Whether to leave out the progress bar.

    Returns
    -------
    pathlib.Path
        ``output``.

    Raises
    ------
    ValueError
        If the replication section no longer hashes to its stored value, or the design file is not the registered one.
    """
    start = time.perf_counter()
    registration = check_registered(REGISTRATION_PAGE, REGISTRATION_REPLICATION_HASH, "replication")
    design = load_replication()
    torch.set_num_threads(1)
    units = replication_units(design, registration)
    head = {
        "format": RECORD_FORMAT,
        "registration": registration,
        "design_sha256": design_hash(REPLICATION_DESIGN),
        "command": shlex.join(["python", "-m", __name__, "run"]),
        "seeds": list(design["seeds"]),
    }
    return record_units(units, head, start, output, workers, quiet)


def write_part(part: str, output: Path, record: Path | None = None, workers: int = 2, quiet: bool = False) -> Path:
    """The replication's part of the one command (``python -m lagtheory.experiments.run transformer-replication
    --part design|run|analyse``, or its alias ``python -m lagtheory.experiments.confirmatory.transformer_replication
    design|run|analyse``, which the registered section quotes): ``design`` writes the design from the registered
    study's committed design and record, ``run`` the replication's record (resumable),
    ``analyse`` its analysis (the record's registration and design hashes, and :func:`analyse_replication`'s
    result under ``outcomes``).

    Parameters
    ----------
    part : str
        ``"design"``, ``"run"`` or ``"analyse"``.
    output : pathlib.Path
        The file to write (its folder exists).
    record : pathlib.Path, optional
        ``analyse``: the replication's record (default ``<the replication's folder>/replication.json.gz``).
    workers : int, optional
        ``run``: worker processes of the local dask cluster.
    quiet : bool, optional
        ``run``: whether to leave out the progress bar.

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    if part == "run":
        return run_replication(workers, output, quiet)
    if part == "design":
        study = STUDY_FOLDER / "study.json.gz"
        with gzip.open(study, "rt", encoding="utf-8") as handle:
            found = json.load(handle)
        text = design_text(
            derive_replication(found, load_design(), design_hash(study), design_hash(TRANSFORMER_DESIGN))
        )
    else:
        with gzip.open(record or REPLICATION_FOLDER / "replication.json.gz", "rt", encoding="utf-8") as handle:
            found = json.load(handle)
        analysis = {
            "registration": found["registration"],
            "design_sha256": found["design_sha256"],
            "outcomes": analyse_replication(found, load_replication()),
        }
        text = json.dumps(analysis, sort_keys=True, indent=1) + "\n"
    output.write_text(text, encoding="utf-8")
    return output


if __name__ == "__main__":
    from lagtheory.experiments.run import alias

    alias("lagtheory.experiments.confirmatory.transformer_replication")
