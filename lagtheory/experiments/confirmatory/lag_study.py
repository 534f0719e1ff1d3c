"""The registered lag study: in joint training, does the attention of the book's one-layer model learn later
than its output layer, timed by what the model computes?

The hypothesis, outcomes, tests and decision rules are registered in ``book/registration.md`` (the section
"lag", :data:`lagtheory.experiments.confirmatory.registration.SECTIONS`); the design is the frozen file
:data:`~lagtheory.experiments.paths.LAG_DESIGN`, whose SHA-256 that section quotes (:func:`load_design`
refuses another). Each run is joint training of :class:`~lagtheory.experiments.tasks.languages.task.LanguageRuns`
in the chapter's regime (:data:`~lagtheory.experiments.tasks.languages.task.LANGUAGE_TRAINING`) on a language
of the languages study, timed by :func:`lagtheory.experiments.exploratory.functional_timing.one_layer_run`:

* **primary outcome**: the knockout half-time under the calibrated loss of the attention group (theta, s)
  minus that of the output group (u), per seed;
* **secondary outcome**: the same under the 0-1 error;
* reported, not tested: the raw loss's knockout half-times and the path attribution's, under every score.

Per language and outcome (:func:`comparison`): the seeds where both half-times are defined (the others counted
by which group is undefined), how many have the attention later, earlier, at the same step; the exact sign
test of later against earlier (McNemar's exact test on the two indicators,
:func:`lagtheory.experiments.statistics.paired.mcnemar_exact`), two-sided; the mean difference with its 95% BCa
interval and the median. Holm's adjustment across the languages, one family per outcome (:func:`analyse`).

The command::

    python -m lagtheory.experiments.confirmatory.lag_study pilot|design|run|analyse [--output PATH]

(also ``python -m lagtheory.experiments.run lag-study --part pilot|design|run|analyse``) runs the exploratory pilot on its
own seeds (:data:`PILOT_SEEDS`), writes the design from the pilot's planning effects (:func:`derive_design`,
from ``--record``, default the committed pilot), runs the registered seeds of the design, or analyses a record
(``--record``, default the committed study's). It writes ``--output``, by default ``runs/lag_study/<what>.json``
(ignored by git); the committed copies are under :data:`~lagtheory.experiments.paths.LAG_RECORDS` and
:data:`~lagtheory.experiments.paths.LAG_DESIGN`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from ..engine.cells import TrainingConfig
from ..exploratory import functional_timing as F
from ..exploratory.records import config_from_dict, config_to_dict, versions
from ..exploratory.studies import LANGUAGE_SETTING
from ..parameters import fill_doc
from ..paths import LAG_DESIGN, LAG_RECORDS, REGISTRATION_LAG_HASH, REGISTRATION_PAGE
from ..statistics.paired import bootstrap_interval, holm, mcnemar_exact
from ..statistics.power import mcnemar_power, smallest_n
from ..tasks.languages.catalogue import TASKS
from ..tasks.languages.task import LANGUAGE_TRAINING, LanguageRuns
from .registration import CONFIRMATORY_TASKS
from .transformer import design_text
from .transformer_design import load_frozen, registered_design_hash

LANGUAGES: tuple[str, ...] = CONFIRMATORY_TASKS["languages"]
"""The languages of the languages study (the six registered there)."""
PILOT_SEEDS: tuple[int, ...] = tuple(range(700_000, 700_016))
"""The exploratory pilot's seeds (16), used by no other run."""
FIRST_SEED = 710_000
"""The registered seeds are FIRST_SEED, FIRST_SEED + 1, ... (as many as the design says); no other run uses them."""
OUTCOMES: Mapping[str, tuple[str, str]] = {"primary": ("knockout", "calibrated"), "secondary": ("knockout", "error")}
"""The tested outcomes; (reading, score) of :func:`lagtheory.experiments.exploratory.functional_timing.timing`."""
ALPHA = 0.05
"""Family-wise error rate of each outcome's family (Holm across the languages)."""
MIN_DEFINED = 10
"""Fewer seeds with both half-times defined than this in a language; its verdict is undetermined."""
PLANNING_LATER_SHARE = 0.75
"""The smallest effect of interest; the attention later on 3 of every 4 seeds whose half-times differ."""
TARGET_POWER = 0.9
"""The power aimed at, at Bonferroni's level ALPHA / 6 (which Holm's adjustment never falls below)."""
MAX_SEEDS = 200
"""The most seeds per language the study's compute allows; the pilot's runs took about 2.5 s of CPU per seed
(all six languages) on the shared machine, where a run gets about a quarter of a core, so 200 seeds are about
35 minutes."""
QUANTILES = (0.25, 0.5, 0.75)
"""The quantiles over the seeds of the progress curves stored for the figures."""


def _stored(values: NDArray[np.float64], digits: int = 6) -> Any:
    """JSON-ready values rounded to ``digits`` significant digits, NaN as None."""
    if np.ndim(values) > 0:
        return [_stored(value, digits) for value in values]
    return float(f"{float(values):.{digits}g}") if np.isfinite(values) else None


@fill_doc
def measure_language(language: str, config: TrainingConfig, seeds: Sequence[int]) -> dict[str, Any]:
    """One language's runs, timed (module docstring), as JSON-ready data.

    Parameters
    ----------
    language : str
        A key of the language catalogue.
    config : TrainingConfig
        The joint training of every seed.
    %(seeds)s

    Returns
    -------
    dict
        ``groups`` (their order), ``half`` reading -> score -> group -> per-seed half-times (None: undefined),
        ``total`` score -> group -> per-seed knockout total S_G(0) - S_G(T), ``final`` score -> per-seed score of
        the final model, ``progress`` score -> group -> the :data:`QUANTILES` of the knockout progress over the
        seeds where it is defined, at every snapshot; ``seconds`` wall and ``cpu_seconds``.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    found = F.one_layer_run(LanguageRuns(TASKS[language], LANGUAGE_SETTING), config, seeds)
    groups = list(found["grouping"])
    result: dict[str, Any] = {"groups": groups, "half": {}, "total": {}, "final": {}, "progress": {}}
    for reading in ("knockout", "attribution"):
        result["half"][reading] = {
            score: {g: _stored(found[reading][score]["half"][i]) for i, g in enumerate(groups)} for score in F.SCORES
        }
    for score in F.SCORES:
        knocked = found["knockout"][score]
        result["total"][score] = {
            g: _stored(knocked["scores"][i, :, 0] - knocked["scores"][i, :, -1]) for i, g in enumerate(groups)
        }
        result["final"][score] = _stored(knocked["final"])
        result["progress"][score] = {}
        for i, g in enumerate(groups):
            curves = knocked["progress"][i]
            defined = curves[np.isfinite(curves).all(axis=-1)]
            quantiles = (
                np.quantile(defined, QUANTILES, axis=0) if len(defined) else np.full((3, curves.shape[1]), np.nan)
            )
            result["progress"][score][g] = _stored(quantiles, 4)
    result["seconds"], result["cpu_seconds"] = time.perf_counter() - wall, time.process_time() - cpu
    return result


@fill_doc
def measure(languages: Sequence[str], config: TrainingConfig, seeds: Sequence[int]) -> dict[str, Any]:
    """:func:`measure_language` of every language, with the run's provenance.

    Parameters
    ----------
    languages : sequence of str
        The languages.
    config : TrainingConfig
        The joint training.
    %(seeds)s

    Returns
    -------
    dict
        ``seeds``, ``training``, ``evaluation`` (seed and words), ``versions``, ``languages`` -> the language's
        entry.
    """
    record: dict[str, Any] = {
        "seeds": list(seeds),
        "training": config_to_dict(config),
        "evaluation": {"seed": F.EVALUATION_SEED, "words": F.EVALUATION_WORDS},
        "versions": versions(),
        "languages": {},
    }
    for language in languages:
        record["languages"][language] = measure_language(language, config, seeds)
        print(f"{language}: {record['languages'][language]['seconds']:.1f} s", file=sys.stderr)
    return record


def comparison(entry: Mapping[str, Any], reading: str, score: str) -> dict[str, Any]:
    """One language's paired comparison of the attention's half-time with the output's (module docstring).

    Parameters
    ----------
    entry : mapping
        The language's entry of a record (:func:`measure_language`).
    reading : {"knockout", "attribution"}
        The reading.
    score : {"raw", "calibrated", "error"}
        The score.

    Returns
    -------
    dict
        ``defined``, ``undefined`` (``attention`` only, ``output`` only, ``both``), ``later``, ``earlier``,
        ``ties``, ``p`` (two-sided exact sign test), ``mean``, ``interval`` (95% BCa; None below 2 seeds),
        ``median`` (None without seeds).
    """
    half = entry["half"][reading][score]
    attention = np.array([np.nan if v is None else v for v in half["attention"]], dtype=np.float64)
    output = np.array([np.nan if v is None else v for v in half["output"]], dtype=np.float64)
    a_missing, o_missing = np.isnan(attention), np.isnan(output)
    both = ~a_missing & ~o_missing
    d = attention[both] - output[both]
    test = mcnemar_exact(d > 0, d < 0)
    return {
        "defined": int(both.sum()),
        "undefined": {
            "attention": int((a_missing & ~o_missing).sum()),
            "output": int((o_missing & ~a_missing).sum()),
            "both": int((a_missing & o_missing).sum()),
        },
        "later": test.a_only,
        "earlier": test.b_only,
        "ties": int((d == 0).sum()),
        "p": test.p_value,
        "mean": float(d.mean()) if d.size else None,
        "interval": list(bootstrap_interval(d)) if d.size >= 2 else None,
        "median": float(np.median(d)) if d.size else None,
    }


def verdict(found: Mapping[str, Any], adjusted: float) -> str:
    """The registered verdict of one language and outcome: "undetermined" with fewer than :data:`MIN_DEFINED`
    defined seeds; "later" (the attention's half-time) or "earlier" where the Holm-adjusted p-value is below
    :data:`ALPHA`, by the direction of the majority; "undetermined" otherwise.

    Parameters
    ----------
    found : mapping
        :func:`comparison` of the language.
    adjusted : float
        Its Holm-adjusted p-value.

    Returns
    -------
    str
        The verdict.
    """
    if found["defined"] < MIN_DEFINED or adjusted >= ALPHA:
        return "undetermined"
    return "later" if found["later"] > found["earlier"] else "earlier"


def analyse(record: Mapping[str, Any]) -> dict[str, Any]:
    """Every language's comparisons under every reading and score, and the registered outcomes' verdicts
    (Holm across the languages, one family per outcome of :data:`OUTCOMES`).

    Parameters
    ----------
    record : mapping
        A record of :func:`measure`.

    Returns
    -------
    dict
        ``comparisons`` reading -> score -> language -> :func:`comparison`; ``outcomes`` outcome -> language ->
        the comparison with ``adjusted`` and ``verdict``.
    """
    languages = list(record["languages"])
    comparisons = {
        reading: {
            score: {lang: comparison(record["languages"][lang], reading, score) for lang in languages}
            for score in F.SCORES
        }
        for reading in ("knockout", "attribution")
    }
    outcomes = {}
    for outcome, (reading, score) in OUTCOMES.items():
        family = comparisons[reading][score]
        adjusted = holm([family[lang]["p"] for lang in languages])
        outcomes[outcome] = {
            lang: {**family[lang], "adjusted": float(p), "verdict": verdict(family[lang], float(p))}
            for lang, p in zip(languages, adjusted, strict=True)
        }
    return {"comparisons": comparisons, "outcomes": outcomes}


def planning(pilot: Mapping[str, Any]) -> dict[str, Any]:
    """The seeds per language from the pilot: the largest share of a language's pilot seeds whose primary
    difference is undefined or zero (q, the share that carries no sign), and the smallest n at which the
    sign test has power :data:`TARGET_POWER` at level ALPHA / 6 when the attention is later on a share
    (1 - q) :data:`PLANNING_LATER_SHARE` of the seeds and earlier on (1 - q)(1 - PLANNING_LATER_SHARE)
    (:func:`lagtheory.experiments.statistics.power.mcnemar_power`); and the power at the pilot's own shares.

    Parameters
    ----------
    pilot : mapping
        The pilot's record (:func:`measure`).

    Returns
    -------
    dict
        ``no_sign`` (q), ``p_later``, ``p_earlier``, ``seeds`` (None above :data:`MAX_SEEDS`), and per
        language ``observed`` (later and earlier shares of the pilot) with the power at ``seeds``.
    """
    reading, score = OUTCOMES["primary"]
    level = ALPHA / len(pilot["languages"])
    observed, no_sign = {}, 0.0
    for language, entry in pilot["languages"].items():
        found = comparison(entry, reading, score)
        n = len(pilot["seeds"])
        observed[language] = {"later": found["later"] / n, "earlier": found["earlier"] / n}
        no_sign = max(no_sign, 1 - (found["later"] + found["earlier"]) / n)
    p_later = (1 - no_sign) * PLANNING_LATER_SHARE
    p_earlier = (1 - no_sign) * (1 - PLANNING_LATER_SHARE)
    seeds = smallest_n(lambda n: mcnemar_power(n, p_later, p_earlier, level), TARGET_POWER, stop=MAX_SEEDS)
    for shares in observed.values():
        shares["power"] = mcnemar_power(seeds or MAX_SEEDS, shares["later"], shares["earlier"], level)
    return {"no_sign": no_sign, "p_later": p_later, "p_earlier": p_earlier, "seeds": seeds, "observed": observed}


def derive_design(pilot: Mapping[str, Any]) -> dict[str, Any]:
    """The registered design from the pilot's record: languages, training, evaluation words, seeds
    (:func:`planning`), outcomes and rules.

    Parameters
    ----------
    pilot : mapping
        The pilot's record.

    Returns
    -------
    dict
        The design (written by :func:`lagtheory.experiments.confirmatory.transformer_design.design_text`).

    Raises
    ------
    ValueError
        If the pilot calls for more than :data:`MAX_SEEDS` seeds.
    """
    planned = planning(pilot)
    if planned["seeds"] is None:
        raise ValueError(f"the pilot calls for more than {MAX_SEEDS} seeds per language")
    return {
        "format": "lagtheory-lag-design-1",
        "languages": list(LANGUAGES),
        "training": config_to_dict(LANGUAGE_TRAINING),
        "evaluation": {"seed": F.EVALUATION_SEED, "words": F.EVALUATION_WORDS},
        "seeds": list(range(FIRST_SEED, FIRST_SEED + planned["seeds"])),
        "outcomes": {name: list(value) for name, value in OUTCOMES.items()},
        "alpha": ALPHA,
        "min_defined": MIN_DEFINED,
        "planning": planned,
    }


def load_design(path: str | Path = LAG_DESIGN, page: str | Path = REGISTRATION_PAGE) -> dict[str, Any]:
    """The design file, after checking that its SHA-256 is the one the registered section quotes.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        The design file.
    page : str or pathlib.Path, optional
        The registration page.

    Returns
    -------
    dict
        The design.

    Raises
    ------
    ValueError
        If the file's SHA-256 is not the one quoted, or the section does not quote one exactly once.
    """
    return load_frozen(Path(path), registered_design_hash(page, "lag"), "lag design")


def write_part(part: str, output: Path, record: Path | None = None) -> Path:
    """The lag study's part of the one command (``python -m lagtheory.experiments.run lag-study --part
    pilot|design|run|analyse``, or its alias ``python -m lagtheory.experiments.confirmatory.lag_study
    pilot|design|run|analyse``, which the registered section quotes): ``pilot`` runs the exploratory pilot,
    ``design`` derives the design from the pilot's record, ``run`` runs the registered study, ``analyse`` analyses
    its record.

    Parameters
    ----------
    part : str
        ``"pilot"``, ``"design"``, ``"run"`` or ``"analyse"``.
    output : pathlib.Path
        The file to write (its folder exists).
    record : pathlib.Path, optional
        ``design``: the pilot's record; ``analyse``: the study's record (default: the committed ones).

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    torch.set_num_threads(1)
    if part == "pilot":
        found = {**measure(LANGUAGES, LANGUAGE_TRAINING, PILOT_SEEDS), "exploratory": True}
    elif part == "design":
        pilot = json.loads((record or LAG_RECORDS / "pilot.json").read_text(encoding="utf-8"))
        output.write_text(design_text(derive_design(pilot)), encoding="utf-8")
        return output
    elif part == "run":
        design = load_design()
        config = config_from_dict(TrainingConfig, design["training"])
        found = measure(design["languages"], config, design["seeds"])
        found["registration"] = Path(REGISTRATION_LAG_HASH).read_text(encoding="utf-8").strip()
    else:
        study = json.loads((record or LAG_RECORDS / "study.json").read_text(encoding="utf-8"))
        found = {**analyse(study), **{key: study[key] for key in ("registration",) if key in study}}
    output.write_text(json.dumps(found, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n")
    return output


if __name__ == "__main__":
    from lagtheory.experiments.run import alias

    alias("lagtheory.experiments.confirmatory.lag_study")
