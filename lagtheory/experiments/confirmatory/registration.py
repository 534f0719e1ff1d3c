"""The registrations of ``book/registration.md``: their hashes, and the registered constants of the
confirmatory study in machine-readable form.

The page holds several **registered sections** (:data:`SECTIONS`), each with its own pair of marker
lines and its own hash file: ``"confirmatory"``, the confirmatory study (markers
:data:`BEGIN`, :data:`END`, hash :data:`~lagtheory.experiments.paths.REGISTRATION_HASH`), ``"transformer"``, the registered transformer
study (:data:`TRANSFORMER_BEGIN`, :data:`TRANSFORMER_END`,
:data:`~lagtheory.experiments.paths.REGISTRATION_TRANSFORMER_HASH`; its constants are in :mod:`lagtheory.experiments.confirmatory.transformer_design`),
``"lag"``, the registered lag study (:data:`LAG_BEGIN`, :data:`LAG_END`,
:data:`~lagtheory.experiments.paths.REGISTRATION_LAG_HASH`; its constants are in
:mod:`lagtheory.experiments.confirmatory.lag_study`),
and ``"replication"``, the transformer study's replication (:data:`REPLICATION_BEGIN`, :data:`REPLICATION_END`,
:data:`~lagtheory.experiments.paths.REGISTRATION_REPLICATION_HASH`; its design in
:mod:`lagtheory.experiments.confirmatory.transformer_replication`).
A section is every line strictly between its begin line and its end line (each must occur
exactly once, as a whole line, begin first; the two marker lines themselves are not part of it). Before
hashing, line endings are normalised (CRLF and lone CR become LF); nothing else is changed, so any other
edit, a single character or a trailing space, changes the hash. The hash (:func:`registration_hash`) is
the SHA-256 of the section's UTF-8 bytes, as 64 lowercase hex digits. It is stored in the section's hash
file (that one line and a newline), written once when the section was committed. Every record of a
registered study must carry its section's hash in its field ``"registration"`` (:func:`check_record`),
and ``tests/test_registration.py`` fails if a section no longer hashes to its stored value: a later
change goes into the page's dated *Deviations* section, outside every hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ..paths import (
    REGISTRATION_HASH,
    REGISTRATION_LAG_HASH,
    REGISTRATION_PAGE,
    REGISTRATION_REPLICATION_HASH,
    REGISTRATION_TRANSFORMER_HASH,
)

BEGIN = "<!-- registered section: begin -->"
"""The line before the confirmatory section."""
END = "<!-- registered section: end -->"
"""The line after the confirmatory section."""
TRANSFORMER_BEGIN = "<!-- registered section transformer: begin -->"
"""The line before the transformer section."""
TRANSFORMER_END = "<!-- registered section transformer: end -->"
"""The line after the transformer section."""
LAG_BEGIN = "<!-- registered section lag: begin -->"
"""The line before the lag section."""
LAG_END = "<!-- registered section lag: end -->"
"""The line after the lag section."""
REPLICATION_BEGIN = "<!-- registered section replication: begin -->"
"""The line before the transformer replication's section."""
REPLICATION_END = "<!-- registered section replication: end -->"
"""The line after the transformer replication's section."""


class Section(NamedTuple):
    """A registered section of the page: its marker lines and its hash file."""

    begin: str
    end: str
    hash_file: Path


SECTIONS: Mapping[str, Section] = {
    "confirmatory": Section(BEGIN, END, REGISTRATION_HASH),
    "transformer": Section(TRANSFORMER_BEGIN, TRANSFORMER_END, REGISTRATION_TRANSFORMER_HASH),
    "lag": Section(LAG_BEGIN, LAG_END, REGISTRATION_LAG_HASH),
    "replication": Section(REPLICATION_BEGIN, REPLICATION_END, REGISTRATION_REPLICATION_HASH),
}
"""The registered sections by name."""


def _section(section: str) -> Section:
    if section not in SECTIONS:
        raise ValueError(f"section must be one of {tuple(SECTIONS)}, got {section!r}")
    return SECTIONS[section]


SEEDS_PER_CELL = 100
"""Paired seeds per confirmatory cell (the page's power calculation, :mod:`lagtheory.experiments.statistics.power`)."""
CONFIRMATORY_SEEDS: tuple[int, ...] = tuple(range(100_000, 100_000 + SEEDS_PER_CELL))
"""The fresh seeds of the confirmatory runs; no earlier run has used them."""
EXPLORATORY_SEEDS: tuple[int, ...] = tuple(range(30))
"""The seeds of the exploratory records, on which best-vs-best tuning is done."""
CONFIRMATORY_LEVELS: Mapping[str, str] = {
    "centre": "main/scale=0.3 ratio=1",
    "readout 1, ratio 1": "main/scale=1 ratio=1",
    "readout 1, ratio 3": "main/scale=1 ratio=3",
    "readout 3, ratio 1": "main/scale=3 ratio=1",
    "readout 3, ratio 3": "main/scale=3 ratio=3",
    "LP-FT": "attention_init/preset",
}
"""The confirmatory cells of every task and optimiser, by the exploratory cell they repeat on fresh seeds."""
CONFIRMATORY_TASKS: Mapping[str, tuple[str, ...]] = {
    "languages": ("FIRST", "EVEN_PAIRS", "CONTAINS_AB", "A_STAR_B_STAR", "CONTAINS_B_NOT_C", "FIRST_LEARNED"),
    "regression": ("regression",),
    "icl": ("linear", "softmax"),
}
"""The nine registered tasks, by the exploratory study whose task design (setting, budget, batch size) each
takes: frozen, whatever tasks the exploratory studies gain later."""
RATE_GRIDS: Mapping[str, tuple[float, ...]] = {
    "sgd": tuple(10.0 ** (k / 2) for k in range(-6, 5)),
    "adam": tuple(10.0 ** (k / 2) for k in range(-8, 1)),
}
"""The registered step-size grid, per optimiser (SGD 1e-3..1e2, 11 rates; Adam 1e-4..1, 9 rates; half a
decade apart): the exploratory calibration's grid when the study was registered, frozen here so that a
later change of that grid (:data:`lagtheory.experiments.exploratory.calibration.RATE_GRIDS`) cannot move
the registered runs."""
WARM_FRACTIONS = (0.125, 0.25, 0.5)
"""Lag's warm-up fractions of the budget searched by best-vs-best tuning."""
WINDOW_SHARE = 0.9
"""A grid rate is inside a schedule's step-size window when at least this share of the seeds succeed there."""
ALPHA = 0.05
FAILURE_MARGIN = 0.1
"""Equivalence margin of the binary outcomes; the discordance rate, which bounds the difference of the two
failure (or recognition) rates, below 0.1."""


def _normalised(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def registered_section(text: str, section: str = "confirmatory") -> str:
    """The registered section ``section`` of the page's ``text`` (module docstring), line endings normalised
    to LF; ValueError if its markers are missing, repeated, not whole lines, or out of order.

    Parameters
    ----------
    text : str
        The page's text.
    section : str, optional
        A key of :data:`~lagtheory.experiments.confirmatory.registration.SECTIONS` (default ``"confirmatory"``).

    Returns
    -------
    str
        The section, ending in a newline.

    Raises
    ------
    TypeError
        If ``text`` is not a str.
    ValueError
        If the markers are missing, repeated, not whole lines, or out of order, or ``section`` is unknown.
    """
    begin, end, _ = _section(section)
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    lines = _normalised(text).split("\n")
    begins = [k for k, line in enumerate(lines) if line == begin]
    ends = [k for k, line in enumerate(lines) if line == end]
    if len(begins) != 1 or len(ends) != 1:
        raise ValueError(
            f"text must hold the line {begin!r} and the line {end!r} exactly once each, "
            f"found {len(begins)} and {len(ends)}"
        )
    if not begins[0] < ends[0]:
        raise ValueError(f"text must hold {begin!r} before {end!r}")
    return "\n".join(lines[begins[0] + 1 : ends[0]]) + "\n"


def registration_hash(text: str, section: str = "confirmatory") -> str:
    """SHA-256 (64 lowercase hex digits) of the UTF-8 bytes of the registered section ``section`` of ``text``.

    Parameters
    ----------
    text : str
        The page's text.
    section : str, optional
        A key of :data:`~lagtheory.experiments.confirmatory.registration.SECTIONS` (default ``"confirmatory"``).

    Returns
    -------
    str
        The hex digest.

    Raises
    ------
    TypeError
        If ``text`` is not a str.
    ValueError
        As :func:`registered_section` raises.
    """
    return hashlib.sha256(registered_section(text, section).encode("utf-8")).hexdigest()


def page_hash(path: str | Path = REGISTRATION_PAGE, section: str = "confirmatory") -> str:
    """:func:`registration_hash` of the section ``section`` of the page at ``path``.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        The page (default ``book/registration.md``).
    section : str, optional
        A key of :data:`~lagtheory.experiments.confirmatory.registration.SECTIONS` (default ``"confirmatory"``).

    Returns
    -------
    str
        The hex digest.

    Raises
    ------
    ValueError
        As :func:`registered_section` raises.
    """
    return registration_hash(Path(path).read_text(encoding="utf-8"), section)


def stored_hash(path: str | Path = REGISTRATION_HASH) -> str:
    """The registered hash as committed in ``path``.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        The hash file (default :data:`~lagtheory.experiments.paths.REGISTRATION_HASH`).

    Returns
    -------
    str
        The hex digest.

    Raises
    ------
    ValueError
        Unless the file holds one line of 64 lowercase hex digits.
    """
    content = Path(path).read_text(encoding="ascii").strip()
    if len(content) != 64 or any(c not in "0123456789abcdef" for c in content):
        raise ValueError(f"{path} must hold one SHA-256 hex digest, got {content[:80]!r}")
    return content


def check_record(record: Mapping[str, Any], expected: str | None = None) -> None:
    """A confirmatory record must carry the registration's hash in ``record["registration"]`` (``expected``:
    the stored hash by default); ValueError naming what differs.

    Parameters
    ----------
    record : mapping
        A confirmatory record.
    expected : str, optional
        The hash it must carry (default :func:`stored_hash`).

    Raises
    ------
    ValueError
        Naming what differs, if the record does not carry the hash.
    """
    expected = stored_hash() if expected is None else expected
    found = record.get("registration") if isinstance(record, Mapping) else None
    if found != expected:
        raise ValueError(f"record must carry registration hash {expected}, found {found!r}")
