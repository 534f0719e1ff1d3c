"""H5 as it stands: the registered predictor's result split by optimiser and task family, with intervals and
with the AUROC each split's cells could tell from chance. Exploratory: the registration
asks for the pooled test only (``book/registration.md``, "The predictor"), and the splits were chosen after
the pooled result was known.

For each split of the validation cells (:data:`SPLITS`: every cell, each optimiser, each task family, each
family with each optimiser), from the registered rows (``book/data/confirmatory/predictor.json``: label,
balance, frozen baseline score, task-optimiser cluster):

* the AUROC of the balance and of the baseline (:func:`lagtheory.experiments.predictor.evaluation.auroc`);
* 95% percentile intervals of both and of their difference from 4000 bootstrap resamples (the registered number)
  that draw cells with replacement *within* each task-optimiser cluster
  (:func:`~lagtheory.experiments.predictor.evaluation.cluster_bootstrap` with ``within``;
  ``numpy.random.default_rng(0)``). The registered interval resamples whole clusters, which a split with one
  or two clusters (regression, in-context regression within an optimiser) cannot do; the within-cluster
  intervals show how much the AUROC depends on which cells were drawn, not on which tasks were chosen, and
  are narrower than the registered kind;
* :func:`chance_auroc`: the smallest AUROC the exact Mann-Whitney test tells from 0.5 at the 5% level
  (two-sided) with the split's numbers of positive and negative cells, taking the cells as independent, which
  they are not (cells of one task and optimiser share their data): what a split can resolve is at best this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..predictor.evaluation import RESAMPLES, auroc, cluster_bootstrap
from .design import confirmatory_tasks

FAMILIES = {"languages": "languages", "regression": "regression", "icl": "in-context regression"}
"""Task family of each exploratory study, by the study's name."""
SPLITS = (
    ("all", None, None),
    ("SGD", "sgd", None),
    ("Adam", "adam", None),
    ("languages", None, "languages"),
    ("regression", None, "regression"),
    ("in-context regression", None, "in-context regression"),
    ("languages, SGD", "sgd", "languages"),
    ("languages, Adam", "adam", "languages"),
    ("regression, SGD", "sgd", "regression"),
    ("regression, Adam", "adam", "regression"),
    ("in-context regression, SGD", "sgd", "in-context regression"),
    ("in-context regression, Adam", "adam", "in-context regression"),
)
"""(name, optimiser or None, family or None) of each split."""


def family_of(task: str) -> str:
    """The task family of a confirmatory task (:data:`FAMILIES`).

    Parameters
    ----------
    task : str
        A confirmatory task's name.

    Returns
    -------
    str
        "languages", "regression" or "in-context regression".

    Raises
    ------
    KeyError
        If ``task`` is not a confirmatory task.
    """
    return {design.name: FAMILIES[study] for study, design in confirmatory_tasks()}[task]


def null_counts(positives: int, negatives: int) -> list[int]:
    """The exact null distribution of the Mann-Whitney statistic U (pairs with the positive cell above the
    negative one) as counts: entry u is the number of the C(positives + negatives, positives) equally likely
    orderings of untied cells with U = u. They are the coefficients of the Gaussian binomial coefficient
    ``prod_{i=1..m} (1 - x^(n+i)) / (1 - x^i)`` (m positives, n negatives), computed in exact integers.

    Parameters
    ----------
    positives, negatives : int
        The numbers of positive and negative cells, >= 0.

    Returns
    -------
    list of int
        ``positives * negatives + 1`` counts, summing to C(positives + negatives, positives).

    Raises
    ------
    ValueError
        If a count is negative.
    """
    if positives < 0 or negatives < 0:
        raise ValueError(f"positives and negatives must be >= 0, got {positives}, {negatives}")
    size = positives * negatives + 1
    counts = np.zeros(size, dtype=object)
    counts[0] = 1
    for i in range(1, positives + 1):
        shift = negatives + i
        if shift < size:
            counts[shift:] = counts[shift:] - counts[:-shift]  # times (1 - x^(n+i))
        for residue in range(i):
            counts[residue::i] = np.cumsum(counts[residue::i])  # over (1 - x^i): exact, the quotient is a polynomial
    return [int(c) for c in counts]


def chance_auroc(positives: int, negatives: int, alpha: float = 0.05) -> float | None:
    """The smallest AUROC (U over positives x negatives) at or above 0.5 whose exact two-sided Mann-Whitney p-value
    (twice the smaller tail, at most 1) is below ``alpha``, cells independent and untied; None when none is
    (too few cells).

    Parameters
    ----------
    positives, negatives : int
        The numbers of positive and negative cells, >= 0.
    alpha : float, optional
        The level (default 0.05).

    Returns
    -------
    float or None
        The AUROC, or None.
    """
    if positives == 0 or negatives == 0:
        return None
    counts = null_counts(positives, negatives)
    total = sum(counts)
    total_pairs = positives * negatives
    tail = 0
    for u in range(
        total_pairs, (total_pairs - 1) // 2, -1
    ):  # P(U >= u) grows as u falls; by symmetry it is the smaller tail
        tail += counts[u]
        if Fraction(2 * tail, total) >= alpha:
            return (u + 1) / total_pairs if u < total_pairs else None
    return None


def breakdown(rows: Sequence[Mapping[str, Any]], resamples: int = RESAMPLES) -> list[dict[str, Any]]:
    """The splits of :data:`SPLITS` of the registered validation rows (module docstring).

    Parameters
    ----------
    rows : sequence of mapping
        The registered rows: ``task``, ``optimiser``, ``cluster``, ``lag_helps``, ``balance``,
        ``baseline_log_odds``.
    resamples : int, optional
        Bootstrap resamples (default the registered 4000).

    Returns
    -------
    list of dict
        Per split: ``split``, ``cells``, ``positives``, ``clusters``, ``chance_auroc``; with both labels also
        ``auroc`` (``predictor``, ``baseline``) and ``interval`` (the two and ``predictor - baseline``).
    """
    out = []
    for name, optimiser, family in SPLITS:
        kept = [
            row for row in rows if optimiser in (None, row["optimiser"]) and family in (None, family_of(row["task"]))
        ]
        labels = np.array([row["lag_helps"] for row in kept], dtype=bool)
        positives = int(labels.sum())
        entry: dict[str, Any] = {
            "split": name,
            "cells": len(kept),
            "positives": positives,
            "clusters": len({row["cluster"] for row in kept}),
            "chance_auroc": chance_auroc(positives, len(kept) - positives),
        }
        if 0 < positives < len(kept):
            scores = {
                "predictor": np.array([row["balance"] for row in kept], dtype=np.float64),
                "baseline": np.array([row["baseline_log_odds"] for row in kept], dtype=np.float64),
            }
            entry["auroc"] = {key: auroc(value, labels) for key, value in scores.items()}
            intervals = cluster_bootstrap(scores, labels, [row["cluster"] for row in kept], resamples, within=True)
            entry["interval"] = {key: list(value) for key, value in intervals.items()}
        out.append(entry)
    return out
