"""Outcome (c)'s Monte Carlo error: how the registered step-size-window verdicts depend on the bootstrap's
generator seed, and what they are once the resamples are many enough that the counts no longer move
A sensitivity analysis, not a change of the registered rule: the registered answer stays
the one computed with ``numpy.random.default_rng(0)`` and 100,000 resamples
(:func:`lagtheory.experiments.confirmatory.analysis.window_outcome`).

The registered verdict of a cell and accounting reads two percentile bounds of the bootstrapped width ratio
(lag over joint) at the quantiles ``q = 0.05/216`` and ``1 - q`` (inverted CDF): "helps" when the lower bound
is above 1, "hurts" when the upper bound is below 1. With ``N`` resamples of which ``a`` have a ratio at most
1 and ``b`` a ratio at least 1 (a resample where neither schedule has a window counts as ratio 1, as
registered), the lower bound is the ``ceil(q N)``-th smallest ratio, so

* "helps" exactly when ``a < ceil(q N)``, and "hurts" exactly when ``b < ceil(q N)``
  (:func:`verdict_from_counts`; the same rule, read from two counts instead of a sorted sample).

:func:`tail_counts` draws the resamples exactly as the registered analysis does (each chunk of 10,000 is
``rng.integers(0, n, size=(10000, n))``), so at generator seed 0 and 100,000 resamples it reproduces every
registered verdict; it counts through the resampled seeds' multiplicities (a matrix product) instead of
indexing, which is what makes millions of resamples affordable. :func:`sensitivity` then

1. *screens* (:func:`screen`): every cell and accounting at 100,000 resamples for each of 20 generator seeds (the registered
   number of resamples: how much the registered counts would have moved with another seed);
2. pools the 2,000,000 screening resamples per cell into each tail probability's Clopper-Pearson interval at
   level ``1 - 1e-6``; a cell is a *tail cell* when an interval holds ``q``, and *settled* otherwise (its verdict
   with infinitely many resamples is the screening's, unless an event of probability below 1e-6 happened);
3. (:func:`deepen`) runs every tail cell again with 3,000,000 resamples for each of the 20 seeds, ten times as many while the
   seeds' verdicts still differ (at most 30,000,000), and reports the counts per seed (settled cells plus tail
   cells) and each tail cell with its pooled tail probabilities.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats
from numpy.typing import ArrayLike, NDArray

from ..parameters import fill_doc
from ..paths import CONFIRMATORY_RECORDS, WINDOW_SENSITIVITY
from .analysis import HALF_DECADE, WINDOW_RESAMPLES, _run_key, window_widths
from .design import GRID_WARM_FRACTION
from .records import load_stage, stage_path
from .registration import ALPHA, WINDOW_SHARE

CHUNK = 10_000
"""Resamples drawn per call of the generator, as the registered analysis draws them."""
GENERATOR_SEEDS = tuple(range(20))
"""The generator seeds of the sensitivity analysis; 0 is the registered one."""
DEEP_RESAMPLES = 3_000_000
"""Resamples per generator seed for the tail cells, at first."""
MAX_RESAMPLES = 30_000_000
"""The most resamples per generator seed for a tail cell whose seeds still disagree."""
SETTLED_LEVEL = 1e-6
"""A tail probability's Clopper-Pearson interval is taken at level 1 - SETTLED_LEVEL."""


@fill_doc
def window_failures(
    grid: Mapping[str, Any], cell: str, accounting: str
) -> tuple[list[float], NDArray[np.bool_], NDArray[np.bool_]]:
    """The grid rates of ``cell`` and joint's and lag's failure flags at each, (rates, seeds), under
    ``accounting`` (lag warming up for a quarter of the budget), as outcome (c) reads them.

    Parameters
    ----------
    %(grid)s
    %(cell)s
    accounting : str
        "total" or "joint": lag's runs under equal total or equal joint-phase steps.

    Returns
    -------
    tuple of (list of float, ndarray, ndarray)
        The rates in increasing order, joint's and lag's flags.

    Raises
    ------
    KeyError
        If the record lacks the cell or one of its runs.
    """
    runs = grid["cells"][cell]["runs"]
    rates = sorted({run["base_rate"] for run in runs.values()})
    joint = np.array([runs[_run_key("joint", r, None, accounting)]["values"]["failed"] for r in rates], dtype=bool)
    lag = np.array(
        [runs[_run_key("lag", r, GRID_WARM_FRACTION, accounting)]["values"]["failed"] for r in rates], dtype=bool
    )
    return rates, joint, lag


def tail_counts(joint_failed: ArrayLike, lag_failed: ArrayLike, resamples: int, seed: int) -> dict[str, int]:
    """Of ``resamples`` bootstrap resamples of the seeds drawn as the registered analysis draws them from
    ``numpy.random.default_rng(seed)``, how many have a width ratio (lag over joint; 1 where neither has a window)
    at most 1 and at least 1.

    Parameters
    ----------
    joint_failed, lag_failed : array_like of bool
        The failure flags, (rates, seeds), the same shape.
    resamples : int
        Resamples, >= 1.
    seed : int
        The generator's seed.

    Returns
    -------
    dict of str to int
        ``at_most_one``, ``at_least_one`` and ``resamples``.

    Raises
    ------
    ValueError
        If the flags are not 2-d of the same shape, or ``resamples`` < 1.
    """
    joint_ok = ~np.asarray(joint_failed, dtype=bool)
    lag_ok = ~np.asarray(lag_failed, dtype=bool)
    if joint_ok.ndim != 2 or joint_ok.shape != lag_ok.shape:
        raise ValueError("joint_failed and lag_failed must be (rates, seeds) arrays of the same shape")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples!r}")
    n = joint_ok.shape[1]
    successes = np.concatenate([joint_ok, lag_ok]).T.astype(np.float64)  # (seeds, 2 * rates)
    rates = joint_ok.shape[0]
    rng = np.random.default_rng(seed)
    at_most, at_least = 0, 0
    for start in range(0, resamples, CHUNK):
        size = min(CHUNK, resamples - start)
        index = rng.integers(0, n, size=(size, n))
        copies = np.bincount((index + n * np.arange(size)[:, None]).ravel(), minlength=size * n).reshape(size, n)
        shares = (copies @ successes) / n  # exact: integer counts over n, as the registered mean computes them
        inside = shares >= WINDOW_SHARE
        joint_width = HALF_DECADE * inside[:, :rates].sum(axis=1)
        lag_width = HALF_DECADE * inside[:, rates:].sum(axis=1)
        at_most += int(np.sum(lag_width <= joint_width))  # both empty: ratio 1; only lag has one: +inf
        at_least += int(np.sum((lag_width >= joint_width) | (joint_width == 0)))
    return {"at_most_one": at_most, "at_least_one": at_least, "resamples": resamples}


def verdict_from_counts(counts: Mapping[str, int], has_ratio: bool, cells: int = 108) -> str:
    """The registered verdict of (c) from :func:`tail_counts` (module docstring): "neither" without a ratio,
    "helps" when fewer than ``ceil(q N)`` resamples have a ratio at most 1, "hurts" when fewer than that have a
    ratio at least 1, else "undetermined"; ``q = 0.05 / (2 cells)``.

    Parameters
    ----------
    counts : mapping
        ``at_most_one``, ``at_least_one`` and ``resamples``.
    has_ratio : bool
        Whether either schedule has a window on the original seeds (else the verdict is "neither").
    cells : int, optional
        The family's cells (Bonferroni's level; default 108).

    Returns
    -------
    str
        "helps", "hurts", "neither" or "undetermined".
    """
    if not has_ratio:
        return "neither"
    rank = math.ceil(counts["resamples"] * (ALPHA / cells) / 2)
    if counts["at_most_one"] < rank:
        return "helps"
    if counts["at_least_one"] < rank:
        return "hurts"
    return "undetermined"


def clopper_pearson(successes: int, trials: int, level: float = SETTLED_LEVEL) -> tuple[float, float]:
    """The Clopper-Pearson interval of a binomial probability at confidence ``1 - level``.

    Parameters
    ----------
    successes : int
        Successes, 0 <= successes <= trials.
    trials : int
        Trials, >= 1.
    level : float, optional
        One minus the confidence (default :data:`SETTLED_LEVEL`).

    Returns
    -------
    tuple of (float, float)
        The interval.
    """
    low = 0.0 if successes == 0 else float(scipy.stats.beta.ppf(level / 2, successes, trials - successes + 1))
    high = 1.0 if successes == trials else float(scipy.stats.beta.ppf(1 - level / 2, successes + 1, trials - successes))
    return low, high


def _tally(verdicts: Sequence[str]) -> dict[str, int]:
    return {v: list(verdicts).count(v) for v in ("helps", "hurts", "undetermined", "neither")}


@fill_doc
def screen(
    grid: Mapping[str, Any], seeds: Sequence[int] = GENERATOR_SEEDS, resamples: int = WINDOW_RESAMPLES
) -> dict[str, Any]:
    """Steps 1 and 2 of the module docstring, per accounting: the verdict counts per generator seed with
    ``resamples`` resamples each, the tail cells (with their pooled screening probabilities) and the settled cells'
    verdicts.

    Parameters
    ----------
    %(grid)s
    seeds : sequence of int, optional
        Generator seeds (default :data:`GENERATOR_SEEDS`).
    resamples : int, optional
        Resamples per seed (default the registered 100,000).

    Returns
    -------
    dict
        ``q``, ``seeds``, ``screen_resamples`` and per accounting ``screen`` (seed -> verdict counts), ``settled``
        (cell -> verdict) and ``tail_cells`` (cell -> ``screen``, the pooled tail probabilities).
    """
    cells = list(grid["cells"])
    q = ALPHA / len(cells) / 2
    out: dict[str, Any] = {"q": q, "seeds": list(seeds), "screen_resamples": resamples}
    for accounting in ("total", "joint"):
        screened: dict[str, dict[int, dict[str, int]]] = {}
        has_ratio: dict[str, bool] = {}
        for cell in cells:
            _, joint, lag = window_failures(grid, cell, accounting)
            has_ratio[cell] = bool(window_widths((~joint).mean(axis=1)) + window_widths((~lag).mean(axis=1)) > 0)
            screened[cell] = {seed: tail_counts(joint, lag, resamples, seed) for seed in seeds}
            print(f"screened {accounting} {cell}", file=sys.stderr, flush=True)
        settled, tails = {}, {}
        for cell in cells:
            pooled = {key: sum(c[key] for c in screened[cell].values()) for key in ("at_most_one", "at_least_one")}
            trials = resamples * len(seeds)
            intervals = {key: clopper_pearson(value, trials) for key, value in pooled.items()}
            if has_ratio[cell] and any(low <= q <= high for low, high in intervals.values()):
                tails[cell] = {"screen": {key: value / trials for key, value in pooled.items()}}
            else:
                settled[cell] = verdict_from_counts({**pooled, "resamples": trials}, has_ratio[cell], len(cells))
        out[accounting] = {
            "screen": {
                str(seed): _tally([verdict_from_counts(screened[c][seed], has_ratio[c], len(cells)) for c in cells])
                for seed in seeds
            },
            "settled": settled,
            "tail_cells": tails,
        }
    return out


# Kept apart from transformer_report.replication_plan on purpose, alike in signature shape only (two mappings,
# two numbers with registered defaults): Monte Carlo resamples here, a power plan there; no logic in common.
@fill_doc
def deepen(
    grid: Mapping[str, Any],
    screened: Mapping[str, Any],
    resamples: int = DEEP_RESAMPLES,
    maximum: int = MAX_RESAMPLES,
) -> dict[str, Any]:
    """Step 3 of the module docstring on :func:`screen`'s result: every tail cell with ``resamples`` resamples for
    each generator seed, ten times as many while the seeds' verdicts still differ (at most ``maximum``), and the
    verdict counts per seed (settled cells and tail cells). A tail cell whose flags are those of one already run
    (the same cell under the other accounting, when lag's runs agree) takes that result.

    Parameters
    ----------
    %(grid)s
    screened : mapping
        :func:`screen`'s result.
    resamples : int, optional
        Resamples per seed at first (default :data:`DEEP_RESAMPLES`).
    maximum : int, optional
        The most resamples per seed (default :data:`MAX_RESAMPLES`).

    Returns
    -------
    dict
        ``screened`` with ``deep_resamples``, ``max_resamples`` and per accounting the tail cells' ``resamples``,
        ``probability``, ``interval`` and ``verdicts`` (seed -> verdict), and ``deep`` (seed -> verdict counts).
    """
    out = json.loads(json.dumps(screened))
    out.update({"deep_resamples": resamples, "max_resamples": maximum})
    seeds, cells = out["seeds"], len(grid["cells"])
    done: dict[bytes, dict[str, Any]] = {}
    for accounting in ("total", "joint"):
        deep_verdicts: dict[int, dict[str, str]] = {seed: {} for seed in seeds}
        for cell, entry in out[accounting]["tail_cells"].items():
            _, joint, lag = window_failures(grid, cell, accounting)
            key = joint.tobytes() + lag.tobytes()
            if key not in done:
                level = resamples
                while True:
                    found = {seed: tail_counts(joint, lag, level, seed) for seed in seeds}
                    verdicts = {str(seed): verdict_from_counts(c, True, cells) for seed, c in found.items()}
                    print(f"deep {accounting} {cell} {level}", file=sys.stderr, flush=True)
                    if len(set(verdicts.values())) == 1 or level * 10 > maximum:
                        break
                    level *= 10
                pooled = {k: sum(c[k] for c in found.values()) for k in ("at_most_one", "at_least_one")}
                trials = level * len(seeds)
                done[key] = {
                    "resamples": level,
                    "probability": {k: v / trials for k, v in pooled.items()},
                    "interval": {k: list(clopper_pearson(v, trials)) for k, v in pooled.items()},
                    "verdicts": verdicts,
                }
            entry.update(done[key])
            for seed in seeds:
                deep_verdicts[seed][cell] = entry["verdicts"][str(seed)]
        settled = list(out[accounting]["settled"].values())
        out[accounting]["deep"] = {str(seed): _tally([*settled, *deep_verdicts[seed].values()]) for seed in seeds}
    return out


@fill_doc
def sensitivity(grid: Mapping[str, Any]) -> dict[str, Any]:
    """The analysis of the module docstring: :func:`deepen` of :func:`screen` with their defaults.

    Parameters
    ----------
    %(grid)s

    Returns
    -------
    dict
        :func:`deepen`'s result.
    """
    return deepen(grid, screen(grid))


def main(folder: Path = CONFIRMATORY_RECORDS, output: Path = WINDOW_SENSITIVITY) -> Path:
    """Run :func:`sensitivity` on the committed grid record and write
    :data:`~lagtheory.experiments.paths.WINDOW_SENSITIVITY` (never into ``book/data/confirmatory``); returns the
    path.

    Parameters
    ----------
    folder : pathlib.Path, optional
        Where the committed confirmatory records are read (default ``book/data/confirmatory``).
    output : pathlib.Path, optional
        The file written (default :data:`~lagtheory.experiments.paths.WINDOW_SENSITIVITY`).

    Returns
    -------
    pathlib.Path
        ``output``.
    """
    grid = load_stage(stage_path("grid", folder))
    result = {"records_registration": grid["registration"], **sensitivity(grid)}
    output.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return output
