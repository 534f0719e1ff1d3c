"""The registered transformer study's analysis (``book/registration.md``, its transformer section), of its record
under its design: per language and variant (shared rate, best-vs-best) H1 failure and H2 recognition at 4 N0 and
16 N0 (exact McNemar, equivalence when the discordance is below 0.1, Holm within each family of languages), and
H4 the step-size window (a rate is in a schedule's window when at least 90% of the seeds do not fail there; ratio
of widths with bootstrap intervals, Bonferroni over the languages), through the confirmatory study's functions
(:mod:`lagtheory.experiments.confirmatory.analysis`).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..parameters import fill_doc
from ..paths import REGISTRATION_TRANSFORMER_HASH
from .analysis import binary_outcome, family_verdicts, window_outcome, window_verdict
from .registration import stored_hash
from .transformer_design import load_design
from .transformer_rows import OUTCOMES, VARIANTS, lag_key, outcome_flags, pilot_rows, variant_rows


@fill_doc
def analyse(record: Mapping[str, Any], design: Mapping[str, Any], resamples: int = 100_000) -> dict[str, Any]:
    """The registered analysis (module docstring) of the study's record under its design.

    Parameters
    ----------
    record : mapping
        The study's record.
    %(design)s
    resamples : int, optional
        Bootstrap resamples of the window's intervals (default 100,000, registered).

    Returns
    -------
    dict
        ``outcomes`` (outcome -> variant -> language -> the test, its adjusted p-values and verdict, and the
        design's power), ``window`` (language -> the window outcome and verdict), ``lengths`` (language ->
        variant -> schedule -> recognising seeds at each test length), ``control`` (the control's recognising
        seeds per schedule and rate), ``seeds_per_language`` (a count; ``seeds`` would be read as a list of
        seeds by the records' checks).

    Raises
    ------
    ValueError
        If the record does not carry the registered hash, or holds other seeds than the design's.
    """
    registration = stored_hash(REGISTRATION_TRANSFORMER_HASH)
    if record.get("registration") != registration:
        raise ValueError(f"record must carry the transformer registration hash {registration}")
    if record["seeds"] != design["seeds"]:
        raise ValueError("record must hold the design's seeds")
    rows = pilot_rows(record)
    compared = design["compared"]
    outcomes: dict[str, dict[str, dict[str, Any]]] = {}
    lengths: dict[str, dict[str, Any]] = {language: {} for language in compared}
    for outcome in OUTCOMES:
        outcomes[outcome] = {}
        for variant in VARIANTS:
            family = {}
            for language in compared:
                joint_key, lag_key_ = variant_rows(rows[language], design["choices"][language], variant)
                joint, lag = (outcome_flags(rows[language][k]["values"], outcome) for k in (joint_key, lag_key_))
                family[language] = binary_outcome(joint, lag, lag_better_when=outcome == "recognition")
                lengths[language][variant] = {
                    schedule: np.asarray(rows[language][key]["values"]["recognised_at"], dtype=bool)
                    .sum(axis=0)
                    .tolist()
                    for schedule, key in (("joint", joint_key), ("lag", lag_key_))
                }
            verdicts = family_verdicts(family)
            power = design["plan"]["power"][variant][outcome]
            outcomes[outcome][variant] = {
                language: {**family[language], **verdicts[language], "design_power": power} for language in compared
            }
    window = {}
    for language in compared:
        joint = [rows[language][f"joint rate={rate:g}"]["values"]["failed"] for rate in design["rates"]]
        lag = [rows[language][lag_key(rate, 0.25)]["values"]["failed"] for rate in design["rates"]]
        found = window_outcome(joint, lag, design["rates"], cells=len(compared), resamples=resamples)
        window[language] = {**found, "verdict": window_verdict(found)}
    control = {key: int(np.sum(row["values"]["recognised"])) for key, row in rows[design["control"]].items()}
    return {
        "registration": registration,
        "seeds_per_language": len(design["seeds"]),
        "outcomes": outcomes,
        "window": window,
        "lengths": lengths,
        "control": control,
    }


def analyse_record(record: Path, output: Path) -> Path:
    """:func:`analyse` of the study's record at ``record`` under the registered design
    (:func:`~lagtheory.experiments.confirmatory.transformer_design.load_design`), written as JSON to ``output`` (a
    window ratio is +inf where only lag has a window: written as JSON's Infinity, as the confirmatory analysis).

    Parameters
    ----------
    record : pathlib.Path
        The study's record (gzipped JSON).
    output : pathlib.Path
        The transformer study's analysis written (JSON).

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    with gzip.open(record, "rt", encoding="utf-8") as handle:
        result = analyse(json.load(handle), load_design())
    output.write_text(json.dumps(result, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    return output
