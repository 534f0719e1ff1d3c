"""Where the experiments read and write: one home for every path.

Every path is relative to the working directory, which is the repository root when a study runs
(the package may be installed as a wheel, far from any checkout). The committed records live under
:data:`BOOK_DATA`; the chapters read them and no command writes there unless asked to (``--output``
naming a file there, and ``--overwrite`` where it exists). ``python -m lagtheory.experiments.run``
writes to :data:`RUNS` by default, a folder git ignores, and never replaces an existing record without
``--overwrite``.
"""

from __future__ import annotations

from pathlib import Path

BOOK_DATA = Path("book") / "data"
"""The committed records, ``summary_<study>.json`` (:func:`record_path`), the confirmatory records
(:data:`CONFIRMATORY_RECORDS`), the predictor's files and the registration hash."""
RUNS = Path("runs")
"""The default output folder of the command, ignored by git, holding ``summary_<study>.json`` and
``confirmatory/<stage>.json``, each with its folder of finished units."""
CONFIRMATORY_RUNS = RUNS / "confirmatory"
"""Where the confirmatory stages write their records by default (``<stage>.json``)."""
CONFIRMATORY_RECORDS = BOOK_DATA / "confirmatory"
"""The committed confirmatory records (``<stage>.json.gz``) and their analyses."""
REGISTRATION_PAGE = Path("book") / "registration.md"
"""The page whose registered section is hashed."""


def registration_hash_file(section: str) -> Path:
    """The file holding the SHA-256 of the registered section ``section`` of :data:`REGISTRATION_PAGE`:
    ``<BOOK_DATA>/registration.sha256`` for ``"confirmatory"``, the page's first section, and
    ``<BOOK_DATA>/registration_<section>.sha256`` for each section registered after it.

    Parameters
    ----------
    section : str
        The section's name (a key of :data:`lagtheory.experiments.confirmatory.registration.SECTIONS`).

    Returns
    -------
    pathlib.Path
        The hash file's path (whether or not it exists).
    """
    return BOOK_DATA / ("registration.sha256" if section == "confirmatory" else f"registration_{section}.sha256")


def design_file(study: str) -> Path:
    """The design of a registered study, frozen data whose SHA-256 its registered section quotes:
    ``<BOOK_DATA>/<study>_design.json``.

    Parameters
    ----------
    study : str
        The study's name.

    Returns
    -------
    pathlib.Path
        The design's path (whether or not it exists).
    """
    return BOOK_DATA / f"{study}_design.json"


REGISTRATION_HASH = registration_hash_file("confirmatory")
"""The file holding the registered confirmatory section's SHA-256."""
REGISTRATION_TRANSFORMER_HASH = registration_hash_file("transformer")
"""The file holding the registered transformer section's SHA-256."""
REGISTRATION_REPLICATION_HASH = registration_hash_file("replication")
"""The file holding the registered transformer replication section's SHA-256."""
REGISTRATION_LAG_HASH = registration_hash_file("lag")
"""The file holding the registered lag section's SHA-256."""
TRANSFORMER_DESIGN = design_file("transformer")
"""The registered transformer study's design, frozen data whose SHA-256 the registered section quotes."""
LAG_DESIGN = design_file("lag")
"""The registered lag study's design, frozen data whose SHA-256 the registered section quotes."""
LAG_RECORDS = BOOK_DATA / "lag_study"
"""The lag study's committed records; the exploratory pilot (``pilot.json``), the registered runs
(``study.json``) and their analysis (``analysis.json``)."""
PREDICTOR_EXPLORATORY = BOOK_DATA / "predictor_exploratory.json"
"""The registered predictor's evaluation on the exploratory records."""
PREDICTOR_PREDICTIONS = BOOK_DATA / "predictor_predictions.json"
"""The registered predictor's predictions for the validation cells, committed before they ran."""
PREDICTOR_TRANSFORMER = BOOK_DATA / "predictor_transformer.json"
"""The registered predictor's predictions for the standard transformer's validation cells."""
PREDICTOR_SUCCESSOR = BOOK_DATA / "predictor_successor.json"
"""The exploratory successor predictor's margins and scores on the validation cells."""
WINDOW_SENSITIVITY = BOOK_DATA / "window_sensitivity.json"
"""The record of outcome (c)'s Monte Carlo error (its verdicts over generator seeds and resamples)."""


def record_path(study: str, folder: Path = BOOK_DATA) -> Path:
    """The record of a study: ``<folder>/summary_<study>.json``.

    Parameters
    ----------
    study : str
        The study's name.
    folder : pathlib.Path, optional
        The folder (default :data:`BOOK_DATA`, the committed record; the command writes under :data:`RUNS`).

    Returns
    -------
    pathlib.Path
        The record's path (whether or not it exists).
    """
    return folder / f"summary_{study}.json"


def units_folder(record: Path) -> Path:
    """Where a run writes the finished units of ``record``: ``<record without .json>.units`` beside it.

    Parameters
    ----------
    record : pathlib.Path
        The record's path.

    Returns
    -------
    pathlib.Path
        The folder of its units.
    """
    return record.with_name(record.name.removesuffix(".json") + ".units")
