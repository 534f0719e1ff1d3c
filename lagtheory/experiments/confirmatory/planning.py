"""The confirmatory study's power calculation (``book/registration.md``, "Seeds and power"): planning effects
from the exploratory records in the regimes the registration targets, and the seeds per cell they call for.

Each family is Holm-adjusted over its cells; the seeds are planned at Bonferroni's level alpha / m, the level
Holm's first step uses, which is conservative for the others. Planning effects come from the exploratory
records (:func:`planning_effects`) in the regimes the registration targets (:data:`TARGET_LEVELS`); the power
of each test is that of :mod:`lagtheory.experiments.statistics.power`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..exploratory.outcomes import conditional_differences, failure_cap, failures
from ..exploratory.records import per_seed
from ..exploratory.regimes import tasks_of
from ..statistics.power import mcnemar_power, smallest_n, t_power, tost_power
from .registration import CONFIRMATORY_LEVELS

TARGET_LEVELS: Mapping[str, str] = {label: cell for label, cell in CONFIRMATORY_LEVELS.items() if label != "centre"}
"""The exploratory cells of the regimes the registration targets (readout 1-3, ratio >= 1, LP-FT), per task and
optimiser: the registered cells but the centre."""


def planning_effects(records: Mapping[str, Mapping[str, Any]], optimiser: str) -> dict[str, Any]:
    """The planning effects of the co-primary outcomes, pooled over the exploratory cells of
    :data:`TARGET_LEVELS` of every task with ``optimiser``: failure discordance ``p10`` (only joint fails) and
    ``p01`` (only lag fails); the same for exact recognition on languages (``r10``: only lag recognises,
    ``r01``: only joint); for the conditional log loss the share of pairs where both succeed, the median over
    cells of ``|mean difference|`` and of the standard deviation of the differences.

    Parameters
    ----------
    records : mapping of str to mapping
        Study name -> exploratory record (the ``"languages"`` record gives the recognition effects).
    optimiser : str
        The optimiser whose cells are pooled.

    Returns
    -------
    dict
        ``p10``, ``p01``, ``r10``, ``r01``, ``both_succeed``, ``median_abs_mean`` and ``median_sd``.
    """
    pairs = joint_only = lag_only = 0
    recognised_pairs = lag_recognises = joint_recognises = 0
    both = 0
    means, sds = [], []
    for name, record in records.items():
        for task in tasks_of(record):
            cap = failure_cap(record, task)
            for level in TARGET_LEVELS.values():
                cell = f"{task}/{optimiser}/{level}"
                joint, lag = failures(record, cell, "joint", cap), failures(record, cell, "lag", cap)
                pairs += joint.size
                joint_only += int(np.sum(joint & ~lag))
                lag_only += int(np.sum(~joint & lag))
                both += int(np.sum(~joint & ~lag))
                d = conditional_differences(record, cell, cap=cap)
                if d.size >= 3:
                    means.append(abs(float(d.mean())))
                    sds.append(float(np.std(d, ddof=1)))
                if name == "languages":
                    r_joint = per_seed(record, cell, "recognised", "joint").astype(bool)
                    r_lag = per_seed(record, cell, "recognised", "lag").astype(bool)
                    recognised_pairs += r_joint.size
                    lag_recognises += int(np.sum(r_lag & ~r_joint))
                    joint_recognises += int(np.sum(r_joint & ~r_lag))
    return {
        "p10": joint_only / pairs,
        "p01": lag_only / pairs,
        "r10": lag_recognises / recognised_pairs,
        "r01": joint_recognises / recognised_pairs,
        "both_succeed": both / pairs,
        "median_abs_mean": float(np.median(means)),
        "median_sd": float(np.median(sds)),
    }


def plan(
    effects: Mapping[str, Any],
    cells: int,
    language_cells: int,
    margin: float,
    alpha: float = 0.05,
    target: float = 0.8,
    candidates: Sequence[int] = (30, 60, 100, 200),
) -> dict[str, Any]:
    """For each co-primary outcome, the seeds per cell that reach power ``target`` at Bonferroni's level
    alpha / m (m: ``cells``, or ``language_cells`` for recognition) under the planning ``effects``
    (:func:`planning_effects`), and the power at each of ``candidates`` seeds. For the conditional log loss the
    n counts all seeds; the pairs that enter are the share where both succeed.

    Parameters
    ----------
    effects : mapping
        The planning effects of :func:`planning_effects`.
    cells : int
        The number m of cells of a family, >= 1.
    language_cells : int
        The number of cells of the recognition family, >= 1.
    margin : float
        The equivalence margin of the conditional log loss, > 0.
    alpha : float, optional
        The familywise level, in (0, 1).
    target : float, optional
        The power to reach.
    candidates : sequence of int, optional
        Seeds per cell at which the power is reported.

    Returns
    -------
    dict
        Outcome -> ``{"seeds": n or None, "power": {candidate: power}}``.
    """
    level = alpha / cells
    language_level = alpha / language_cells
    both = effects["both_succeed"]

    def conditional(n: int) -> int:
        return max(2, math.floor(both * n))

    powers = {
        "failure (McNemar)": lambda n: mcnemar_power(n, effects["p10"], effects["p01"], level),
        "recognition (McNemar, languages)": lambda n: mcnemar_power(n, effects["r10"], effects["r01"], language_level),
        "conditional log loss, difference (paired t)": lambda n: t_power(
            conditional(n), effects["median_abs_mean"], effects["median_sd"], level
        ),
        "conditional log loss, equivalence (TOST)": lambda n: tost_power(
            conditional(n), effects["median_sd"], margin, level
        ),
    }
    return {
        outcome: {
            "seeds": smallest_n(power, target),
            "power": {n: power(n) for n in candidates},
        }
        for outcome, power in powers.items()
    }
