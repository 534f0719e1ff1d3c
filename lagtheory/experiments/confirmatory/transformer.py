"""The registered transformer study (issue 32; ``book/registration.md``, its transformer section): the design
as frozen data, its runs, and its registered analysis.

**The design** is derived once from the exploratory pilot's committed records
(:mod:`lagtheory.experiments.exploratory.transformer_pilot`) by :func:`derive_design` and stored in :data:`~lagtheory.experiments.paths.TRANSFORMER_DESIGN`
(``book/data/transformer_design.json``): the configuration, the languages and the fit gate, the step-size grid,
each schedule's tuned configuration and the shared rate of every language, the seeds and their power
calculation, the tests. The registered section quotes the file's SHA-256, so the file cannot change without
the registration's hash changing; the runs and the analysis read the design only from the file
(:func:`load_design`, which refuses a file whose hash is not the one the registered section quotes), never from
the code's defaults, and ``tests/test_transformer_study.py`` derives the design again from the pilot's records
and compares it with the file.

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

**Runs** (:func:`study_units`): every compared language and the control, joint and lag (T/4) at every rate of
the grid, plus lag at its tuned configuration where the grid does not hold it, on the registered seeds, with
the registered test set; equal total steps. **Analysis** (:func:`analyse`): per language and variant (shared
rate, best-vs-best) H1 failure and H2 recognition at 4 N0 and 16 N0 (exact McNemar, equivalence when the
discordance is below 0.1, Holm within each family of languages), and H4 the step-size window (a rate is in a
schedule's window when at least 90% of the seeds do not fail there; ratio of widths with bootstrap intervals,
Bonferroni over the languages), through the confirmatory study's functions
(:mod:`lagtheory.experiments.confirmatory.analysis`).

The command::

    python -m lagtheory.experiments.confirmatory.transformer design|run|analyse [--workers N] [--output PATH]

``design`` writes the design from the pilot's records (default ``runs/transformer_study/design.json``), ``run``
the study's record (``runs/transformer_study/study.json.gz``; refuses to start when the registered section does
not hash to its stored value or the design file is not the registered one), ``analyse`` the analysis.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import hashlib
import json
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats
import torch

from ..engine.distributed import run_units
from ..exploratory.design import capped_log_loss
from ..exploratory.records import config_from_dict, config_to_dict, versions, write_gzipped
from ..exploratory.transformer_pilot import (
    CHOSEN,
    RATES,
    SEED_CHUNK,
    WARM_FRACTIONS,
    run_unit,
    training_at,
    unit_payload,
)
from ..parameters import fill_doc
from ..paths import REGISTRATION_PAGE, REGISTRATION_TRANSFORMER_HASH, TRANSFORMER_DESIGN
from ..statistics.power import mcnemar_power, smallest_n, window_accuracy
from ..tasks.transformer.task import TransformerSetting
from .analysis import binary_outcome, family_verdicts, window_outcome, window_verdict
from .registration import page_hash, registered_section, stored_hash

FORMAT = "lagtheory-transformer-study-1"
STUDY_FOLDER = Path("book/data/transformer_study")
"""Where the committed study record and analysis are."""
OUTPUT_FOLDER = Path("runs") / "transformer_study"
PILOT_FOLDER = Path("book/data/transformer_pilot")
"""The pilot's committed records."""
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
VARIANTS = ("shared", "best")
OUTCOMES = ("failure", "recognition")


# -- the design ----------------------------------------------------------------------------------------


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


def _best(rows: Mapping[str, Mapping[str, Any]], score: Any) -> Mapping[str, Any]:
    """The row of the lowest ``score(row)``; ties to the smaller rate, then the shorter warm-up."""
    return min(rows.values(), key=lambda row: (score(row), row["rate"], row["warm_fraction"] or 0.0))


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


@fill_doc
def tuned(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The tuned configurations of one language from its pilot rows (module docstring): ``joint`` (rate),
    ``lag`` (rate, warm-up fraction), ``shared_rate``, and each with its criterion.

    Parameters
    ----------
    %(pilot_rows)s

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


@fill_doc
def gate(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The fit gate of one language (module docstring): the largest share of seeds recognising at N0 over the
    rows, the row reaching it, and whether it is at least :data:`GATE_SHARE`.

    Parameters
    ----------
    %(pilot_rows)s

    Returns
    -------
    dict
        ``passes``, ``share``, ``row``.
    """
    shares = {key: float(recognised_at(row["values"], 0).mean()) for key, row in rows.items()}
    best = max(shares, key=lambda key: (shares[key], -list(shares).index(key)))
    return {"passes": shares[best] >= GATE_SHARE, "share": shares[best], "row": best}


def variant_rows(rows: Mapping[str, Mapping[str, Any]], choice: Mapping[str, Any], variant: str) -> tuple[str, str]:
    """The keys of joint's and lag's rows of a variant: "shared" (both at the shared rate, lag T/4) or "best".

    Parameters
    ----------
    rows : mapping
        Row key -> row; only used to check the keys exist.
    choice : mapping
        :func:`tuned`'s output.
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
        Language -> row key -> row (:func:`pilot_rows`).
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


@fill_doc
def design_hash(path: Path = TRANSFORMER_DESIGN) -> str:
    """SHA-256 of the design file's bytes.

    Parameters
    ----------
    %(design_file)s

    Returns
    -------
    str
        64 lowercase hex digits.
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@fill_doc
def registered_design_hash(page: Path = REGISTRATION_PAGE) -> str:
    """The design file's SHA-256 as the registered transformer section quotes it.

    Parameters
    ----------
    %(registration_page)s

    Returns
    -------
    str
        64 lowercase hex digits.

    Raises
    ------
    ValueError
        If the section does not quote one hash exactly once.
    """
    found = DESIGN_HASH_PATTERN.findall(registered_section(Path(page).read_text(encoding="utf-8"), "transformer"))
    if len(found) != 1:
        raise ValueError(f"the transformer section must quote the design file's SHA-256 once, found {len(found)}")
    return found[0]


@fill_doc
def load_design(path: Path = TRANSFORMER_DESIGN, page: Path = REGISTRATION_PAGE) -> dict[str, Any]:
    """The registered design, refused unless its SHA-256 is the one the registered section quotes.

    Parameters
    ----------
    %(design_file)s
    %(registration_page)s

    Returns
    -------
    dict
        The design.

    Raises
    ------
    ValueError
        If the file is not the registered one.
    """
    expected = registered_design_hash(page)
    if design_hash(path) != expected:
        raise ValueError(f"{path} is not the registered design (its SHA-256 is not {expected})")
    return json.loads(Path(path).read_text(encoding="utf-8"))


# -- the runs ------------------------------------------------------------------------------------------


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
    from ..engine.cells import TrainingConfig

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


def run_study(workers: int, output: Path, quiet: bool = False) -> Path:
    """Run every unit of the registered study (resumable: finished units are kept in ``<output>.units``) and
    write its record: the registration hash, the design file's hash, the units with their per-seed values, and
    the wall time of this command.

    Parameters
    ----------
    workers : int
        Worker processes of the local dask cluster.
    output : pathlib.Path
        The record (gzipped JSON).
    quiet : bool, optional
        No progress bar.

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    import time

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
        "command": shlex.join(["python", "-m", "lagtheory.experiments.confirmatory.transformer", "run"]),
        "versions": versions(),
        "seeds": list(design["seeds"]),
        "wall_seconds": time.perf_counter() - start,
        "units": {name: {**{k: v for k, v in units[name].items() if k != "rows"}, **results[name]} for name in units},
    }
    write_gzipped(record, output)
    return output


# -- the analysis ----------------------------------------------------------------------------------------


@fill_doc
def analyse(record: Mapping[str, Any], design: Mapping[str, Any], resamples: int = 100_000) -> dict[str, Any]:
    """The registered analysis (module docstring) of the study's record under its design.

    Parameters
    ----------
    record : mapping
        The study's record.
    %(transformer_design)s
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


@fill_doc
def main(arguments: list[str] | None = None) -> Path:
    """The command of the module docstring; returns the path written.

    Parameters
    ----------
    %(arguments)s

    Returns
    -------
    pathlib.Path
        The file written.
    """
    parse = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parse.add_argument("what", choices=("design", "run", "analyse"))
    parse.add_argument("--output", type=Path, default=None)
    parse.add_argument("--record", type=Path, default=STUDY_FOLDER / "study.json.gz", help="analyse: the record")
    parse.add_argument("--workers", type=int, default=2)
    parse.add_argument("--quiet", action="store_true")
    args = parse.parse_args(arguments)
    if args.what == "design":
        output = args.output or OUTPUT_FOLDER / "design.json"
        design = derive_design(load_pilot("tuning"), {**CHOSEN, "compute_dtype": COMPUTE_DTYPE})
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(design_text(design), encoding="utf-8")
        return output
    if args.what == "run":
        return run_study(args.workers, args.output or OUTPUT_FOLDER / "study.json.gz", args.quiet)
    output = args.output or OUTPUT_FOLDER / "analysis.json"
    with gzip.open(args.record, "rt", encoding="utf-8") as handle:
        record = json.load(handle)
    result = analyse(record, load_design())
    output.parent.mkdir(parents=True, exist_ok=True)
    # a window ratio is +inf where only lag has a window (written as JSON's Infinity, as the confirmatory analysis)
    output.write_text(json.dumps(result, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {output}", file=sys.stderr)
    return output


if __name__ == "__main__":
    main()


# -- the registered text ------------------------------------------------------------------------------------


def _rate(rate: float) -> str:
    return f"{rate:g}"


@fill_doc
def registered_text(design: Mapping[str, Any], design_sha256: str) -> str:
    """The registered transformer section's text (between its markers on ``book/registration.md``), written
    from the design, so that the page states exactly what the frozen file holds (a test compares the two).

    Parameters
    ----------
    %(transformer_design)s
    design_sha256 : str
        The design file's SHA-256.

    Returns
    -------
    str
        Markdown, ending in a newline.
    """
    setting = design["setting"]
    pilot = design["pilot"]["seeds"]
    compared, control = design["compared"], design["control"]
    failing = [language for language in design["languages"] if language not in compared and language != control]
    seeds = design["seeds"]
    plan = design["plan"]
    m = len(compared)
    gate_rows = "\n".join(
        f"| {language} | {design['gate'][language]['share']:.4g} | "
        + ("compared" if language in compared else "control" if language == control else "fails the gate")
        + " |"
        for language in design["languages"]
    )
    choice_rows = "\n".join(
        f"| {language} | {_rate(c['shared_rate'])} | {_rate(c['joint']['rate'])} | {_rate(c['lag']['rate'])}, "
        f"{c['lag']['warm_fraction']:g} |"
        for language, c in ((language, design["choices"][language]) for language in compared)
    )
    power_rows = "\n".join(
        f"| {variant} | {outcome} | {plan['effects'][variant][outcome]['p10']:.4g} | "
        f"{plan['effects'][variant][outcome]['p01']:.4g} | {plan['effects'][variant][outcome]['needed'] or f'> {SEARCH_LIMIT}'} | "
        f"{plan['power'][variant][outcome]:.4g} | {plan['equivalence_power'][variant][outcome]:.4g} |"
        for variant in design["variants"]
        for outcome in design["outcomes"]
    )
    return f"""
## Registered section: the standard transformer study

### Scope and status

Registered before any of its runs; no run has used its seeds. It was written from the exploratory pilot of
issue 32 (`lagtheory.experiments.exploratory.transformer_pilot`, seeds {pilot[0]}..{pilot[-1]}, records in
`book/data/transformer_pilot/`). Its design is the file `book/data/transformer_design.json`, derived from the
pilot's tuning record by `lagtheory.experiments.confirmatory.transformer.derive_design` with the rules below;
design file SHA-256: `{design_sha256}`. The runs and the analysis read the design from that file only, and
refuse a file with another hash.

### Model and data

The standard small transformer of `lagtheory.experiments.tasks.transformer`: {setting["layers"]} pre-norm
block, width {setting["width"]}, {setting["heads"]} heads, MLP width {setting["mlp_width"]}; attention scores
multiplied by the log of the number of tokens (the book's length scaling); positions defined at every length
(the classification token and the first letter each a learned vector, every later position one shared
learned vector); the standard initialisation (weight matrices LeCun-normal, embeddings N(0, 1), biases 0);
{setting["compute_dtype"]} arithmetic. Training words have lengths 1..{setting["max_train_length"]} (label +1
or -1 with probability 1/2, the word uniform in its class); Adam, T = {design["training"]["steps"]} steps,
batches of {design["training"]["batch_size"]}, equal total steps. Test words at lengths
{setting["max_train_length"]}, {4 * setting["max_train_length"]} and {16 * setting["max_train_length"]}:
{setting["test_per_class"]} random words of each class and the hard words ({setting["pairs_per_class"]} minimal
pairs started from each class, and the long runs), drawn from test seed {setting["test_seed"]}, which no
earlier run used.

### Hypotheses

Each compares lag (the output group alone for the warm-up, then both groups) with joint training, paired by
seed, two-sided.

- **H1, failure.** A run *fails* when its held-out loss (the mean of the logistic loss on the random test
  words at {4 * setting["max_train_length"]} and {16 * setting["max_train_length"]}) is not finite or is at or
  above log 2, the loss of the prediction 0.
- **H2, recognition at 4 and 16 times the training length.** A run *recognises* the language when it
  classifies every random and hard test word at {4 * setting["max_train_length"]} and at
  {16 * setting["max_train_length"]} right (a sampled check: no exact verifier exists for this model).
- **H4, step-size window.** A rate of the grid is in a schedule's window when at least
  {design["window_share"]:.0%} of the seeds do not fail there; lag's window is wider than joint's.

The outcomes are reported apart, each with its own verdicts, never combined.

### Languages and the fit gate

A language enters the comparison when some configuration of the pilot's tuning grid (a schedule at a rate
and warm-up) recognises it at the training length {setting["max_train_length"]} (every random and hard test
word of that length right) in at least {GATE_SHARE:.0%} of the pilot's seeds. PARITY is the control: run at
every rate, never compared. The pilot gave (share of seeds at the best row):

| language | share recognising at {setting["max_train_length"]} | status |
|---|---|---|
{gate_rows}

So {m} languages are compared ({", ".join(compared)}); {", ".join(failing)} fail the gate and are reported
with what the pilot's diagnostics found, not compared.

### Runs, tuning, seeds

- **Grid**: Adam at the base rates {", ".join(_rate(r) for r in design["rates"])} (half a decade apart, the
  same step size for both groups), joint and lag (warm-up T/4), for every compared language and the control.
- **Shared rate**: both schedules at the rate whose mean criterion over joint and lag (T/4) was lowest in the
  pilot; **best-vs-best**: joint at its best rate, lag at its best rate and warm-up fraction (1/8, 1/4, 1/2).
  The criterion is the mean over the pilot's seeds of the capped log10 held-out loss on the validation set
  (test seed plus 500); ties go to the smaller rate, then the shorter warm-up. Lag at its best configuration
  is run besides the grid where the grid does not hold it.

| language | shared rate | joint's best rate | lag's best rate, warm-up |
|---|---|---|---|
{choice_rows}

- **Seeds**: {len(seeds)} paired seeds per language, **{seeds[0]}..{seeds[-1]}**, never used by any run.

### Tests, families, verdicts

- **H1 and H2**, per language and variant (shared rate; best-vs-best): exact McNemar test on the paired
  indicators (two-sided); equivalence: exact one-sided binomial test that the discordance rate is below
  {design["margin"]:g}. Family-wise error {design["alpha"]:g} within each family, Holm's step-down
  adjustment; a family is one outcome and one variant over the {m} compared languages (4 families).
- **H4**, per language: the widths of the two windows (half a decade per rate), the ratio lag / joint, and
  its percentile bootstrap intervals (100,000 resamples of the seeds, each keeping all its rates and both
  schedules, `numpy.random.default_rng(0)`) at 95% and at Bonferroni's level 1 - {design["alpha"]:g}/{m}; the
  functions of the confirmatory study (`lagtheory.experiments.confirmatory.analysis`).
- **Verdicts** as the confirmatory study's: *helps* (adjusted p < {design["alpha"]:g} in lag's favour; for H4
  the Bonferroni interval above 1), *hurts* (in joint's favour), *equivalent* (H1 and H2 only: no difference
  shown and the adjusted equivalence p < {design["alpha"]:g}), *undetermined* otherwise, printed with the
  power the design had. Per language and outcome the two variants are reported side by side.

### Power and seeds

Planning effects: the discordant shares in the pilot at each variant's configurations, pooled over the
compared languages (p10: pairs in lag's favour, p01: in joint's); McNemar's exact power at Bonferroni's level
{design["alpha"]:g}/{m} (`lagtheory.experiments.statistics.power.mcnemar_power`); target 80%; at most
{MAX_SEEDS} seeds per language (the study's compute). The last column is the power of the equivalence test
(discordance below {design["margin"]:g}) at the same level when the true discordance is p10 + p01.

| variant | outcome | p10 | p01 | seeds for 80% | power at {len(seeds)} seeds | equivalence power |
|---|---|---|---|---|---|---|
{power_rows}

For H4, at {len(seeds)} seeds a rate whose true success probability is 0.97 is counted inside the window with
probability {plan["window"]["0.97"]:.4g}, one at 0.95 with {plan["window"]["0.95"]:.4g}, and one at 0.8 is left
out with probability {plan["window"]["0.8"]:.4g}. The pilot's seeds were few and its configurations were
chosen on them, so these effects are uncertain; the achieved power is stated with every verdict.

### What is reported

Per language, outcome and variant: both rates, the discordant pairs, the adjusted p-values and the verdict,
with the design's power; the windows and their ratio; recognition at each test length; the control's
recognising runs. The chapter on the transformer states its answer first, per language and outcome. Runs
that crash are rerun with the same seed; anything else that departs from this section is logged under
Deviations, dated, before the affected analysis is run.
"""
