"""The step size, shown: failure and exact recognition against the base rate, for joint and lag, per task and
optimiser, from the confirmatory grid record, and the sentences that state the pattern.

The grid stage ran every confirmatory cell at every base rate of the registered grid, joint and lag (warm-up a
quarter of the budget), on the 100 confirmatory seeds. :func:`step_size_curves` pools the six registered
regimes of one task and optimiser (the centre, readout 1 and 3 at ratio 1 and 3, LP-FT: 600 paired runs per
schedule at every rate, each regime at every rate of the grid) and gives, per rate,

* joint's and lag's failure rate (and, for the languages, exact recognition rate), and
* the paired difference lag - joint with a 95% percentile interval from a bootstrap of the seeds
  (:func:`paired_interval`: a resampled seed keeps its six regimes, so the interval respects that one seed's
  runs in the six regimes share its initial draws and data);

and marks each regime's shared calibrated rate (the rate of the registered shared-rate comparisons) and each
schedule's best rate from the best record (tuned on the exploratory seeds by the registered rule; lag's best
may use a warm-up other than a quarter, which the grid's curves do not show). Exploratory description of
registered data: no test here is registered, and no verdict is drawn from it.

The pattern is counted, not described by hand: a point (a rate of one panel, or of one cell) counts when the
paired 95% interval excludes 0. :func:`pooled_pattern` counts the panels' points below all of a panel's
calibrated rates, within their range and above them; :func:`cell_pattern` counts every cell's points against
the cell's own calibrated rate (below, at, above); :func:`calibrated_differences` pools, per optimiser and
regime, the tasks' cells each at its own calibrated rate. :func:`pattern_sentences` writes the verdict's
step-size sentences from these counts alone (both halves, failure and recognition, pooled and per cell; the
failures below the calibrated rates again with the warm-up added on top, equal joint-phase steps; the regimes
where lag recognises less often at the calibrated rate itself).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..parameters import fill_doc
from .analysis import _run_key
from .design import GRID_WARM_FRACTION
from .registration import CONFIRMATORY_LEVELS

INTERVAL_RESAMPLES = 4000
"""Bootstrap resamples of the seeds for the paired intervals."""
OUTCOMES = {"failure": "failed", "recognition": "recognised"}
"""The outcomes drawn and the per-seed flag each reads."""
SIDES = ("lower", "higher", "neither")
"""Where a point's paired interval of lag - joint lies; below 0 (lag's rate lower), above 0, or across 0."""
OPTIMISER_NAMES = {"sgd": "SGD", "adam": "Adam"}
"""How the sentences name the optimisers."""


def paired_interval(
    joint: ArrayLike, lag: ArrayLike, resamples: int = INTERVAL_RESAMPLES, seed: int = 0
) -> tuple[float, float, float]:
    """The difference of the rates lag - joint over (regimes, seeds) flags, with its 95% percentile interval
    from ``resamples`` bootstrap resamples of the seeds (a resampled seed keeps all its regimes;
    ``numpy.random.default_rng(seed)``).

    Parameters
    ----------
    joint, lag : array_like of bool
        The flags, (regimes, seeds), the same shape, paired by position.
    resamples : int, optional
        Resamples, >= 1 (default :data:`INTERVAL_RESAMPLES`).
    seed : int, optional
        The generator's seed (default 0).

    Returns
    -------
    tuple of (float, float, float)
        The difference, the interval's lower and upper ends.

    Raises
    ------
    ValueError
        If the flags are not 2-d of the same shape or ``resamples`` < 1.
    """
    joint = np.asarray(joint, dtype=np.float64)
    lag = np.asarray(lag, dtype=np.float64)
    if joint.ndim != 2 or joint.shape != lag.shape:
        raise ValueError("joint and lag must be (regimes, seeds) arrays of the same shape")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples!r}")
    per_seed = (lag - joint).mean(axis=0)
    draws = per_seed[_resampled_positions(per_seed.size, resamples, seed)].mean(axis=1)
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(per_seed.mean()), float(low), float(high)


@lru_cache(maxsize=8)
def _resampled_positions(seeds: int, resamples: int, seed: int) -> NDArray[np.int64]:
    """The bootstrap's seed positions of :func:`paired_interval`, (resamples, seeds), drawn by
    ``numpy.random.default_rng(seed)``, read-only. Every interval over as many seeds with the same seed draws
    the same positions, so they are drawn once (cached: the grid's curves ask for thousands of intervals)."""
    positions = np.random.default_rng(seed).integers(0, seeds, size=(resamples, seeds))
    positions.setflags(write=False)
    return positions


@fill_doc
def step_size_curves(
    grid: Mapping[str, Any], best: Mapping[str, Any], task: str, optimiser: str, accounting: str = "total"
) -> dict[str, Any]:
    """The curves of one task and optimiser (module docstring), lag's runs under ``accounting``.

    Parameters
    ----------
    %(grid)s
    best : mapping
        The best stage's record (its ``choices``).
    task : str
        A confirmatory task.
    %(optimiser)s
    accounting : str, optional
        "total" (default) or "joint".

    Returns
    -------
    dict
        ``rates``, ``regimes`` (the cells pooled), per outcome of :data:`OUTCOMES` that the runs record
        (``recognition`` for the languages only) ``joint``, ``lag``, ``difference`` and ``interval`` per rate;
        ``calibrated`` (rate -> regimes whose shared rate it is), ``best_joint`` and ``best_lag`` (rate ->
        regimes whose best configuration uses it).

    Raises
    ------
    ValueError
        If no cell of the record has this task and optimiser.
    """
    cells = [name for name in grid["cells"] if name.split("/")[:2] == [task, optimiser]]
    if not cells:
        raise ValueError(f"no grid cell has task {task!r} and optimiser {optimiser!r}")
    rates = sorted({run["base_rate"] for run in grid["cells"][cells[0]]["runs"].values()})
    out: dict[str, Any] = {"rates": rates, "regimes": cells}
    for outcome, flag in OUTCOMES.items():
        first = grid["cells"][cells[0]]["runs"][_run_key("joint", rates[0], None, accounting)]["values"]
        if flag not in first:
            continue
        curve: dict[str, list] = {"joint": [], "lag": [], "difference": [], "interval": []}
        for rate in rates:
            joint = np.array(
                [grid["cells"][c]["runs"][_run_key("joint", rate, None, accounting)]["values"][flag] for c in cells]
            )
            lag = np.array(
                [
                    grid["cells"][c]["runs"][_run_key("lag", rate, GRID_WARM_FRACTION, accounting)]["values"][flag]
                    for c in cells
                ]
            )
            difference, low, high = paired_interval(joint, lag)
            curve["joint"].append(float(joint.mean()))
            curve["lag"].append(float(lag.mean()))
            curve["difference"].append(difference)
            curve["interval"].append([low, high])
        out[outcome] = curve
    out["calibrated"] = dict(Counter(grid["cells"][c]["shared_rate"] for c in cells))
    for schedule in ("joint", "lag"):
        out[f"best_{schedule}"] = dict(
            Counter(best["choices"][c][f"{schedule} {accounting}"]["base_rate"] for c in cells)
        )
    return out


def _side(low: float, high: float) -> str:
    return SIDES[0] if high < 0 else SIDES[1] if low > 0 else SIDES[2]


def _tally(positions: tuple[str, ...]) -> dict[str, dict[str, int]]:
    return {where: dict.fromkeys(SIDES, 0) for where in positions}


def pooled_pattern(
    curves: Mapping[tuple[str, str], Mapping[str, Any]], outcome: str, optimiser: str | None = None
) -> dict[str, dict[str, int]]:
    """How many points of the panels lie below all of a panel's calibrated rates, within their range and above
    them, by where the paired interval of lag - joint lies (:data:`SIDES`).

    Parameters
    ----------
    curves : mapping
        (task, optimiser) -> :func:`step_size_curves`; panels without ``outcome`` are skipped.
    outcome : str
        A key of :data:`~lagtheory.experiments.confirmatory.step_size.OUTCOMES`.
    optimiser : str, optional
        Only this optimiser's panels (default: all).

    Returns
    -------
    dict
        ``below``, ``within``, ``above`` -> side -> points.
    """
    found = _tally(("below", "within", "above"))
    for (_, panel_optimiser), curve in curves.items():
        if outcome not in curve or optimiser not in (None, panel_optimiser):
            continue
        calibrated = list(curve["calibrated"])
        for rate, (low, high) in zip(curve["rates"], curve[outcome]["interval"], strict=True):
            where = "below" if rate < min(calibrated) else "above" if rate > max(calibrated) else "within"
            found[where][_side(low, high)] += 1
    return found


def _flags(grid: Mapping[str, Any], cell: str, rate: float, outcome: str, accounting: str) -> tuple[list, list]:
    runs = grid["cells"][cell]["runs"]
    values = OUTCOMES[outcome]
    joint = runs[_run_key("joint", rate, None, accounting)]["values"][values]
    lag = runs[_run_key("lag", rate, GRID_WARM_FRACTION, accounting)]["values"][values]
    return joint, lag


def _cells(grid: Mapping[str, Any], outcome: str, optimiser: str) -> list[str]:
    """The grid's cells of one optimiser whose runs record the outcome's flag."""
    return [
        name
        for name, cell in grid["cells"].items()
        if name.split("/")[1] == optimiser and OUTCOMES[outcome] in next(iter(cell["runs"].values()))["values"]
    ]


@fill_doc
def cell_pattern(
    grid: Mapping[str, Any], outcome: str, optimiser: str, accounting: str = "total"
) -> dict[str, dict[str, int]]:
    """How many (cell, rate) points of one optimiser lie below the cell's own calibrated rate, at it and above
    it, by where the paired interval of lag - joint over the cell's seeds lies (:data:`SIDES`).

    Parameters
    ----------
    %(grid)s
    outcome : str
        A key of :data:`~lagtheory.experiments.confirmatory.step_size.OUTCOMES`.
    %(optimiser)s
    accounting : str, optional
        "total" (default) or "joint".

    Returns
    -------
    dict
        ``below``, ``at``, ``above`` -> side -> points.
    """
    found = _tally(("below", "at", "above"))
    for name in _cells(grid, outcome, optimiser):
        shared = grid["cells"][name]["shared_rate"]
        for rate in sorted({run["base_rate"] for run in grid["cells"][name]["runs"].values()}):
            joint, lag = _flags(grid, name, rate, outcome, accounting)
            _, low, high = paired_interval([joint], [lag])
            where = "at" if np.isclose(rate, shared, rtol=1e-9, atol=0.0) else "below" if rate < shared else "above"
            found[where][_side(low, high)] += 1
    return found


@fill_doc
def calibrated_differences(
    grid: Mapping[str, Any], outcome: str, accounting: str = "total"
) -> dict[tuple[str, str], dict[str, Any]]:
    """Per optimiser and registered regime: lag - joint pooled over the tasks' cells, each at its own calibrated
    rate, with the paired 95% interval (:func:`paired_interval`), and how many cells lean each way.

    Parameters
    ----------
    %(grid)s
    outcome : str
        A key of :data:`~lagtheory.experiments.confirmatory.step_size.OUTCOMES`.
    accounting : str, optional
        "total" (default) or "joint".

    Returns
    -------
    dict
        (optimiser, regime name of :data:`~lagtheory.experiments.confirmatory.registration.CONFIRMATORY_LEVELS`) -> ``difference``, ``interval``, ``cells``,
        ``lower`` (cells whose own difference is below 0).
    """
    found = {}
    for optimiser in OPTIMISER_NAMES:
        names = _cells(grid, outcome, optimiser)
        for regime, level in CONFIRMATORY_LEVELS.items():
            members = [name for name in names if name.split("/", 2)[2] == level]
            if not members:
                continue
            pairs = [_flags(grid, name, grid["cells"][name]["shared_rate"], outcome, accounting) for name in members]
            joint, lag = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
            difference, low, high = paired_interval(joint, lag)
            lower = int(np.sum(lag.mean(axis=1) < joint.mean(axis=1)))
            found[(optimiser, regime)] = {
                "difference": difference,
                "interval": [low, high],
                "cells": len(members),
                "lower": lower,
            }
    return found


def _points(value: float) -> str:
    """A difference of rates in percentage points, one decimal."""
    return f"{100 * value:.1f}"


def _regime_phrase(regime: str) -> str:
    return "at the centre" if regime == "centre" else "with LP-FT" if regime == "LP-FT" else f"at {regime}"


def pattern_sentences(
    curves: Mapping[tuple[str, str], Mapping[str, Any]],
    curves_joint: Mapping[tuple[str, str], Mapping[str, Any]],
    grid: Mapping[str, Any],
) -> dict[str, str]:
    """The step-size section's sentences, every count and direction computed from the curves and the grid.

    Parameters
    ----------
    curves, curves_joint : mapping
        (task, optimiser) -> :func:`step_size_curves` under equal total steps and under equal joint-phase
        steps.
    grid : mapping
        The grid stage's record.

    Returns
    -------
    dict of str to str
        ``failure`` (pooled and per cell, both optimisers), ``steps`` (the failures below the calibrated rates
        with the warm-up added on top), ``recognition`` (pooled and per cell), ``reversal`` (the regimes where
        lag recognises less often at the calibrated rate itself).
    """
    failure = pooled_pattern(curves, "failure")
    cells = {o: cell_pattern(grid, "failure", o) for o in OPTIMISER_NAMES}
    per_cell = "; ".join(
        f"with {name} less often at {cells[o]['below']['lower']} and more often at {cells[o]['below']['higher']}"
        for o, name in OPTIMISER_NAMES.items()
    )
    panels = sum("failure" in curve for curve in curves.values())
    out = {
        "failure": (
            f"Pooled over the six regimes of each of the {panels} task-optimiser panels, lag fails significantly "
            f"less often than joint at {failure['below']['lower']} of the {sum(failure['below'].values())} points "
            f"below all of a panel's calibrated rates and more often at {failure['below']['higher']}; within their "
            f"range less often at {failure['within']['lower']} of {sum(failure['within'].values())} and more often "
            f"at {failure['within']['higher']}; above them less often at {failure['above']['lower']} of "
            f"{sum(failure['above'].values())} and more often at {failure['above']['higher']}. Cell by cell, below "
            f"the cell's own calibrated rate, {per_cell} (of {sum(cells['sgd']['below'].values())} and "
            f"{sum(cells['adam']['below'].values())} points)."
        )
    }
    more = failure["below"]["higher"]
    added = pooled_pattern(curves_joint, "failure")["below"]
    out["steps"] = (
        f"With the warm-up added on top of joint's steps instead (equal joint-phase steps, also run in the grid), "
        f"lag fails more often below the calibrated rates at {added['higher']} points and less often at "
        f"{added['lower']}: "
        + (
            "the excess failures there go with the quarter of the steps that the warm-up takes from lag's joint phase."
            if added["higher"] < more
            else "the excess failures there do not go away when lag gets those steps back."
        )
    )
    recognition = pooled_pattern(curves, "recognition")
    split = {o: pooled_pattern(curves, "recognition", o)["below"] for o in OPTIMISER_NAMES}
    seen = {o: cell_pattern(grid, "recognition", o)["below"] for o in OPTIMISER_NAMES}
    below = recognition["below"]
    out["recognition"] = (
        f"Recognition gives the other half: below the calibrated rates lag recognises the language significantly "
        f"more often at {below['higher']} of the {sum(below.values())} pooled points and less often at "
        f"{below['lower']} ("
        + ", ".join(f"{name} {split[o]['higher']} and {split[o]['lower']}" for o, name in OPTIMISER_NAMES.items())
        + "); cell by cell, below the cell's own calibrated rate, "
        + "; ".join(
            f"with {name} more often at {seen[o]['higher']} and less often at {seen[o]['lower']}"
            for o, name in OPTIMISER_NAMES.items()
        )
        + f" (of {sum(seen['sgd'].values())} and {sum(seen['adam'].values())} points)."
    )
    at = calibrated_differences(grid, "recognition")
    reversed_ = {key: entry for key, entry in at.items() if entry["difference"] < 0}
    rest = [entry for key, entry in at.items() if key not in reversed_]
    if reversed_:
        by_optimiser: dict[str, list[str]] = {}
        for o, regime in reversed_:
            by_optimiser.setdefault(OPTIMISER_NAMES[o], []).append(_regime_phrase(regime))
        named = "; ".join(f"with {name} {' and '.join(phrases)}" for name, phrases in by_optimiser.items())
        excluded = sum(e["interval"][1] < 0 for e in reversed_.values())
        out["reversal"] = (
            f"At the calibrated rate itself (the rate of the registered comparison), the pooled panels hide a "
            f"reversal: {named} "
            f"lag recognises less often than joint over the languages ("
            + "; ".join(
                f"by {_points(-e['difference'])} points, 95% interval [{_points(e['interval'][0])}, "
                f"{_points(e['interval'][1])}], lower in {e['lower']} of {e['cells']} languages"
                for e in reversed_.values()
            )
            + ("; no interval excludes 0" if not excluded else f"; {excluded} of the intervals exclude 0")
            + "), while in the other "
            f"{len(rest)} regime-optimiser pairs it recognises more often in {sum(e['difference'] > 0 for e in rest)} "
            f"and as often in {sum(e['difference'] == 0 for e in rest)}."
        )
    else:
        out["reversal"] = (
            "At the calibrated rate itself lag recognises at least as often as joint in every regime and optimiser "
            "(pooled over the languages)."
        )
    return out
