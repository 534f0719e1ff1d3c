"""The registered outcomes of the confirmatory study from its stored records (``book/registration.md``,
sections "Tuning, both ways", "Outcomes and tests", "Families, alpha, multiplicity", "Verdicts").

Inputs: the grid record and the best record of :mod:`lagtheory.experiments.confirmatory.stages` (the best
record lists each cell's tuned choices). Per cell, the four *variants* (:data:`VARIANTS`) pair joint's and
lag's per-seed runs (:func:`paired_runs`): the shared calibrated rate (the cell's ``shared_rate``, lag at
T/4) or best-vs-best (each schedule's tuned choice), under equal total or equal joint-phase steps. Then

* **(a) failure** and **(a') recognition** (languages): :func:`binary_outcome`, the exact McNemar test
  (:func:`lagtheory.experiments.statistics.paired.mcnemar_exact`) and the exact one-sided binomial test that the
  discordance rate is below 0.1 (:func:`lagtheory.experiments.statistics.paired.tost_binary`);
* **(b)** log10 held-out loss on the seeds where neither run fails (:func:`conditional_outcome`): at least
  10 seeds, else "not estimable"; paired t-test, TOST within log10(1.1), the mean difference lag - joint
  with its 95% BCa interval (:func:`lagtheory.experiments.statistics.paired.bootstrap_interval`);
* **(c)** the step-size window per accounting from the grid runs (:func:`window_outcome`): rates where at
  least 90% of the seeds succeed, width half a decade per rate, ratio lag / joint with percentile intervals
  (95% and Bonferroni's, level 1 - 0.05/108) from 100,000 resamples of the seeds, ``default_rng(0)``;
* verdicts (:func:`family_verdicts`, :func:`window_verdict`) with Holm's adjustment within each family
  (:func:`lagtheory.experiments.statistics.paired.holm`), and the robust verdict over the four variants
  (:func:`robust_verdict`). :func:`analyse` does all of it, and states with each (a), (a'), (b) verdict the
  power the design had against the registered planning effect of its optimiser (:func:`design_power`,
  "Power and seeds per cell") and, for (b), the seeds its equivalence test would need.

The command::

    python -m lagtheory.experiments.run confirmatory-analysis --record GRID [BEST] [--output PATH]

(:func:`analyse_records`) writes the analysis of the grid and best records (without BEST: the shared-rate variants and (c)) as JSON (default ``runs/confirmatory/analysis.json``).

Readings of the registration where it leaves a detail open (the independent re-analysis proposed them as
deviation entries): the BCa interval uses the package's 9999 resamples from ``default_rng(0)``; a cell whose
(b) is not estimable is left out of its Holm family (the family is the estimable cells); in the window's
bootstrap a resample where neither schedule has a window counts as ratio 1; each cell's window bootstrap
starts its own ``default_rng(0)``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exploratory.design import MARGIN
from ..exploratory.records import load_exploratory
from ..parameters import fill_doc
from ..statistics.paired import bootstrap_interval, holm, mcnemar_exact, paired_t, tost, tost_binary
from .design import GRID_WARM_FRACTION, Run
from .planning import plan, planning_effects
from .registration import ALPHA, FAILURE_MARGIN, WINDOW_SHARE, check_record

VARIANTS = (("shared", "total"), ("shared", "joint"), ("best", "total"), ("best", "joint"))
"""(tuning, accounting) of the four variants of every comparison."""
POWER_OUTCOMES = {
    "failure": "failure (McNemar)",
    "recognition": "recognition (McNemar, languages)",
    "conditional": "conditional log loss, difference (paired t)",
}
"""The outcomes of :func:`analyse` and the rows of :func:`lagtheory.experiments.confirmatory.planning.plan` that give their power."""
MIN_BOTH_SUCCEED = 10
"""Outcome (b) is estimable in a cell only with at least this many seeds where neither run fails (the
registration)."""
WINDOW_RESAMPLES = 100_000
"""Bootstrap resamples of the seeds for outcome (c)'s intervals (the registration)."""
HALF_DECADE = 0.5
"""The width of one grid rate in decades (the grid's rates are half a decade apart)."""


def _run_key(schedule: str, rate: float, warm: float | None, accounting: str) -> str:
    if schedule == "joint":
        return Run("joint", rate, None, "both").key
    return Run("lag", rate, warm, accounting).key


@fill_doc
def paired_runs(
    grid: Mapping[str, Any], best: Mapping[str, Any] | None, cell: str, tuning: str, accounting: str
) -> tuple[Mapping[str, list], Mapping[str, list]]:
    """The per-seed values of joint's and lag's runs of ``cell`` in a variant: ``tuning`` "shared" (both at the
    cell's shared rate, lag warming up T/4) or "best" (each schedule's choice in ``best["choices"]``; lag's at
    a warm-up other than 1/4 from the best record, everything else from the grid), under ``accounting``.

    Parameters
    ----------
    %(grid)s
    best : mapping or None
        The best stage's record (its ``choices`` and ``cells``); needed only for ``tuning`` "best".
    cell : str
        The cell's name, a key of ``grid["cells"]``.
    tuning : str
        "shared" or "best".
    accounting : str
        "total" or "joint".

    Returns
    -------
    tuple of (mapping, mapping)
        Joint's and lag's per-seed values (quantity -> one entry per seed).

    Raises
    ------
    ValueError
        If ``tuning`` is neither "shared" nor "best", or is "best" and ``best`` is None.
    KeyError
        If a record lacks the cell, the choice or the run the variant needs.
    """
    entry = grid["cells"][cell]
    if tuning == "shared":
        rate = entry["shared_rate"]
        joint = entry["runs"][_run_key("joint", rate, None, accounting)]
        lag = entry["runs"][_run_key("lag", rate, GRID_WARM_FRACTION, accounting)]
        return joint["values"], lag["values"]
    if tuning != "best" or best is None:
        raise ValueError(f"tuning must be 'shared', or 'best' with a best record, got {tuning!r}")
    choices = best["choices"][cell]
    joint_choice, lag_choice = choices[f"joint {accounting}"], choices[f"lag {accounting}"]
    joint = entry["runs"][_run_key("joint", joint_choice["base_rate"], None, accounting)]
    key = _run_key("lag", lag_choice["base_rate"], lag_choice["warm_fraction"], accounting)
    source = entry if lag_choice["warm_fraction"] == GRID_WARM_FRACTION else best["cells"][cell]
    return joint["values"], source["runs"][key]["values"]


def binary_outcome(joint: ArrayLike, lag: ArrayLike, lag_better_when: bool) -> dict[str, Any]:
    """(a) or (a') of one cell and variant: ``joint``, ``lag`` the per-seed indicators (failure:
    ``lag_better_when`` False, lag is better on a seed where only joint has it; recognition: True). Returns
    the two rates, their difference lag - joint, the discordant pairs in each schedule's favour, McNemar's
    exact p and the equivalence p (discordance below :data:`~lagtheory.experiments.confirmatory.registration.FAILURE_MARGIN`).

    Parameters
    ----------
    joint, lag : array_like of bool
        The per-seed indicators of joint's and lag's runs: 1-d, one entry per seed, the same seeds.
    lag_better_when : bool
        True when a seed where only lag has the indicator favours lag (recognition); False when a seed where
        only joint has it favours lag (failure).

    Returns
    -------
    dict
        ``n``, ``joint_rate``, ``lag_rate``, ``difference``, ``lag_better``, ``joint_better``, ``p`` (McNemar's
        exact) and ``p_equivalence``.

    Raises
    ------
    ValueError
        If ``joint`` and ``lag`` are not 1-d of the same length.
    """
    joint = np.asarray(joint, dtype=bool)
    lag = np.asarray(lag, dtype=bool)
    test = mcnemar_exact(lag, joint) if lag_better_when else mcnemar_exact(joint, lag)
    return {
        "n": int(joint.size),
        "joint_rate": float(joint.mean()),
        "lag_rate": float(lag.mean()),
        "difference": float(lag.mean() - joint.mean()),
        "lag_better": test.a_only,
        "joint_better": test.b_only,
        "p": test.p_value,
        "p_equivalence": tost_binary(joint, lag, FAILURE_MARGIN),
    }


def _logs(values: Sequence[float | None]) -> NDArray[np.float64]:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def conditional_outcome(
    joint_log: Sequence[float | None],
    lag_log: Sequence[float | None],
    joint_failed: ArrayLike,
    lag_failed: ArrayLike,
) -> dict[str, Any]:
    """(b) of one cell and variant: on the seeds where neither run fails (at least
    :data:`MIN_BOTH_SUCCEED`, else ``{"estimable": False}``) the differences lag - joint of the log10 held-out
    loss; their mean, 95% BCa interval, paired t p and TOST p within log10(1.1), and the seeds that entered.

    Parameters
    ----------
    joint_log, lag_log : sequence of float or None
        The per-seed log10 held-out loss of joint's and lag's runs (None where not finite), one entry per seed.
    joint_failed, lag_failed : array_like of bool
        The per-seed failure indicators of the two runs, on the same seeds.

    Returns
    -------
    dict
        ``estimable`` and ``n`` (the seeds where neither fails); when estimable also ``mean``, ``interval``
        (95% BCa), ``p`` (paired t) and ``p_equivalence`` (TOST within log10(1.1), ``MARGIN`` of
        :mod:`lagtheory.experiments.exploratory.design`).
    """
    both = ~np.asarray(joint_failed, dtype=bool) & ~np.asarray(lag_failed, dtype=bool)
    n = int(both.sum())
    if n < MIN_BOTH_SUCCEED:
        return {"estimable": False, "n": n}
    d = _logs(lag_log)[both] - _logs(joint_log)[both]
    low, high = bootstrap_interval(d)
    return {
        "estimable": True,
        "n": n,
        "mean": float(d.mean()),
        "interval": [low, high],
        "p": paired_t(d),
        "p_equivalence": tost(d, MARGIN),
    }


def window_widths(success_shares: NDArray[np.float64]) -> NDArray[np.float64]:
    """Width of the window (half a decade per rate with a success share of at least 0.9), over the last axis.

    Parameters
    ----------
    success_shares : ndarray
        The share of seeds that succeed at each grid rate, in [0, 1]; rates on the last axis.

    Returns
    -------
    ndarray
        The widths in decades, the last axis removed.
    """
    return HALF_DECADE * (np.asarray(success_shares) >= WINDOW_SHARE).sum(axis=-1)


def width_ratio(lag_width: NDArray[np.float64], joint_width: NDArray[np.float64]) -> NDArray[np.float64]:
    """Lag's width over joint's: +inf where only lag has a window, NaN ("neither") where both are empty.

    Parameters
    ----------
    lag_width, joint_width : ndarray
        The window widths of lag and joint (decades, >= 0), of broadcastable shapes.

    Returns
    -------
    ndarray
        ``lag_width / joint_width`` where joint has a window, else +inf or NaN.
    """
    lag_width = np.asarray(lag_width, dtype=np.float64)
    joint_width = np.asarray(joint_width, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            joint_width > 0,
            lag_width / np.where(joint_width > 0, joint_width, 1.0),
            np.where(lag_width > 0, np.inf, np.nan),
        )


def window_outcome(
    joint_failed: ArrayLike,
    lag_failed: ArrayLike,
    rates: Sequence[float],
    *,
    cells: int,
    resamples: int = WINDOW_RESAMPLES,
) -> dict[str, Any]:
    """(c) of one cell and accounting: ``joint_failed`` and ``lag_failed`` (rates, seeds) the failure indicators
    at every grid rate. The rates of each window, the widths (decades), the ratio lag / joint ("neither": None)
    and its percentile intervals at 95% and at Bonferroni's level 1 - 0.05/``cells``, from ``resamples``
    resamples of the seeds (each keeps all its rates and both schedules; ``default_rng(0)``; a resample where
    neither has a window counts as ratio 1).

    Parameters
    ----------
    joint_failed, lag_failed : array_like of bool
        The failure indicators of joint's and lag's runs, (rates, seeds), the same shape.
    rates : sequence of float
        The grid's base rates, in the order of the first axis.
    cells : int
        The cells of the family, which set Bonferroni's level 0.05 / ``cells`` (no default: the one-layer
        study's 108 and the transformer study's compared languages are different families).
    resamples : int, optional
        Bootstrap resamples of the seeds, at least 1 (default :data:`WINDOW_RESAMPLES`).

    Returns
    -------
    dict
        ``joint_window``, ``lag_window`` (the rates), ``joint_width``, ``lag_width``, ``ratio`` (None where
        neither has a window), ``interval_95`` and ``interval_bonferroni``.

    Raises
    ------
    ValueError
        If ``joint_failed`` and ``lag_failed`` are not 2-d of the same shape with one row per rate.
    """
    joint_ok = ~np.asarray(joint_failed, dtype=bool)
    lag_ok = ~np.asarray(lag_failed, dtype=bool)
    if joint_ok.ndim != 2 or joint_ok.shape != lag_ok.shape or joint_ok.shape[0] != len(rates):
        raise ValueError("joint_failed and lag_failed must be (rates, seeds) arrays of the same shape")
    n = joint_ok.shape[1]
    joint_width = float(window_widths(joint_ok.mean(axis=1)))
    lag_width = float(window_widths(lag_ok.mean(axis=1)))
    ratio = float(width_ratio(lag_width, joint_width))
    rng = np.random.default_rng(0)
    ratios = []
    for start in range(0, resamples, 10_000):
        idx = rng.integers(0, n, size=(min(10_000, resamples - start), n))
        shares = [ok[:, idx].mean(axis=-1).T for ok in (joint_ok, lag_ok)]  # (resamples, rates)
        ratios.append(width_ratio(window_widths(shares[1]), window_widths(shares[0])))
    boot = np.concatenate(ratios)
    boot = np.where(np.isnan(boot), 1.0, boot)
    bonferroni = ALPHA / cells

    def interval(alpha: float) -> list[float]:
        return [float(np.quantile(boot, q, method="inverted_cdf")) for q in (alpha / 2, 1 - alpha / 2)]

    return {
        "joint_window": [r for r, s in zip(rates, joint_ok.mean(axis=1), strict=True) if s >= WINDOW_SHARE],
        "lag_window": [r for r, s in zip(rates, lag_ok.mean(axis=1), strict=True) if s >= WINDOW_SHARE],
        "joint_width": joint_width,
        "lag_width": lag_width,
        "ratio": None if math.isnan(ratio) else ratio,
        "interval_95": interval(ALPHA),
        "interval_bonferroni": interval(bonferroni),
    }


def window_verdict(outcome: Mapping[str, Any]) -> str:
    """(c): "helps" when the Bonferroni interval lies above 1, "hurts" below 1, "neither" when both windows are
    empty, else "undetermined".

    Parameters
    ----------
    outcome : mapping
        :func:`window_outcome`'s result.

    Returns
    -------
    str
        "helps", "hurts", "neither" or "undetermined".
    """
    if outcome["ratio"] is None:
        return "neither"
    low, high = outcome["interval_bonferroni"]
    return "helps" if low > 1 else "hurts" if high < 1 else "undetermined"


def family_verdicts(outcomes: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Holm-adjusted p-values and verdicts of one family (cell -> outcome of :func:`binary_outcome` or
    :func:`conditional_outcome`); the difference and the equivalence p-values are adjusted as two families.
    Binary outcomes: lag's direction from the discordant pairs; (b): lag is favoured by a negative mean
    difference (a lower loss). Not estimable cells stay out of the family.

    Parameters
    ----------
    outcomes : mapping of str to mapping
        Cell -> its outcome (:func:`binary_outcome` or :func:`conditional_outcome`), one family.

    Returns
    -------
    dict of str to dict
        Cell -> ``p_adjusted``, ``p_equivalence_adjusted`` and ``verdict`` ("helps", "hurts", "equivalent",
        "undetermined"), or only ``verdict`` "not estimable".
    """
    tested = [cell for cell, o in outcomes.items() if o.get("estimable", True)]
    out: dict[str, dict[str, Any]] = {cell: {"verdict": "not estimable"} for cell in outcomes if cell not in tested}
    if not tested:
        return out
    adjusted = holm([outcomes[c]["p"] for c in tested])
    adjusted_eq = holm([outcomes[c]["p_equivalence"] for c in tested])
    for cell, p, p_eq in zip(tested, adjusted, adjusted_eq, strict=True):
        o = outcomes[cell]
        if "lag_better" in o:
            lag_favoured = o["lag_better"] > o["joint_better"]
        else:
            lag_favoured = o["mean"] < 0
        if p < ALPHA:
            verdict = "helps" if lag_favoured else "hurts"
        elif p_eq < ALPHA:
            verdict = "equivalent"
        else:
            verdict = "undetermined"
        out[cell] = {"p_adjusted": float(p), "p_equivalence_adjusted": float(p_eq), "verdict": verdict}
    return out


def robust_verdict(verdicts: Sequence[str]) -> str:
    """Over the four variants: "helps robustly" or "hurts robustly" when all four agree on it, else
    "depends on tuning or accounting".

    Parameters
    ----------
    verdicts : sequence of str
        A cell's verdicts under the variants (all four of :data:`VARIANTS` for a robust verdict).

    Returns
    -------
    str
        "helps robustly", "hurts robustly" or "depends on tuning or accounting".
    """
    if len(verdicts) == len(VARIANTS) and all(v == "helps" for v in verdicts):
        return "helps robustly"
    if len(verdicts) == len(VARIANTS) and all(v == "hurts" for v in verdicts):
        return "hurts robustly"
    return "depends on tuning or accounting"


def design_power(records: Mapping[str, Mapping[str, Any]], seeds: int = 100) -> dict[str, dict[str, Any]]:
    """Per optimiser and outcome of :data:`POWER_OUTCOMES`, the power at ``seeds`` seeds against the planning
    effects of the exploratory ``records`` (the registration's table, :func:`lagtheory.experiments.confirmatory.planning.plan`
    at Bonferroni's level), and ``equivalence_seeds``: the seeds (b)'s equivalence test would need.

    Parameters
    ----------
    records : mapping of str to mapping
        Study name -> exploratory record (:func:`lagtheory.experiments.exploratory.records.load_exploratory`).
    seeds : int, optional
        Seeds per cell, >= 1 (default 100, the registered seeds).

    Returns
    -------
    dict of str to dict
        Optimiser ("sgd", "adam") -> outcome of :data:`POWER_OUTCOMES` -> power, and ``equivalence_seeds``
        (None where the target power is not reached by 20,000 seeds).
    """
    out: dict[str, dict[str, Any]] = {}
    for optimiser in ("sgd", "adam"):
        found = plan(planning_effects(records, optimiser), 108, 72, MARGIN, candidates=(seeds,))
        out[optimiser] = {name: found[row]["power"][seeds] for name, row in POWER_OUTCOMES.items()}
        out[optimiser]["equivalence_seeds"] = found["conditional log loss, equivalence (TOST)"]["seeds"]
    return out


@fill_doc
def analyse(
    grid: Mapping[str, Any],
    best: Mapping[str, Any] | None,
    resamples: int = WINDOW_RESAMPLES,
    power: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Every registered outcome, family and verdict from the grid and best records (module docstring):
    ``outcomes[outcome][variant][cell]`` with the verdicts merged in (and, given ``power`` from
    :func:`design_power`, the design's power for the cell's optimiser), ``window[accounting][cell]``, and
    ``robust[outcome][cell]``. Refuses records without the registration hash or from trials.

    With ``best`` None (the best stage has not run) only the two shared-rate variants and (c) are analysed
    (each family is the same 108, or 72, cells of its variant, so their verdicts do not change when the
    best-vs-best variants arrive) and ``robust`` is None: a robust verdict needs all four variants.

    Parameters
    ----------
    %(grid)s
    best : mapping or None
        The best stage's record, or None (the shared-rate variants and (c) only).
    resamples : int, optional
        Bootstrap resamples of outcome (c), at least 1 (default :data:`WINDOW_RESAMPLES`).
    power : mapping, optional
        :func:`design_power`'s result, merged into each (a), (a'), (b) entry; None (default): not stated.

    Returns
    -------
    dict
        ``registration``, ``outcomes``, ``window`` and ``robust``.

    Raises
    ------
    ValueError
        If a record does not carry the registration hash, or is a trial.
    """
    variants = VARIANTS if best is not None else tuple(v for v in VARIANTS if v[0] == "shared")
    for record in (grid, best) if best is not None else (grid,):
        check_record(record)
        if record.get("trial") is not None:
            raise ValueError(f"{record.get('stage')} record is a trial ({record['trial']}), not the registered study")
    cells = list(grid["cells"])
    languages = [c for c in cells if "recognised" in next(iter(grid["cells"][c]["runs"].values()))["values"]]
    results: dict[str, dict[str, dict[str, Any]]] = {"failure": {}, "recognition": {}, "conditional": {}}
    for tuning, accounting in variants:
        variant = f"{tuning} {accounting}"
        failure, recognition, conditional = {}, {}, {}
        for cell in cells:
            joint, lag = paired_runs(grid, best, cell, tuning, accounting)
            failure[cell] = binary_outcome(joint["failed"], lag["failed"], lag_better_when=False)
            if cell in languages:
                recognition[cell] = binary_outcome(joint["recognised"], lag["recognised"], lag_better_when=True)
            conditional[cell] = conditional_outcome(
                joint["log10_test_loss"], lag["log10_test_loss"], joint["failed"], lag["failed"]
            )
        for name, family in (("failure", failure), ("recognition", recognition), ("conditional", conditional)):
            verdicts = family_verdicts(family)
            results[name][variant] = {cell: {**family[cell], **verdicts[cell]} for cell in family}
            if power is not None:
                for cell, entry in results[name][variant].items():
                    optimiser = power[grid["cells"][cell]["configuration"]["optimiser"]]
                    entry["design_power"] = optimiser[name]
                    if name == "conditional":
                        entry["equivalence_seeds"] = optimiser["equivalence_seeds"]
    window: dict[str, dict[str, Any]] = {}
    for accounting in ("total", "joint"):
        window[accounting] = {}
        for cell in cells:
            runs = grid["cells"][cell]["runs"]
            rates = sorted({run["base_rate"] for run in runs.values()})
            joint = [runs[_run_key("joint", r, None, accounting)]["values"]["failed"] for r in rates]
            lag = [runs[_run_key("lag", r, GRID_WARM_FRACTION, accounting)]["values"]["failed"] for r in rates]
            outcome = window_outcome(joint, lag, rates, cells=len(cells), resamples=resamples)
            window[accounting][cell] = {**outcome, "verdict": window_verdict(outcome)}
    robust = (
        None
        if best is None
        else {
            name: {
                cell: robust_verdict([results[name][f"{t} {a}"][cell]["verdict"] for t, a in VARIANTS])
                for cell in results[name][f"{VARIANTS[0][0]} {VARIANTS[0][1]}"]
            }
            for name in results
        }
    )
    return {"registration": grid["registration"], "outcomes": results, "window": window, "robust": robust}


def analyse_records(grid: Path, best: Path | None, output: Path) -> Path:
    """:func:`analyse` of the grid stage's record at ``grid`` and the best stage's at ``best`` (None: the
    shared-rate variants and (c) only), with the design's power, written as JSON to ``output``.

    Parameters
    ----------
    grid : pathlib.Path
        The grid stage's record.
    best : pathlib.Path or None
        The best stage's record.
    output : pathlib.Path
        The confirmatory analysis written (JSON).

    Returns
    -------
    pathlib.Path
        ``output``.

    Raises
    ------
    ValueError
        As :func:`analyse` raises it.
    """
    result = analyse(
        json.loads(grid.read_text()),
        None if best is None else json.loads(best.read_text()),
        power=design_power(load_exploratory()),
    )
    output.write_text(json.dumps(result, sort_keys=True, separators=(",", ":")) + "\n")
    return output
