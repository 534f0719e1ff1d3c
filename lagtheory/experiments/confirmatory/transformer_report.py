"""The registered transformer study reported as it is, and a replication planned from it: exploratory views of
the study's records (``book/data/transformer_study/``) that leave its registered verdicts as registered.

* **Power against the effect observed** (:func:`observed_power`): the registered design planned its seeds
  against the pilot's discordant pairs (:func:`planning_basis`); here McNemar's exact power at the design's
  level (alpha / m, m the compared languages) against the discordant shares the registered run itself observed,
  pooled over each family's languages as the design pooled the pilot's, and per language.
* **Ceiling** (:func:`ceiling_share`): a comparison is at a ceiling when both schedules have the favourable
  outcome (no failure; recognition) in at least :data:`CEILING_SHARE` of the seeds; there an "equivalent" says
  nothing about lag's effect where there is room for one.
* **Point estimates with intervals** (:func:`estimates`): lag's advantage ``(b - c) / n`` (b the seeds where
  only lag has the better outcome, c those where only joint has) with Tango's score interval for a paired
  difference of proportions (:func:`score_statistic`, :func:`score_interval`).
* **The equivalence rules**: the registered rule (discordance ``(b + c) / n`` below the margin) bounds
  ``p10 + p01``, which bounds the difference ``|p10 - p01|``: valid, but conservative, since two schedules with
  equal rates that fail on different seeds can never pass it. Beside it, the conventional paired test of the
  difference itself: two one-sided score tests (:func:`paired_tost`, the TOST on ``p10 - p01`` with Tango's
  statistic), exploratory, Holm within each family.
* **The grid, rate by rate** (:func:`per_rate`): joint against lag (warm-up T/4) at every rate of the grid,
  exact McNemar, Holm over all the table's tests (exploratory; the registered analysis compares only the
  shared and tuned rates).
* **A replication** (:func:`replication_plan`): the fresh seeds per language giving power
  :data:`~lagtheory.experiments.confirmatory.transformer_design.TARGET_POWER` against a minimum effect of interest
  :data:`EFFECT` on failure and on recognition at 16 N0, at the largest discordance the registered run observed,
  for McNemar's exact test and for the paired TOST within the same margin (:func:`tost_power`), both at
  Bonferroni's level over the compared languages (a lower bound on Holm's power).
* :func:`transformer_answer_sentence`: the chapter's answer in one sentence, computed from the records.

Names imported from :mod:`lagtheory.experiments.confirmatory.transformer`: ``ALPHA``, ``MARGIN``, ``OUTCOMES``,
``TARGET_POWER``, ``VARIANTS``, ``lag_key``, ``outcome_flags``, ``pilot_rows`` and ``variant_rows``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.optimize
import scipy.stats
from numpy.typing import ArrayLike, NDArray

from lagtheory._validation import check_integer, check_probability

from ..parameters import fill_doc
from ..statistics.paired import holm
from ..statistics.power import mcnemar_power, smallest_n, sum_per_total
from .analysis import binary_outcome
from .transformer import (
    ALPHA,
    MARGIN,
    OUTCOMES,
    TARGET_POWER,
    VARIANTS,
    lag_key,
    outcome_flags,
    pilot_rows,
    variant_rows,
)
from .transformer_runs import seconds_per_run  # noqa: F401 (the chapter reads it here, beside the plan)

CEILING_SHARE = 0.95
"""A comparison is at a ceiling when both schedules have the favourable outcome in at least this share of seeds."""
EFFECT = 0.05
"""The replication's minimum effect of interest; 5 percentage points of failure or of recognition at 16 N0."""
REPLICATION_OUTCOMES = ("failure", "recognition at 16 N0")
"""The replication's outcomes; failure, and recognition at 16 N0 alone (the last test length)."""
SEARCH_LIMIT = 20_000
"""The replication's seeds are looked for up to this many."""
_TAIL = 1e-13
"""Discordant counts whose binomial probability lies outside [_TAIL, 1 - _TAIL] are left out of :func:`tost_power`."""


# -- Tango's score statistic for a paired difference of proportions ------------------------------------------


def _counts(b: int, c: int, n: int) -> tuple[int, int, int]:
    n = check_integer(n, "n", 1)
    b = check_integer(b, "b", 0)
    c = check_integer(c, "c", 0)
    if b + c > n:
        raise ValueError(f"b + c must be at most n, got {b} + {c} > {n}")
    return b, c, n


def score_statistic(b: ArrayLike, c: ArrayLike, n: int, delta: float) -> NDArray[np.float64]:
    """Tango's score statistic for H0: ``p10 - p01 = delta`` in a paired 2 x 2 table with ``b`` pairs discordant
    one way and ``c`` the other, of ``n`` (Tango 1998, Statistics in Medicine 17: 891-908):
    ``Z = (b - c - n delta) / sqrt(n (2 q + delta (1 - delta)))``, q the maximum-likelihood estimate of ``p01``
    under H0, ``q = (sqrt(B^2 - 4 A C) - B) / (2 A)`` with ``A = 2n``, ``B = -b - c + (2n - b + c) delta``,
    ``C = -c delta (1 - delta)``. At ``delta = 0`` it is McNemar's ``(b - c) / sqrt(b + c)``; where its variance
    is 0 (no discordant pair at ``delta = 0``) it is 0.

    Parameters
    ----------
    b, c : array_like of int
        Discordant counts, ``b + c <= n`` (arrays of one shape for many tables at once).
    n : int
        The pairs (seeds), >= 1.
    delta : float
        The difference under H0, in (-1, 1).

    Returns
    -------
    ndarray
        Z, of the shape of ``b`` and ``c``.
    """
    n = check_integer(n, "n", 1)
    if not -1.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (-1, 1), got {delta!r}")
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    a_ = 2.0 * n
    b_ = -b - c + (2.0 * n - b + c) * delta
    c_ = -c * delta * (1.0 - delta)
    q = (np.sqrt(np.maximum(b_ * b_ - 4.0 * a_ * c_, 0.0)) - b_) / (2.0 * a_)
    variance = n * (2.0 * q + delta * (1.0 - delta))
    numerator = b - c - n * delta
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(variance > 0, numerator / np.sqrt(np.where(variance > 0, variance, 1.0)), 0.0)


def score_interval(b: int, c: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Tango's score interval for ``p10 - p01``: the deltas whose two-sided score test at ``1 - confidence`` does
    not reject (:func:`score_statistic` is decreasing in delta; each end found by root finding to 1e-12).

    Parameters
    ----------
    b, c : int
        The discordant counts (b favours the first of the pair).
    n : int
        The pairs (seeds), >= 1.
    confidence : float, optional
        The interval's coverage, in (0, 1).

    Returns
    -------
    tuple of float
        (low, high), within [-1, 1].
    """
    b, c, n = _counts(b, c, n)
    check_probability(confidence, "confidence")
    z = scipy.stats.norm.isf((1.0 - confidence) / 2.0)
    edge = 1.0 - 1e-12

    def end(target: float, default: float) -> float:
        gap = lambda delta: float(score_statistic(b, c, n, delta)) - target  # noqa: E731
        if gap(-edge) * gap(edge) > 0:
            return default
        return float(scipy.optimize.brentq(gap, -edge, edge, xtol=1e-12))

    return end(z, -1.0), end(-z, 1.0)


def paired_tost(b: int, c: int, n: int, margin: float) -> float:
    """p-value of the two one-sided score tests of equivalence of a paired difference: H0 ``p10 - p01 <= -margin``
    or ``>= margin``; ``max(P(Z > Z(-margin)), P(Z < Z(margin)))`` with Z :func:`score_statistic` and normal tails.

    Parameters
    ----------
    b, c : int
        The discordant counts.
    n : int
        The pairs (seeds), >= 1.
    margin : float
        The equivalence margin of the paired difference p10 - p01, in (0, 1).

    Returns
    -------
    float
        The p-value; below alpha means ``|p10 - p01| < margin`` is shown at level alpha.
    """
    b, c, n = _counts(b, c, n)
    check_probability(margin, "margin")
    return float(_tost_p(np.array(b), np.array(c), n, margin))


def _tost_p(b: NDArray, c: NDArray, n: int, margin: float) -> NDArray[np.float64]:
    return np.maximum(
        scipy.stats.norm.sf(score_statistic(b, c, n, -margin)), scipy.stats.norm.cdf(score_statistic(b, c, n, margin))
    )


def tost_power(n: int, p10: float, p01: float, margin: float, level: float) -> float:
    """Exact power of :func:`paired_tost` at ``level`` with ``n`` pairs discordant one way with probability
    ``p10`` and the other with ``p01``: the sum of the trinomial probabilities of the tables it rejects (the
    discordant total D is Binomial(n, p10 + p01), and given D the count b is Binomial(D, p10 / (p10 + p01));
    totals of probability below 1e-13 in either tail are left out).

    Parameters
    ----------
    n : int
        The pairs (seeds), >= 1.
    p10, p01 : float
        The two discordance probabilities, ``p10 + p01 <= 1``.
    margin : float
        The equivalence margin of the paired difference p10 - p01, in (0, 1).
    level : float
        The level of each of the two one-sided tests, in (0, 1).

    Returns
    -------
    float
        The power.
    """
    n = check_integer(n, "n", 1)
    check_probability(margin, "margin")
    check_probability(level, "level")
    if not (0.0 <= p10 and 0.0 <= p01 and p10 + p01 <= 1.0):
        raise ValueError(f"p10, p01 must be >= 0 with p10 + p01 <= 1, got {p10!r}, {p01!r}")
    total = p10 + p01
    if total == 0:
        return float(_tost_p(np.array(0), np.array(0), n, margin) < level)
    low = int(scipy.stats.binom.ppf(_TAIL, n, total))
    high = int(scipy.stats.binom.isf(_TAIL, n, total))
    # every table (D, b) of the range at once, the rejected b's pmfs summed per D as a loop over D would
    discordant = np.arange(max(0, low - 1), min(n, high + 1) + 1)
    sizes = discordant + 1
    starts = np.cumsum(sizes) - sizes
    each = np.repeat(discordant, sizes)
    b = np.arange(sizes.sum()) - np.repeat(starts, sizes)
    rejected = _tost_p(b, each - b, n, margin) < level
    kept = np.add.reduceat(rejected.astype(np.int64), starts)  # rejected tables per D
    pmfs = scipy.stats.binom.pmf(b[rejected], each[rejected], p10 / total)
    return sum_per_total(scipy.stats.binom.pmf(discordant, n, total), pmfs, kept)


# -- the registered run, reported as it is ------------------------------------------------------------------


def _family(analysis: Mapping[str, Any], outcome: str, variant: str) -> Mapping[str, Mapping[str, Any]]:
    return analysis["outcomes"][outcome][variant]


@fill_doc
def observed_power(analysis: Mapping[str, Any], design: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per registered outcome and variant, McNemar's exact power at the design's seeds and level (alpha / m)
    against the discordant shares the registered run observed: ``pooled`` over the family's languages (as the
    design pooled the pilot's) and per language.

    Parameters
    ----------
    analysis : mapping
        The registered transformer analysis (``book/data/transformer_study/analysis.json``).
    %(design)s

    Returns
    -------
    dict
        outcome -> variant -> ``{"pooled": {"p10", "p01", "power"}, "languages": language -> power}``.
    """
    n, level = len(design["seeds"]), design["plan"]["level"]
    found: dict[str, dict[str, Any]] = {}
    for outcome in OUTCOMES:
        found[outcome] = {}
        for variant in VARIANTS:
            family = _family(analysis, outcome, variant)
            pairs = sum(e["n"] for e in family.values())
            p10 = sum(e["lag_better"] for e in family.values()) / pairs
            p01 = sum(e["joint_better"] for e in family.values()) / pairs
            found[outcome][variant] = {
                "pooled": {"p10": p10, "p01": p01, "power": mcnemar_power(n, p10, p01, level)},
                "languages": {
                    language: mcnemar_power(e["n"], e["lag_better"] / e["n"], e["joint_better"] / e["n"], level)
                    for language, e in family.items()
                },
            }
    return found


@fill_doc
def planning_basis(design: Mapping[str, Any]) -> dict[str, dict[str, dict[str, int]]]:
    """The pilot's discordant pairs on which the design planned each family's power: per outcome and variant,
    ``lag_better``, ``joint_better`` and ``pairs`` (the pilot's seeds times the compared languages).

    Parameters
    ----------
    %(design)s

    Returns
    -------
    dict
        outcome -> variant -> counts.
    """
    pairs = len(design["pilot"]["seeds"]) * len(design["compared"])
    return {
        outcome: {
            variant: {
                "lag_better": round(design["plan"]["effects"][variant][outcome]["p10"] * pairs),
                "joint_better": round(design["plan"]["effects"][variant][outcome]["p01"] * pairs),
                "pairs": pairs,
            }
            for variant in VARIANTS
        }
        for outcome in OUTCOMES
    }


def ceiling_share(entry: Mapping[str, Any], outcome: str) -> float:
    """The smaller of the two schedules' shares of seeds with the favourable outcome (no failure; recognition).

    Parameters
    ----------
    entry : mapping
        One language's registered outcome (``joint_rate``, ``lag_rate``: the outcome's rates).
    outcome : str
        A registered outcome, "failure" or "recognition".

    Returns
    -------
    float
        The share; the comparison is at a ceiling when it is at least :data:`CEILING_SHARE`.
    """
    rates = (entry["joint_rate"], entry["lag_rate"])
    return min(1.0 - r for r in rates) if outcome == "failure" else min(rates)


def estimates(analysis: Mapping[str, Any], margin: float = MARGIN) -> dict[str, dict[str, dict[str, Any]]]:
    """Per registered outcome, variant and language: lag's advantage ``(b - c) / n`` with Tango's 95% score
    interval, the ceiling share, and the paired TOST's p within ``margin`` (raw and Holm-adjusted within the
    family), beside the registered verdict.

    Parameters
    ----------
    analysis : mapping
        The registered transformer analysis (``book/data/transformer_study/analysis.json``).
    margin : float, optional
        The equivalence margin (default the registered one, 0.1).

    Returns
    -------
    dict
        outcome -> variant -> language -> ``advantage``, ``interval``, ``ceiling``, ``p_tost``,
        ``p_tost_adjusted``, ``verdict``.
    """
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for outcome in OUTCOMES:
        found[outcome] = {}
        for variant in VARIANTS:
            family = _family(analysis, outcome, variant)
            rows = {}
            for language, e in family.items():
                b, c, n = e["lag_better"], e["joint_better"], e["n"]
                rows[language] = {
                    "advantage": (b - c) / n,
                    "interval": score_interval(b, c, n),
                    "ceiling": ceiling_share(e, outcome),
                    "p_tost": paired_tost(b, c, n, margin),
                    "verdict": e["verdict"],
                }
            adjusted = holm([r["p_tost"] for r in rows.values()])
            for row, p in zip(rows.values(), adjusted, strict=True):
                row["p_tost_adjusted"] = float(p)
            found[outcome][variant] = rows
    return found


@fill_doc
def per_rate(record: Mapping[str, Any], design: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Joint against lag (warm-up T/4) at every rate of the grid, per compared language and registered outcome:
    the two rates, the discordant seeds, McNemar's exact p and its Holm adjustment over all the rows returned.

    Parameters
    ----------
    record : mapping
        The registered transformer study's record (``book/data/transformer_study/study.json.gz``).
    %(design)s

    Returns
    -------
    list of dict
        ``language``, ``rate``, ``outcome``, the fields of
        :func:`~lagtheory.experiments.confirmatory.analysis.binary_outcome`, and ``p_adjusted`` (Holm).
    """
    rows = pilot_rows(record)
    found = []
    for language in design["compared"]:
        for outcome in OUTCOMES:
            for rate in design["rates"]:
                joint, lag = (
                    outcome_flags(rows[language][key]["values"], outcome)
                    for key in (f"joint rate={rate:g}", lag_key(rate, 0.25))
                )
                test = binary_outcome(joint, lag, lag_better_when=outcome == "recognition")
                found.append({"language": language, "rate": rate, "outcome": outcome, **test})
    for row, p in zip(found, holm([row["p"] for row in found]), strict=True):
        row["p_adjusted"] = float(p)
    return found


# -- a replication that can decide ---------------------------------------------------------------------------


def replication_flags(values: Mapping[str, Any], outcome: str) -> NDArray[np.bool_]:
    """Per seed, a replication outcome (:data:`REPLICATION_OUTCOMES`): failure, or recognition at 16 N0 (the
    last test length of ``recognised_at``).

    Parameters
    ----------
    values : mapping
        A row's per-seed values (``failed``; ``recognised_at``, seeds by test lengths).
    outcome : str
        One of :data:`REPLICATION_OUTCOMES`.

    Returns
    -------
    ndarray
        bool (seeds,).
    """
    if outcome == "failure":
        return outcome_flags(values, "failure")
    if outcome == "recognition at 16 N0":
        return np.asarray(values["recognised_at"], dtype=bool)[:, -1]
    raise ValueError(f"outcome must be one of {REPLICATION_OUTCOMES}, got {outcome!r}")


@fill_doc
def observed_discordance(record: Mapping[str, Any], design: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The registered run's discordant share per replication outcome, variant and compared language (joint and
    lag at the variant's rows, as the registered analysis pairs them).

    Parameters
    ----------
    record : mapping
        The registered transformer study's record (``book/data/transformer_study/study.json.gz``).
    %(design)s

    Returns
    -------
    dict
        outcome -> variant -> language -> share of seeds where the two schedules disagree.
    """
    rows = pilot_rows(record)
    found: dict[str, dict[str, Any]] = {}
    for outcome in REPLICATION_OUTCOMES:
        found[outcome] = {}
        for variant in VARIANTS:
            found[outcome][variant] = {}
            for language in design["compared"]:
                keys = variant_rows(rows[language], design["choices"][language], variant)
                joint, lag = (replication_flags(rows[language][k]["values"], outcome) for k in keys)
                found[outcome][variant][language] = float(np.mean(joint != lag))
    return found


def effect_shares(discordance: float, effect: float) -> tuple[float, float]:
    """(p10, p01) with ``p10 - p01 = effect`` and ``p10 + p01 = max(discordance, effect)``.

    Parameters
    ----------
    discordance : float
        The discordant share, in [0, 1].
    effect : float
        The difference, in (0, 1).

    Returns
    -------
    tuple of float
        (p10, p01).
    """
    total = max(discordance, effect)
    return (total + effect) / 2.0, (total - effect) / 2.0


# Kept apart from sensitivity.deepen on purpose, alike in signature shape only (two mappings, two numbers with
# registered defaults): a power plan here, Monte Carlo resamples there; no logic in common.
@fill_doc
def replication_plan(
    record: Mapping[str, Any],
    design: Mapping[str, Any],
    effect: float = EFFECT,
    target: float = TARGET_POWER,
) -> dict[str, Any]:
    """The seeds per language for a replication (module docstring): per replication outcome, at the largest
    discordance the registered run observed over the variants and compared languages, the fewest seeds with
    McNemar's power (against ``p10 - p01 = effect``) and the paired TOST's power (within +-``effect``, when
    ``p10 = p01``) at least ``target`` at alpha / m; the seeds chosen are the largest of these, and every
    comparison's power at that number is given.

    Parameters
    ----------
    record : mapping
        The registered transformer study's record (``book/data/transformer_study/study.json.gz``).
    %(design)s
    effect : float, optional
        The minimum effect of interest and equivalence margin.
    target : float, optional
        The power wanted.

    Returns
    -------
    dict
        ``level``, ``effect``, ``discordance`` (:func:`observed_discordance`), ``needed`` (outcome ->
        ``{"discordance", "mcnemar", "tost"}``), ``seeds``, and ``power`` (outcome -> variant -> language ->
        ``{"mcnemar", "tost"}`` at ``seeds``).
    """
    level = ALPHA / len(design["compared"])
    discordance = observed_discordance(record, design)
    needed = {}
    for outcome, by_variant in discordance.items():
        worst = max(d for languages in by_variant.values() for d in languages.values())
        p10, p01 = effect_shares(worst, effect)
        half = max(worst, effect) / 2.0
        needed[outcome] = {
            "discordance": worst,
            "mcnemar": smallest_n(
                lambda n, p10=p10, p01=p01: mcnemar_power(n, p10, p01, level), target, stop=SEARCH_LIMIT
            ),
            "tost": smallest_n(
                lambda n, half=half: tost_power(n, half, half, effect, level), target, stop=SEARCH_LIMIT
            ),
        }
    counts = [v for e in needed.values() for v in (e["mcnemar"], e["tost"])]
    if None in counts:
        raise ValueError(f"a test needs more than {SEARCH_LIMIT} seeds")
    seeds = max(counts)
    power = {
        outcome: {
            variant: {
                language: {
                    "mcnemar": mcnemar_power(seeds, *effect_shares(d, effect), level),
                    "tost": tost_power(seeds, max(d, effect) / 2.0, max(d, effect) / 2.0, effect, level),
                }
                for language, d in languages.items()
            }
            for variant, languages in by_variant.items()
        }
        for outcome, by_variant in discordance.items()
    }
    return {
        "level": level,
        "effect": effect,
        "discordance": discordance,
        "needed": needed,
        "seeds": seeds,
        "power": power,
    }


# -- the answer in one sentence ---------------------------------------------------------------------------


@fill_doc
def transformer_answer_sentence(analysis: Mapping[str, Any], design: Mapping[str, Any]) -> str:
    """The transformer's answer as one plain statement scoped to the registered model and configuration, every
    count and share in it computed from the registered analysis and design.

    Parameters
    ----------
    analysis : mapping
        The registered transformer analysis (``book/data/transformer_study/analysis.json``).
    %(design)s

    Returns
    -------
    str
        The sentence.
    """
    setting = design["setting"]
    verdicts = [
        (language, outcome, e["verdict"], ceiling_share(e, outcome))
        for outcome in OUTCOMES
        for variant in VARIANTS
        for language, e in _family(analysis, outcome, variant).items()
    ]
    shown = sorted({v for _, _, v, _ in verdicts if v in ("helps", "hurts")})
    equivalent = [(language, share) for language, _, v, share in verdicts if v == "equivalent"]
    undetermined = sum(v == "undetermined" for _, _, v, _ in verdicts)
    powers = [f["pooled"]["power"] for o in observed_power(analysis, design).values() for f in o.values()]
    model = (
        f"On the registered {setting['layers']}-layer, {setting['heads']}-head transformer of width "
        f"{setting['width']} (attention scaled by the log of the length, trained on words up to length "
        f"{setting['max_train_length']}), with {len(design['seeds'])} paired seeds per language"
    )
    if shown:
        direction = f"lag training {' or '.join(shown)} on some comparisons"
    else:
        direction = "no comparison showed lag training helping or hurting"
    text = (
        f"{model}, {direction} against joint training on failure and on recognition at "
        f"{4 * setting['max_train_length']} and {16 * setting['max_train_length']} letters: "
        f"{undetermined} of {len(verdicts)} comparisons are undetermined, with power {min(powers):.2g} to "
        f"{max(powers):.2g} against the differences the run observed"
    )
    if equivalent:
        names = sorted({language for language, _ in equivalent})
        floor = min(share for _, share in equivalent)
        text += (
            f", and the {len(equivalent)} found equivalent ({', '.join(names)}) are at a ceiling, where both "
            f"schedules reach the better outcome on at least {100 * floor:.3g}% of the seeds"
        )
    return text + "."
