"""Best-vs-best tuning of the registered confirmatory study (``book/registration.md``, "Tuning, both ways"):
the configuration each schedule is chosen at from its tuning runs, and the runs the best stage adds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from lagtheory.schedules import ACCOUNTINGS

from .design import GRID_WARM_FRACTION, Run


def choose(runs: Mapping[str, Mapping[str, Any]], schedule: str, accounting: str) -> dict[str, Any]:
    """The best configuration of ``schedule`` under ``accounting`` among a cell's tuning ``runs`` (run key ->
    stored run): the lowest mean over the seeds of the capped log10 held-out loss; ties to the smaller rate,
    then the shorter warm-up. Returns the run's fields and its ``mean``.

    Parameters
    ----------
    runs : mapping of str to mapping
        Run key -> stored run (its fields and per-seed ``values``, as :func:`lagtheory.experiments.confirmatory.runs.run_unit` stores them).
    schedule : str
        "joint" or "lag".
    accounting : str
        "total" or "joint" (:data:`~lagtheory.schedules.ACCOUNTINGS`); a joint run
        (accounting "both") is a candidate under either.

    Returns
    -------
    dict
        ``schedule``, ``base_rate``, ``warm_fraction``, ``accounting`` of the chosen run and its ``mean``.

    Raises
    ------
    ValueError
        If ``schedule`` or ``accounting`` is not one of those, or ``runs`` holds no run of the schedule under
        the accounting.
    """
    if schedule not in ("joint", "lag") or accounting not in ACCOUNTINGS:
        raise ValueError(
            f"schedule must be 'joint' or 'lag' and accounting in {ACCOUNTINGS}, got {schedule!r}, {accounting!r}"
        )
    candidates = []
    for run in runs.values():
        if run["schedule"] != schedule or run["accounting"] not in ("both", accounting):
            continue
        mean = float(np.mean(np.asarray(run["values"]["capped_log10_test_loss"], dtype=np.float64)))
        candidates.append((mean, run["base_rate"], run["warm_fraction"] or 0.0, run))
    if not candidates:
        raise ValueError(f"runs hold no {schedule} run under accounting {accounting!r}")
    mean, _, _, best = min(candidates, key=lambda item: item[:3])
    return {key: best[key] for key in ("schedule", "base_rate", "warm_fraction", "accounting")} | {"mean": mean}


def best_runs(choices: Mapping[str, Mapping[str, Any]]) -> list[Run]:
    """The chosen runs of a cell (``choices``: "<schedule> <accounting>" -> :func:`choose`'s output) that the
    grid stage does not hold: lag at a warm-up other than 1/4 (joint's choice is a grid run, at every rate).

    Parameters
    ----------
    choices : mapping of str to mapping
        "<schedule> <accounting>" -> the chosen configuration (:func:`choose`'s output).

    Returns
    -------
    list of Run
        The distinct chosen lag runs at a warm-up other than 1/4, in the order of ``choices``.
    """
    runs = []
    for choice in choices.values():
        if choice["schedule"] == "lag" and choice["warm_fraction"] != GRID_WARM_FRACTION:
            run = Run("lag", choice["base_rate"], choice["warm_fraction"], choice["accounting"])
            if run not in runs:
                runs.append(run)
    return runs
