"""H5 of the registered confirmatory study: the frozen predictor on the validation cells
(``book/registration.md``, section "The predictor").

Inputs: the validation record of :mod:`lagtheory.experiments.confirmatory.stages` (216 cells, joint and lag at
T/4 under equal total steps, each at its calibrated rate, on the confirmatory seeds) and the predictions
committed before any of those cells ran (``book/data/predictor_predictions.json``: per cell the first-step
balance, its prediction and the frozen baseline's log-odds). Per cell the *label* is "lag helps": lag fails
less often than joint, exact McNemar p < 0.05 within the cell (:func:`lagtheory.experiments.predictor.evaluation.lag_helps`).
Then the AUROC of the balance and of the baseline for the label, their 95% percentile intervals and the
interval of their difference from 4000 resamples of the task-optimiser clusters
(:func:`lagtheory.experiments.predictor.evaluation.cluster_bootstrap`, ``default_rng(0)``), and the
threshold's true and false positive rates. The predictor is *validated* when its AUROC interval lies above
0.5 and *beats the baseline* when the interval of the difference lies above 0.
:mod:`lagtheory.experiments.confirmatory.records` writes the result next to the committed records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..predictor.balance import THRESHOLD
from ..predictor.evaluation import RESAMPLES, auroc, cluster_bootstrap, lag_helps
from ..statistics.paired import mcnemar_exact
from .design import GRID_WARM_FRACTION, Run
from .registration import check_record


def prediction_key(task: str, optimiser: str, readout_scale: float, ratio: float) -> tuple[str, str, float, float]:
    """The key that matches a validation cell with its committed prediction.

    Parameters
    ----------
    task : str
        The cell's task.
    optimiser : str
        Its optimiser.
    readout_scale : float
        Its readout initialisation scale.
    ratio : float
        Its attention/output step-size ratio.

    Returns
    -------
    tuple of (str, str, float, float)
        The four, the scale and the ratio as floats (so 2 and 2.0 match).
    """
    return task, optimiser, float(readout_scale), float(ratio)


def validation_rows(validation: Mapping[str, Any], predictions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per validation cell: its design, committed balance and baseline log-odds, the discordant
    failures (seeds where only joint fails, only lag fails), McNemar's exact p and the label.

    Parameters
    ----------
    validation : mapping
        The validation stage's record (``cells`` -> configuration, ``calibrated_rate``, ``runs``); it must carry
        the registration hash and not be a trial.
    predictions : sequence of mappings
        The committed predictions (the ``cells`` of ``book/data/predictor_predictions.json``).

    Returns
    -------
    list of dict
        The rows, in the record's cell order.

    Raises
    ------
    ValueError
        If the record is a trial or a cell has no committed prediction or runs of unequal seeds.
    """
    check_record(validation)
    if validation.get("trial") is not None:
        raise ValueError(f"validation is a trial record ({validation['trial']}), not the registered study")
    committed = {prediction_key(p["task"], p["optimiser"], p["readout_scale"], p["ratio"]): p for p in predictions}
    rows = []
    for name, entry in validation["cells"].items():
        configuration = entry["configuration"]
        key = prediction_key(
            configuration["task"], configuration["optimiser"], configuration["readout_scale"], configuration["ratio"]
        )
        if key not in committed:
            raise ValueError(f"validation cell {name!r} has no committed prediction")
        rate = entry["calibrated_rate"]
        joint = entry["runs"][Run("joint", rate, None, "both").key]["values"]["failed"]
        lag = entry["runs"][Run("lag", rate, GRID_WARM_FRACTION, "total").key]["values"]["failed"]
        if len(joint) != len(lag):
            raise ValueError(f"validation cell {name!r}: joint has {len(joint)} seeds, lag {len(lag)}")
        test = mcnemar_exact(np.asarray(joint, dtype=int), np.asarray(lag, dtype=int))
        prediction = committed[key]
        rows.append(
            {
                "cell": name,
                "cluster": f"{configuration['task']}/{configuration['optimiser']}",
                "task": configuration["task"],
                "optimiser": configuration["optimiser"],
                "readout_scale": configuration["readout_scale"],
                "ratio": configuration["ratio"],
                "balance": float(prediction["balance"]),
                "predicts_lag_helps": bool(prediction["predicts_lag_helps"]),
                "baseline_log_odds": float(prediction["baseline_log_odds"]),
                "joint_only_fails": test.a_only,
                "lag_only_fails": test.b_only,
                "p_value": test.p_value,
                "lag_helps": lag_helps(test.a_only, test.b_only, test.p_value),
            }
        )
    return rows


def predictor_outcome(rows: Sequence[Mapping[str, Any]], resamples: int = RESAMPLES) -> dict[str, Any]:
    """H5 from the rows of :func:`validation_rows`: AUROCs, intervals, the threshold's operating point and the
    two registered decisions.

    Parameters
    ----------
    rows : sequence of mappings
        The validation cells' rows.
    resamples : int
        Cluster bootstrap resamples (the registration: 4000).

    Returns
    -------
    dict
        ``cells``, ``positives``; when both labels occur, ``auroc`` and ``interval`` (95% percentile intervals of
        each score and of "predictor - baseline"), ``true_positive_rate``, ``false_positive_rate`` (of the
        committed prediction ``balance >= 0``), ``validated`` and ``beats_baseline``; otherwise
        ``estimable`` False (an AUROC needs both classes).
    """
    labels = np.array([row["lag_helps"] for row in rows], dtype=bool)
    predicted = np.array([row["predicts_lag_helps"] for row in rows], dtype=bool)
    out: dict[str, Any] = {"cells": len(rows), "positives": int(labels.sum()), "threshold": THRESHOLD}
    if labels.all() or not labels.any():
        return out | {"estimable": False}
    scores = {
        "predictor": np.array([row["balance"] for row in rows], dtype=np.float64),
        "baseline": np.array([row["baseline_log_odds"] for row in rows], dtype=np.float64),
    }
    intervals = cluster_bootstrap(scores, labels, [row["cluster"] for row in rows], resamples)
    return out | {
        "estimable": True,
        "auroc": {name: auroc(score, labels) for name, score in scores.items()},
        "interval": {key: list(value) for key, value in intervals.items()},
        "true_positive_rate": float(predicted[labels].mean()),
        "false_positive_rate": float(predicted[~labels].mean()),
        "validated": bool(intervals["predictor"][0] > 0.5),
        "beats_baseline": bool(intervals["predictor - baseline"][0] > 0),
        "resamples": resamples,
    }
