"""How well the registered predictor (:mod:`lagtheory.experiments.predictor.balance`) separates the cells where lag
helps, on the exploratory records, against a baseline that uses only the design.

* **Cells**: every main-grid and attention-initialisation cell of every task and
  optimiser of the exploratory records (:data:`PREDICTOR_SWEEPS`; 27 per task and optimiser,
  486 in all). The budget, accounting and base-rate cells are left out: at step 0
  they are copies of a main-grid cell (the base rate scales both step sizes alike
  and cancels from the balance), so neither the predictor nor the baseline can
  tell them apart.
* **Label** "lag helps" (:func:`lag_helps`): co-primary outcome (a) of the
  registration, lag fails less often than joint, exact McNemar two-sided
  p < 0.05 within the cell (unadjusted: a label per cell, not a family claim).
* **Predictor**: :func:`lagtheory.experiments.predictor.balance.first_step_balance` of the
  cell's stored configuration.
* **Baseline** (:func:`fit_baseline`): logistic regression of the label on
  log10(attention/output step-size ratio) and log10(readout scale), fitted on the
  same cells (in sample, so optimistic), and, to measure that optimism, fitted
  leaving out each task in turn (:func:`cross_validated_baseline`).
* **AUROC** (:func:`auroc`, the Mann-Whitney statistic, ties counted one half) and
  95% percentile intervals from a bootstrap over the 18 task-optimiser clusters
  (:func:`cluster_bootstrap`: cells of one task and optimiser share their data and
  are not independent), for the predictor, the baselines and their differences.

``python -m lagtheory.experiments.run predictor`` (or its alias ``python -m lagtheory.experiments.predictor.evaluation``,
which the registration page quotes) writes everything to
``book/data/predictor_exploratory.json`` (:data:`~lagtheory.experiments.paths.PREDICTOR_EXPLORATORY`), and the predictions for the
registered validation cells of the existing tasks, made before any of them is run
(:func:`validation_predictions`), to ``book/data/predictor_predictions.json``
(:data:`~lagtheory.experiments.paths.PREDICTOR_PREDICTIONS`); the registration page quotes both.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.optimize
import scipy.special
import scipy.stats
from numpy.typing import ArrayLike, NDArray

from lagtheory._validation import check_integer
from lagtheory.training import OPTIMISERS

from ..exploratory.design import ALPHA, training_config
from ..exploratory.outcomes import failure_cap, failure_test, lag_cells
from ..exploratory.records import STUDY_NAMES, cell_from_configuration, load_exploratory
from ..exploratory.regimes import tasks_of
from ..exploratory.studies import study
from ..parameters import fill_doc
from ..paths import PREDICTOR_EXPLORATORY, PREDICTOR_PREDICTIONS
from .balance import THRESHOLD, VALIDATION_RATIOS, VALIDATION_SCALES, first_step_balance

PREDICTOR_SWEEPS = ("main", "attention_init")
"""The sweeps of the exploratory records whose cells the evaluation reads."""
RESAMPLES = 4000


def lag_helps(joint_only: int, lag_only: int, p_value: float) -> bool:
    """The label of a cell: lag fails less often than joint, McNemar's exact p-value below 0.05.

    Parameters
    ----------
    joint_only : int
        Seeds where only joint fails.
    lag_only : int
        Seeds where only lag fails.
    p_value : float
        McNemar's exact two-sided p-value.

    Returns
    -------
    bool
        "lag helps".
    """
    return bool(p_value < ALPHA and joint_only > lag_only)


def auroc(scores: ArrayLike, labels: ArrayLike) -> float:
    """The area under the ROC curve of ``scores`` for the boolean ``labels``: the probability that a random
    positive scores above a random negative, ties counted one half (Mann-Whitney U / (n1 n0)); scores may be
    infinite. ValueError without both classes.

    Parameters
    ----------
    scores : array_like
        1-d scores, not NaN (infinite allowed).
    labels : array_like
        1-d booleans of the same length, both classes present.

    Returns
    -------
    float
        The AUROC, in [0, 1].

    Raises
    ------
    ValueError
        If the shapes differ, the labels are not boolean or hold one class, or a score is NaN.
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels)
    if scores.ndim != 1 or scores.shape != labels.shape or labels.dtype != bool:
        raise ValueError("scores and labels must be 1-d of the same length, labels boolean")
    if np.any(np.isnan(scores)):
        raise ValueError("scores must not be NaN")
    positives, negatives = int(labels.sum()), int((~labels).sum())
    if positives == 0 or negatives == 0:
        raise ValueError("labels must hold both classes")
    return float(_auroc_rows(scores, labels))


def _auroc_rows(scores: NDArray[np.float64], labels: NDArray[np.bool_]) -> NDArray[np.float64]:
    """The AUROC of :func:`auroc` along the last axis, unchecked (both classes in every row): Mann-Whitney U
    from the ranks, ties sharing their mean rank, over n1 n0. The ranks are halves, so with fewer than 10**7
    scores a row every sum is exact in whatever order it is taken."""
    ranks = scipy.stats.rankdata(scores, axis=-1)
    positives = labels.sum(axis=-1)
    negatives = labels.shape[-1] - positives
    u = np.where(labels, ranks, 0.0).sum(axis=-1) - positives * (positives + 1) / 2
    return u / (positives * negatives)


def design_features(log_ratio: ArrayLike, log_scale: ArrayLike) -> NDArray[np.float64]:
    """The baseline's design matrix: 1, log10 ratio, log10 readout scale.

    Parameters
    ----------
    log_ratio : array_like
        log10 of the attention/output step-size ratio of each cell.
    log_scale : array_like
        log10 of the readout scale of each cell.

    Returns
    -------
    ndarray
        float64 (cells, 3).
    """
    log_ratio = np.asarray(log_ratio, dtype=np.float64)
    return np.column_stack([np.ones_like(log_ratio), log_ratio, np.asarray(log_scale, dtype=np.float64)])


def fit_baseline(log_ratio: ArrayLike, log_scale: ArrayLike, labels: ArrayLike) -> NDArray[np.float64]:
    """Maximum-likelihood logistic regression of the labels on (1, log10 ratio, log10 scale): its three
    coefficients (BFGS on the negative log-likelihood, written with logaddexp).

    Parameters
    ----------
    log_ratio : array_like
        log10 of the attention/output step-size ratio of each cell.
    log_scale : array_like
        log10 of the readout scale of each cell.
    labels : array_like
        The cells' labels (bool or 0/1).

    Returns
    -------
    ndarray
        float64 (3,): intercept, ratio and scale coefficients.

    Raises
    ------
    RuntimeError
        If the fit does not converge.
    """
    x = design_features(log_ratio, log_scale)
    y = np.asarray(labels, dtype=np.float64)

    def negative_log_likelihood(beta: NDArray[np.float64]) -> float:
        z = x @ beta
        return float(np.sum(np.logaddexp(0.0, z) - y * z))

    def gradient(beta: NDArray[np.float64]) -> NDArray[np.float64]:
        return x.T @ (scipy.special.expit(x @ beta) - y)

    result = scipy.optimize.minimize(negative_log_likelihood, np.zeros(3), jac=gradient, method="BFGS")
    if not result.success:
        raise RuntimeError(f"the baseline's fit did not converge: {result.message}")
    return result.x


def baseline_score(coefficients: ArrayLike, log_ratio: ArrayLike, log_scale: ArrayLike) -> NDArray[np.float64]:
    """The baseline's linear score (log-odds of "lag helps") of cells.

    Parameters
    ----------
    coefficients : array_like
        The three coefficients of :func:`fit_baseline`.
    log_ratio : array_like
        log10 of the attention/output step-size ratio of each cell.
    log_scale : array_like
        log10 of the readout scale of each cell.

    Returns
    -------
    ndarray
        float64 (cells,).
    """
    return design_features(log_ratio, log_scale) @ np.asarray(coefficients, dtype=np.float64)


def cross_validated_baseline(
    log_ratio: NDArray[np.float64], log_scale: NDArray[np.float64], labels: NDArray[np.bool_], groups: Sequence[str]
) -> NDArray[np.float64]:
    """Each cell's baseline score from a fit that leaves out every cell of its group (its task).

    Parameters
    ----------
    log_ratio : ndarray
        log10 of the step-size ratio of each cell.
    log_scale : ndarray
        log10 of the readout scale of each cell.
    labels : ndarray
        bool, the cells' labels.
    groups : sequence of str
        The group (task) of each cell.

    Returns
    -------
    ndarray
        float64 (cells,).

    Raises
    ------
    RuntimeError
        If a fit does not converge.
    """
    groups = np.asarray(groups)
    scores = np.empty(labels.size)
    for group in np.unique(groups):
        held = groups == group
        beta = fit_baseline(log_ratio[~held], log_scale[~held], labels[~held])
        scores[held] = baseline_score(beta, log_ratio[held], log_scale[held])
    return scores


def cluster_bootstrap(
    scores: Mapping[str, NDArray[np.float64]],
    labels: NDArray[np.bool_],
    clusters: Sequence[str],
    resamples: int = RESAMPLES,
    seed: int = 0,
    *,
    within: bool = False,
) -> dict[str, tuple[float, float]]:
    """95% percentile intervals of the AUROC of every score in ``scores`` and of the difference of the first
    score's AUROC and each other's, over ``resamples`` resamples drawn from ``numpy.random.default_rng(seed)``.

    By default whole clusters are resampled with replacement, one resample at a time (one without both classes
    is redrawn): the registered evaluation's intervals. With ``within``, cells are drawn with replacement
    within each cluster, which a set of one or two clusters needs (the registered predictor's breakdown,
    :mod:`lagtheory.experiments.confirmatory.predictor_breakdown`): per round, ``resamples`` resamples are
    drawn (cluster by cluster, a block of indices each), those without both labels are dropped, and rounds
    follow until ``resamples`` are kept; their AUROCs are computed together, row by row (:func:`auroc`'s
    formula).

    Parameters
    ----------
    scores : mapping of str to ndarray
        Name -> score of each cell; the first is compared with the others.
    labels : ndarray
        bool, the cells' labels, both classes present.
    clusters : sequence of str
        The cluster of each cell.
    resamples : int, optional
        Bootstrap resamples, an integer >= 100 (default the registered 4000).
    seed : int, optional
        Seeds the draws (default 0).
    within : bool, optional
        Resample cells within each cluster rather than whole clusters (default False). Keyword only.

    Returns
    -------
    dict of str to tuple of float
        Score name, and ``"<first> - <other>"``, -> (low, high).

    Raises
    ------
    ValueError
        If ``resamples`` < 100.
    TypeError
        If ``resamples`` is not an integer.
    """
    check_integer(resamples, "resamples", 100)
    clusters = np.asarray(clusters)
    labels = np.asarray(labels, dtype=bool)
    names = list(scores)
    members = [np.flatnonzero(clusters == c) for c in np.unique(clusters)]
    rng = np.random.default_rng(seed)
    values: dict[str, NDArray[np.float64]] = {}
    if within:
        kept: list[NDArray[np.int64]] = []
        while sum(block.shape[0] for block in kept) < resamples:
            index = np.concatenate([m[rng.integers(0, m.size, size=(resamples, m.size))] for m in members], axis=1)
            positives = labels[index].sum(axis=1)
            kept.append(index[(positives > 0) & (positives < index.shape[1])])
        index = np.concatenate(kept)[:resamples]
        for name in names:
            values[name] = _auroc_rows(scores[name][index], labels[index])
    else:
        draws: dict[str, list[float]] = {name: [] for name in names}
        while len(draws[names[0]]) < resamples:
            index = np.concatenate([members[k] for k in rng.integers(len(members), size=len(members))])
            if labels[index].all() or not labels[index].any():
                continue
            for name in names:
                draws[name].append(auroc(scores[name][index], labels[index]))
        values = {name: np.array(drawn) for name, drawn in draws.items()}
    for name in names[1:]:
        values[f"{names[0]} - {name}"] = values[names[0]] - values[name]
    return {key: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) for key, v in values.items()}


@fill_doc
def exploratory_cells(records: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every evaluated cell (module docstring) with its design, predictor value and failure comparison.

    Parameters
    ----------
    %(records)s

    Returns
    -------
    list of dict
        One row per cell.
    """
    rows = []
    for name, record in records.items():
        the_study = study(name)
        for task in tasks_of(record):
            cap = failure_cap(record, task)
            built = None
            for optimiser in OPTIMISERS:
                for cell_name in lag_cells(record, task, optimiser):
                    configuration = record["cells"][cell_name]["configuration"]
                    if configuration["sweep"] not in PREDICTOR_SWEEPS:
                        continue
                    cell = cell_from_configuration(the_study, configuration)
                    if built is None:
                        built = the_study.build(cell.task, cell.setting)
                    joint_only, lag_only, p_value = failure_test(record, cell_name, cap=cap)
                    training = cell.training
                    rows.append(
                        {
                            "study": name,
                            "cell": cell_name,
                            "cluster": f"{task}/{optimiser}",
                            "task": task,
                            "optimiser": optimiser,
                            "attention_init": training.attention_init,
                            "log10_ratio": math.log10(training.attention_lr / training.output_lr),
                            "log10_scale": math.log10(training.output_scale),
                            "balance": first_step_balance(built, training),
                            "joint_only_fails": joint_only,
                            "lag_only_fails": lag_only,
                            "p_value": p_value,
                            "lag_helps": lag_helps(joint_only, lag_only, p_value),
                        }
                    )
    return rows


def evaluate(rows: Sequence[Mapping[str, Any]], resamples: int = RESAMPLES) -> dict[str, Any]:
    """The AUROCs, intervals, baseline coefficients and the threshold's operating point on ``rows``
    (:func:`exploratory_cells`).

    Parameters
    ----------
    rows : sequence of mapping
        The cells of :func:`exploratory_cells`.
    resamples : int, optional
        Bootstrap draws, an integer >= 100.

    Returns
    -------
    dict
        The summary.
    """
    labels = np.array([row["lag_helps"] for row in rows])
    balance = np.array([row["balance"] for row in rows], dtype=np.float64)
    log_ratio = np.array([row["log10_ratio"] for row in rows])
    log_scale = np.array([row["log10_scale"] for row in rows])
    coefficients = fit_baseline(log_ratio, log_scale, labels)
    scores = {
        "predictor": balance,
        "baseline": baseline_score(coefficients, log_ratio, log_scale),
        "baseline, leave one task out": cross_validated_baseline(
            log_ratio, log_scale, labels, [row["task"] for row in rows]
        ),
    }
    clusters = [row["cluster"] for row in rows]
    intervals = cluster_bootstrap(scores, labels, clusters, resamples)
    predicted = balance >= THRESHOLD
    by_optimiser = {}
    for optimiser in OPTIMISERS:
        keep = np.array([row["optimiser"] == optimiser for row in rows])
        by_optimiser[optimiser] = {name: auroc(score[keep], labels[keep]) for name, score in scores.items()}
    return {
        "cells": len(rows),
        "positives": int(labels.sum()),
        "auroc": {name: auroc(score, labels) for name, score in scores.items()},
        "interval": intervals,
        "auroc_by_optimiser": by_optimiser,
        "baseline_coefficients": coefficients.tolist(),
        "threshold": THRESHOLD,
        "true_positive_rate": float(np.mean(predicted[labels])),
        "false_positive_rate": float(np.mean(predicted[~labels])),
        "resamples": resamples,
    }


def youden(balance: ArrayLike, labels: ArrayLike, thresholds: ArrayLike) -> NDArray[np.float64]:
    """Youden's J (true positive rate - false positive rate) of "balance >= t" for each threshold t.

    Parameters
    ----------
    balance : array_like
        The predictor's value of each cell.
    labels : array_like
        The cells' labels (bool).
    thresholds : array_like
        The thresholds t.

    Returns
    -------
    ndarray
        float64, one J per threshold.
    """
    balance = np.asarray(balance, dtype=np.float64)
    labels = np.asarray(labels, dtype=bool)
    return np.array([np.mean(balance[labels] >= t) - np.mean(balance[~labels] >= t) for t in np.asarray(thresholds)])


def validation_predictions(coefficients: Sequence[float]) -> list[dict[str, Any]]:
    """The predictor's value and prediction, and the frozen baseline's score, for every validation cell of the
    existing tasks (:data:`~lagtheory.experiments.predictor.balance.VALIDATION_SCALES` x
    :data:`~lagtheory.experiments.predictor.balance.VALIDATION_RATIOS`, every task and optimiser of the three
    studies, attention N(0, 0.1^2)), computed before any of them is run. The base rate scales both step sizes
    alike and cancels from the balance (SGD and Adam alike), so it is set to 1 here; the runs use the calibrated
    rate.

    Parameters
    ----------
    coefficients : sequence of float
        The frozen baseline's three coefficients.

    Returns
    -------
    list of dict
        One row per validation cell (:func:`prediction_row`).
    """
    rows = []
    for name in STUDY_NAMES:
        the_study = study(name)
        for design in the_study.tasks:
            task = the_study.build(design.name, design.setting)
            for optimiser in OPTIMISERS:
                for scale in VALIDATION_SCALES:
                    for ratio in VALIDATION_RATIOS:
                        training = training_config(design, optimiser, 1.0, readout_scale=scale, ratio=ratio)
                        balance = first_step_balance(task, training)
                        rows.append(prediction_row(name, design.name, optimiser, scale, ratio, balance, coefficients))
    return rows


@fill_doc
def prediction_row(
    study_name: str,
    task: str,
    optimiser: str,
    scale: float,
    ratio: float,
    balance: float,
    coefficients: Sequence[float],
) -> dict[str, Any]:
    """One committed prediction: the cell, its first-step balance (a string where not finite), the
    prediction ``balance >= THRESHOLD`` ("lag helps"), and the frozen baseline's log-odds with
    ``coefficients`` (intercept, log10 ratio, log10 readout scale).

    Parameters
    ----------
    study_name : str
        The study.
    task : str
        The task.
    %(optimiser)s
    scale : float
        The readout scale, > 0.
    ratio : float
        The attention/output step-size ratio, > 0.
    balance : float
        The first-step balance (possibly infinite).
    coefficients : sequence of float
        The frozen baseline's three coefficients.

    Returns
    -------
    dict
        The row, JSON-ready.
    """
    score = baseline_score(coefficients, [math.log10(ratio)], [math.log10(scale)])[0]
    return {
        "study": study_name,
        "task": task,
        "optimiser": optimiser,
        "readout_scale": scale,
        "ratio": ratio,
        "balance": balance if math.isfinite(balance) else str(balance),
        "predicts_lag_helps": bool(balance >= THRESHOLD),
        "baseline_log_odds": float(score),
    }


def main() -> None:
    """Compute the exploratory evaluation and write :data:`~lagtheory.experiments.paths.PREDICTOR_EXPLORATORY`."""
    rows = exploratory_cells(load_exploratory())
    summary = evaluate(rows)
    grid = np.arange(-2.0, 2.0001, 0.25)
    summary["youden_grid"] = {
        f"{t:+.2f}": round(float(j), 4)
        for t, j in zip(grid, youden([r["balance"] for r in rows], [r["lag_helps"] for r in rows], grid), strict=True)
    }
    stored = [
        {**row, "balance": row["balance"] if math.isfinite(row["balance"]) else str(row["balance"])} for row in rows
    ]
    PREDICTOR_EXPLORATORY.write_text(json.dumps({"summary": summary, "cells": stored}, indent=1, sort_keys=True) + "\n")
    predictions = validation_predictions(summary["baseline_coefficients"])
    PREDICTOR_PREDICTIONS.write_text(
        json.dumps({"threshold": THRESHOLD, "cells": predictions}, indent=1, sort_keys=True) + "\n"
    )
    print(json.dumps(summary, indent=1))
    print(
        f"{sum(r['predicts_lag_helps'] for r in predictions)} of {len(predictions)} validation cells predicted 'lag helps'"
    )


if __name__ == "__main__":  # the command the registration page quotes: an alias of the one command
    from lagtheory.experiments.run import alias

    alias("lagtheory.experiments.predictor.evaluation")
