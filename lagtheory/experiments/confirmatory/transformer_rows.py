"""The rows of the transformer pilot's and the registered transformer study's records, and what the design and the
analysis read from them: a row's per-seed values by language and row key (:func:`pilot_rows`), the tuning
criterion, the registered outcomes' indicators, and the rows of a variant ("shared" rate or "best"-vs-best).

The records are those of :mod:`lagtheory.experiments.exploratory.transformer_pilot` (``book/data/transformer_pilot/``)
and of the registered study (:mod:`lagtheory.experiments.confirmatory.transformer_runs`), both made of units of
:func:`lagtheory.experiments.tasks.transformer.units.run_unit`.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..exploratory.design import capped_log_loss
from ..exploratory.transformer_pilot import WARM_FRACTIONS

PILOT_FOLDER = Path("book/data/transformer_pilot")
"""The pilot's committed records."""
VARIANTS = ("shared", "best")
"""The registered variants; both schedules at the shared rate (lag T/4), or each at its best configuration."""
OUTCOMES = ("failure", "recognition")
"""The registered binary outcomes (H1, H2)."""


def load_pilot(stage: str, folder: Path = PILOT_FOLDER) -> dict[str, Any]:
    """A pilot stage's committed record.

    Parameters
    ----------
    stage : str
        "configuration", "tuning" or "diagnostics".
    folder : pathlib.Path, optional
        Where the records are.

    Returns
    -------
    dict
        The record.
    """
    with gzip.open(folder / f"{stage}.json.gz", "rt", encoding="utf-8") as handle:
        return json.load(handle)


def warm_fraction(warm_steps: int, steps: int) -> float:
    """The warm-up fraction of :data:`~lagtheory.experiments.exploratory.transformer_pilot.WARM_FRACTIONS` that
    gives ``warm_steps`` of ``steps`` (``round(steps * fraction)``), or ``warm_steps / steps`` if none does.

    Parameters
    ----------
    warm_steps : int
        Lag's warm-up.
    steps : int
        The budget T.

    Returns
    -------
    float
        The fraction.
    """
    return next((f for f in WARM_FRACTIONS if max(1, round(steps * f)) == warm_steps), warm_steps / steps)


def pilot_rows(record: Mapping[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """The rows of a pilot record by language and row key (``joint rate=<r>`` or ``lag rate=<r> warm=<f>``),
    each with its per-seed values concatenated over the record's seed chunks, in seed order.

    Parameters
    ----------
    record : mapping
        A pilot record (its ``units``).

    Returns
    -------
    dict
        Language -> row key -> ``{"rate", "warm_fraction", "seeds", "values"}``.
    """
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for unit in sorted(record["units"].values(), key=lambda u: (u["language"], u["seeds"][0])):
        for row in unit["rows"]:
            training = row["training"]
            rate = training["output_lr"]
            warm = None if row["schedule"] == "joint" else warm_fraction(training["warm_steps"], training["steps"])
            key = f"joint rate={rate:g}" if warm is None else f"lag rate={rate:g} warm={warm:g}"
            entry = found.setdefault(unit["language"], {}).setdefault(
                key, {"rate": rate, "warm_fraction": warm, "seeds": [], "values": {}}
            )
            entry["seeds"] += unit["seeds"]
            for name, values in row["values"].items():
                entry["values"].setdefault(name, []).extend(values)
    return found


def criterion(values: Mapping[str, Sequence]) -> float:
    """The tuning criterion of a row: mean over seeds of the capped log10 held-out loss (log 2 the cap).

    Parameters
    ----------
    values : mapping
        A row's per-seed values (``test_loss``, None where not finite).

    Returns
    -------
    float
        The criterion (lower is better).
    """
    test = np.array([np.nan if v is None else v for v in values["test_loss"]], dtype=np.float64)
    return float(np.mean(capped_log_loss(test, np.log(2.0))))


def recognised_at(values: Mapping[str, Sequence], index: int) -> np.ndarray:
    """Per seed: every test word of the ``index``-th test length right.

    Parameters
    ----------
    values : mapping
        A row's per-seed values (``recognised_at``, seeds x test lengths).
    index : int
        The test length's index.

    Returns
    -------
    ndarray
        bool (seeds,).
    """
    return np.array([flags[index] for flags in values["recognised_at"]], dtype=bool)


def variant_rows(rows: Mapping[str, Mapping[str, Any]], choice: Mapping[str, Any], variant: str) -> tuple[str, str]:
    """The keys of joint's and lag's rows of a variant: "shared" (both at the shared rate, lag T/4) or "best".

    Parameters
    ----------
    rows : mapping
        Row key -> row; only used to check the keys exist.
    choice : mapping
        :func:`~lagtheory.experiments.confirmatory.transformer_design.tuned`'s output.
    variant : str
        "shared" or "best".

    Returns
    -------
    tuple of str
        (joint's key, lag's key).
    """
    if variant == "shared":
        rate = choice["shared_rate"]
        keys = (f"joint rate={rate:g}", f"lag rate={rate:g} warm=0.25")
    else:
        keys = (
            f"joint rate={choice['joint']['rate']:g}",
            lag_key(choice["lag"]["rate"], choice["lag"]["warm_fraction"]),
        )
    for key in keys:
        if key not in rows:
            raise KeyError(f"no row {key!r}")
    return keys


def lag_key(rate: float, warm_fraction: float) -> str:
    """The row key of lag at ``rate`` and ``warm_fraction``.

    Parameters
    ----------
    rate : float
        Adam's base rate.
    warm_fraction : float
        Lag's warm-up, a fraction of the budget T.

    Returns
    -------
    str
        ``lag rate=<rate> warm=<warm_fraction>`` (both as ``%g`` writes them).
    """
    return f"lag rate={rate:g} warm={warm_fraction:g}"


def outcome_flags(values: Mapping[str, Sequence], outcome: str) -> np.ndarray:
    """Per seed, the registered indicator of ``outcome``: "failure" (the run fails) or "recognition" (every
    test word at every test length above N0 right, i.e. at 4 N0 and 16 N0).

    Parameters
    ----------
    values : mapping
        A row's per-seed values.
    outcome : str
        "failure" or "recognition".

    Returns
    -------
    ndarray
        bool (seeds,).
    """
    return np.asarray(values["failed" if outcome == "failure" else "recognised"], dtype=bool)
