"""The registered transformer study's design (``book/registration.md``, its transformer section), derived once
from the exploratory pilot's committed records and stored as frozen data.

**The design** is derived from the pilot's tuning record
(:mod:`lagtheory.experiments.exploratory.transformer_pilot`) by :func:`derive_design` and stored in
:data:`~lagtheory.experiments.paths.TRANSFORMER_DESIGN` (``book/data/transformer_design.json``): the configuration,
the languages and the fit gate, the step-size grid, each schedule's tuned configuration and the shared rate of
every language, the seeds and their power calculation, the tests. The registered section quotes the file's
SHA-256, so the file cannot change without the registration's hash changing; the runs and the analysis read the
design only from the file (:func:`load_design`, which refuses a file whose hash is not the one the registered
section quotes), never from the code's defaults, and ``tests/test_transformer_study.py`` derives the design again
from the pilot's records and compares it with the file.

Rules of :func:`derive_design` (from the pilot's tuning stage, on its 16 seeds, evaluated on the validation
set):

* **criterion** of a configuration: the mean over the seeds of the capped log10 held-out loss
  (:func:`lagtheory.experiments.exploratory.design.capped_log_loss`; lower is better); ties go to the smaller rate, then
  the shorter warm-up;
* **best**: joint's rate, and lag's (rate, warm-up fraction), with the lowest criterion;
* **shared rate**: the rate at which the mean of joint's and lag's (warm-up T/4) criteria is lowest;
* **fit gate**: a language enters the comparison when some row of the tuning grid (a schedule at a rate and
  warm-up) recognises it at the training length N0 (every random and hard test word of length N0 right) in at
  least :data:`GATE_SHARE` of the seeds; PARITY is the control, run but never compared;
* **seeds**: the smallest n reaching 80% power for each registered McNemar test at Bonferroni's level
  alpha / m (m: the languages compared), under planning effects pooled over those languages in the pilot (the
  discordant shares at the variant's configurations), capped at :data:`MAX_SEEDS`; the power of the
  equivalence tests at that n is stated beside it;
* **grid**: the study's step sizes :data:`GRID` (the pilot's five and two above them).

The runs are :mod:`lagtheory.experiments.confirmatory.transformer_runs`'s, the analysis
:mod:`lagtheory.experiments.confirmatory.transformer_analysis`'s, the registered text
:mod:`lagtheory.experiments.confirmatory.transformer_text`'s.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats

from ..engine.config import config_from_dict, config_to_dict
from ..exploratory.transformer_pilot import CHOSEN, RATES
from ..parameters import fill_doc
from ..paths import REGISTRATION_PAGE, TRANSFORMER_DESIGN
from ..statistics.power import mcnemar_power, smallest_n, window_accuracy
from ..tasks.transformer.task import TransformerSetting
from .registration import registered_section
from .transformer_rows import (
    OUTCOMES,
    VARIANTS,
    criterion,
    load_pilot,
    outcome_flags,
    pilot_rows,
    recognised_at,
    variant_rows,
)

CONTROL = "PARITY"
GATE_SHARE = 0.9
"""The share of the pilot's seeds that some row must recognise at N0 for a language to pass the fit gate."""
ALPHA = 0.05
MARGIN = 0.1
"""Equivalence margin of the binary outcomes (the discordance rate below 0.1), as the confirmatory study's."""
WINDOW_SHARE = 0.9
TARGET_POWER = 0.8
"""The power the seeds are planned for, per registered McNemar test."""
MAX_SEEDS = 200
"""The most seeds per language the study's compute allows (about 3 hours on two cores)."""
GRID = (0.001, 0.00316, 0.01, 0.0316, 0.1, 0.316, 1.0)
"""The study's step-size grid, Adam's base rate for both groups alike, made of the pilot's five rates and two
above them, half a decade apart, so that the window's upper edge can fall inside the grid (every pilot run of
FIRST succeeded at every pilot rate)."""
SEARCH_LIMIT = 2000
"""The power calculation looks for the needed seeds up to this many (ten times :data:`MAX_SEEDS`)."""
FIRST_SEED = 600_000
"""The registered seeds are FIRST_SEED .. FIRST_SEED + n - 1, used by no other run."""
TEST_SEED = 2031
"""The registered test words are drawn from this seed, which neither the pilot (2027, and 2527 for its
validation set) nor any other run used."""
DESIGN_HASH_PATTERN = re.compile(r"design file SHA-256: `([0-9a-f]{64})`")
"""How the registered section quotes the design file's hash."""
COMPUTE_DTYPE = "float64"
"""The study's arithmetic, set from the pilot's comparison of float32 with float64 (the registration says why)."""


def _best(rows: Mapping[str, Mapping[str, Any]], score: Any) -> Mapping[str, Any]:
    """The row of the lowest ``score(row)``; ties to the smaller rate, then the shorter warm-up."""
    return min(rows.values(), key=lambda row: (score(row), row["rate"], row["warm_fraction"] or 0.0))


def tuned(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The tuned configurations of one language from its pilot rows (module docstring): ``joint`` (rate),
    ``lag`` (rate, warm-up fraction), ``shared_rate``, and each with its criterion.

    Parameters
    ----------
    rows : mapping
        Row key -> row (:func:`~lagtheory.experiments.confirmatory.transformer_rows.pilot_rows`).

    Returns
    -------
    dict
        ``joint``, ``lag``, ``shared_rate``.
    """
    joints = {k: r for k, r in rows.items() if r["warm_fraction"] is None}
    lags = {k: r for k, r in rows.items() if r["warm_fraction"] is not None}
    joint = _best(joints, lambda r: criterion(r["values"]))
    lag = _best(lags, lambda r: criterion(r["values"]))

    def shared(row: Mapping[str, Any]) -> float:
        partner = rows[f"lag rate={row['rate']:g} warm=0.25"]
        return (criterion(row["values"]) + criterion(partner["values"])) / 2

    shared_row = _best(joints, shared)
    return {
        "joint": {"rate": joint["rate"], "criterion": criterion(joint["values"])},
        "lag": {"rate": lag["rate"], "warm_fraction": lag["warm_fraction"], "criterion": criterion(lag["values"])},
        "shared_rate": shared_row["rate"],
    }


def gate(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The fit gate of one language (module docstring): the largest share of seeds recognising at N0 over the
    rows, the row reaching it, and whether it is at least :data:`GATE_SHARE`.

    Parameters
    ----------
    rows : mapping
        Row key -> row (:func:`~lagtheory.experiments.confirmatory.transformer_rows.pilot_rows`).

    Returns
    -------
    dict
        ``passes``, ``share``, ``row``.
    """
    shares = {key: float(recognised_at(row["values"], 0).mean()) for key, row in rows.items()}
    best = max(shares, key=lambda key: (shares[key], -list(shares).index(key)))
    return {"passes": shares[best] >= GATE_SHARE, "share": shares[best], "row": best}


def planning(
    pilot: Mapping[str, Mapping[str, Mapping[str, Any]]],
    choices: Mapping[str, Mapping[str, Any]],
    languages: Sequence[str],
) -> dict[str, Any]:
    """The power calculation (module docstring): per variant and outcome the discordant shares pooled over the
    compared ``languages`` in the pilot (``p10`` in lag's favour, ``p01`` in joint's), the seeds reaching
    :data:`TARGET_POWER` at alpha / m (None beyond :data:`SEARCH_LIMIT`), and the seeds chosen: the largest requirement,
    capped at :data:`MAX_SEEDS`, with the power each test then has.

    Parameters
    ----------
    pilot : mapping
        Language -> row key -> row (:func:`~lagtheory.experiments.confirmatory.transformer_rows.pilot_rows`).
    choices : mapping
        Language -> :func:`tuned`'s output.
    languages : sequence of str
        The compared languages (m of them).

    Returns
    -------
    dict
        ``effects`` (variant -> outcome -> p10, p01, needed), ``seeds``, ``power`` (variant -> outcome -> power at
        the chosen seeds), ``window`` (the window's classification accuracy at 0.97, 0.95 and 0.8).
    """
    level = ALPHA / len(languages)
    effects: dict[str, dict[str, Any]] = {}
    for variant in VARIANTS:
        effects[variant] = {}
        for outcome in OUTCOMES:
            lag_better = joint_better = pairs = 0
            for language in languages:
                joint_key, lag_key_ = variant_rows(pilot[language], choices[language], variant)
                joint = outcome_flags(pilot[language][joint_key]["values"], outcome)
                lag = outcome_flags(pilot[language][lag_key_]["values"], outcome)
                favour_lag = (joint & ~lag) if outcome == "failure" else (lag & ~joint)
                favour_joint = (lag & ~joint) if outcome == "failure" else (joint & ~lag)
                lag_better += int(favour_lag.sum())
                joint_better += int(favour_joint.sum())
                pairs += joint.size
            p10, p01 = lag_better / pairs, joint_better / pairs
            needed = smallest_n(
                lambda n, p10=p10, p01=p01: mcnemar_power(n, p10, p01, level), TARGET_POWER, stop=SEARCH_LIMIT
            )
            effects[variant][outcome] = {"p10": p10, "p01": p01, "needed": needed}
    reachable = [e["needed"] for v in effects.values() for e in v.values() if e["needed"] is not None]
    seeds = min(MAX_SEEDS, max(reachable)) if reachable else MAX_SEEDS
    power = {
        variant: {
            outcome: mcnemar_power(seeds, effects[variant][outcome]["p10"], effects[variant][outcome]["p01"], level)
            for outcome in OUTCOMES
        }
        for variant in VARIANTS
    }
    equivalence = {
        variant: {
            outcome: equivalence_power(
                seeds, effects[variant][outcome]["p10"] + effects[variant][outcome]["p01"], level
            )
            for outcome in OUTCOMES
        }
        for variant in VARIANTS
    }
    window = {str(p): window_accuracy(seeds, p, WINDOW_SHARE) for p in (0.97, 0.95, 0.8)}
    return {
        "level": level,
        "effects": effects,
        "seeds": seeds,
        "power": power,
        "equivalence_power": equivalence,
        "window": window,
    }


def equivalence_power(n: int, discordance: float, level: float, margin: float = MARGIN) -> float:
    """Power of the exact equivalence test of a binary outcome (one-sided ``binomtest(discordant, n, margin,
    alternative="less")`` below ``level``) when a pair is discordant with probability ``discordance``: the
    test rejects at k discordant pairs or fewer, k the largest with P(Bin(n, margin) <= k) < level.

    Parameters
    ----------
    n : int
        Pairs, >= 1.
    discordance : float
        The true discordance, in [0, 1].
    level : float
        The test's level, in (0, 1).
    margin : float, optional
        The equivalence margin.

    Returns
    -------
    float
        The power (0 when no count is rejected).
    """
    counts = np.arange(n + 1)
    rejected = counts[scipy.stats.binom.cdf(counts, n, margin) < level]
    return float(scipy.stats.binom.cdf(rejected[-1], n, discordance)) if rejected.size else 0.0


def derive_design(tuning: Mapping[str, Any], configuration: Mapping[str, Any]) -> dict[str, Any]:
    """The registered design from the pilot's tuning record (module docstring), in the configuration the
    configuration stage chose (``configuration``: the architecture fields and ``compute_dtype``).

    Parameters
    ----------
    tuning : mapping
        The pilot's tuning record.
    configuration : mapping
        Architecture fields of :class:`~lagtheory.experiments.tasks.transformer.task.TransformerSetting` and the
        arithmetic (``compute_dtype``).

    Returns
    -------
    dict
        The design, JSON-ready.
    """
    pilot = pilot_rows(tuning)
    unit = next(iter(tuning["units"].values()))
    setting = config_from_dict(TransformerSetting, unit["setting"])
    setting = dataclasses.replace(setting, test_seed=TEST_SEED, **configuration)
    training = unit["rows"][0]["training"]
    gates = {language: gate(rows) for language, rows in pilot.items()}
    choices = {language: tuned(rows) for language, rows in pilot.items()}
    compared = [language for language in pilot if language != CONTROL and gates[language]["passes"]]
    plan = planning(pilot, choices, compared)
    return {
        "format": "lagtheory-transformer-design-1",
        "pilot": {"seeds": sorted({s for rows in pilot.values() for s in next(iter(rows.values()))["seeds"]})},
        "setting": config_to_dict(setting),
        "training": training,
        "rates": list(GRID),
        "tuning_rates": list(RATES),
        "languages": list(pilot),
        "compared": compared,
        "control": CONTROL,
        "gate": gates,
        "choices": choices,
        "plan": plan,
        "seeds": list(range(FIRST_SEED, FIRST_SEED + plan["seeds"])),
        "alpha": ALPHA,
        "margin": MARGIN,
        "window_share": WINDOW_SHARE,
        "variants": list(VARIANTS),
        "outcomes": list(OUTCOMES),
    }


def design_text(design: Mapping[str, Any]) -> str:
    """The design as stored: sorted keys, two-space indent, a final newline.

    Parameters
    ----------
    design : mapping
        The design.

    Returns
    -------
    str
        The file's text.
    """
    return json.dumps(design, sort_keys=True, indent=2, allow_nan=False) + "\n"


def design_hash(path: Path = TRANSFORMER_DESIGN) -> str:
    """SHA-256 of the design file's bytes.

    Parameters
    ----------
    path : pathlib.Path, optional
        The transformer study's design file (default :data:`~lagtheory.experiments.paths.TRANSFORMER_DESIGN`).

    Returns
    -------
    str
        64 lowercase hex digits.
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@fill_doc
def registered_design_hash(page: Path = REGISTRATION_PAGE, section: str = "transformer") -> str:
    """The design file's SHA-256 as the registered section ``section`` quotes it, in a line ``design file SHA-256:
    `<hash>```: the one reading of the quoted hash for the three registered designs (this study's, the
    replication's and the lag study's).

    Parameters
    ----------
    %(page)s
    section : str, optional
        A key of :data:`~lagtheory.experiments.confirmatory.registration.SECTIONS` (default ``"transformer"``).

    Returns
    -------
    str
        64 lowercase hex digits.

    Raises
    ------
    ValueError
        If the section does not quote one hash exactly once.
    """
    found = DESIGN_HASH_PATTERN.findall(registered_section(Path(page).read_text(encoding="utf-8"), section))
    if len(found) != 1:
        raise ValueError(f"the {section} section must quote the design file's SHA-256 once, found {len(found)}")
    return found[0]


@fill_doc
def load_design(path: Path = TRANSFORMER_DESIGN, page: Path = REGISTRATION_PAGE) -> dict[str, Any]:
    """The registered design, refused unless its SHA-256 is the one the registered section quotes.

    Parameters
    ----------
    path : pathlib.Path, optional
        The transformer study's design file (default :data:`~lagtheory.experiments.paths.TRANSFORMER_DESIGN`).
    %(page)s

    Returns
    -------
    dict
        The design.

    Raises
    ------
    ValueError
        If the file is not the registered one.
    """
    return load_frozen(path, registered_design_hash(page), "design")


def load_frozen(path: Path, expected: str, what: str) -> dict[str, Any]:
    """A frozen JSON file, refused unless its SHA-256 (:func:`design_hash`) is the registered one; the one check
    both registered designs (this study's and the replication's) are loaded through.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    expected : str
        The SHA-256 its registered section quotes.
    what : str
        What the file is, named in the error (``"design"``, ``"replication design"``).

    Returns
    -------
    dict
        The file's JSON.

    Raises
    ------
    ValueError
        If the file's SHA-256 is not ``expected``.
    """
    if design_hash(path) != expected:
        raise ValueError(f"{path} is not the registered {what} (its SHA-256 is not {expected})")
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_design(output: Path) -> Path:
    """Derive the design from the pilot's committed tuning record in the configuration the pilot chose
    (:data:`~lagtheory.experiments.exploratory.transformer_pilot.CHOSEN`, :data:`COMPUTE_DTYPE`) and write it as
    stored (:func:`design_text`); the registered file is ``book/data/transformer_design.json``, which this never
    writes unless asked to.

    Parameters
    ----------
    output : pathlib.Path
        The file written.

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    design = derive_design(load_pilot("tuning"), {**CHOSEN, "compute_dtype": COMPUTE_DTYPE})
    output.write_text(design_text(design), encoding="utf-8")
    return output
