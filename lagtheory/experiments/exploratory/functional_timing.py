"""EXPLORATORY: when each parameter group learns, measured by what the model computes.

A run's **snapshots** are its parameters at the steps t = 0..T (the last after the last step); a
**grouping** names which parameters form each group (data: :func:`engine_grouping` gives the engine's
groups, "attention" and "output"; other groupings are passed by name). Every model is **scored** on a
fixed set of labelled evaluation words by its margins m = y f (label times output), three ways
(:func:`scores`):

* the **raw** logistic loss, the mean of log(1 + exp(-m));
* the **calibrated** loss, min over c >= 0 of the mean of log(1 + exp(-c m)) (:func:`calibrated_loss`): the
  loss at the best output temperature c, which removes the readout's overall scale (its confidence) and keeps
  what the model decides;
* the **0-1 error**, the share of words with m <= 0 (a tie is an error).

Two readings of the time at which a group learns:

* **knockout** (:func:`knockout_scores`, :prf:ref:`def-functional-half-time`): the final model with one group
  reset to its value at step t, scored S_G(t). At t = T it is the final model; at t = 0 the final model with the group at its initial
  value. The group's **progress** is P_G(t) = (S_G(0) - S_G(t)) / (S_G(0) - S_G(T)), the share of what the
  group contributes to the final model that it had learnt by step t;
* **path attribution** (:func:`path_attribution`): each interval's change of score along the run,
  S(theta_(t+1)) - S(theta_t), split between the groups by the Shapley rule (each group's change averaged
  over the orders in which the groups can move: symmetric in the groups, and the shares sum exactly to the
  interval's change); a group's progress is its attributed decrease up to t over its total.

A group's **half-time** (:func:`half_time`) is the first snapshot at which its progress is at least 1/2,
:func:`lagtheory.experiments.exploratory.lag_timing.half_times` of the decrease; it is *undefined* (NaN)
where the group makes no net progress (S_G(0) <= S_G(T): resetting the group to its initial value does not
hurt the final model), and such seeds are counted and reported, never dropped silently.

For the book's one-layer model (:class:`~lagtheory.experiments.tasks.languages.task.LanguageRuns`)
:func:`one_layer_run` trains jointly, keeps every step's parameters (:class:`SnapshotTask`) and scores them
on :data:`EVALUATION_WORDS` words drawn as the training words are, from :data:`EVALUATION_SEED` (a seed no
training run uses).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from ..engine.cells import TrainingConfig, run_rows
from ..parameters import fill_doc
from ..tasks.languages.task import LanguageRuns
from .lag_timing import half_times

SCORES = ("raw", "calibrated", "error")
"""The three scores of a model, in this order (module docstring)."""
EVALUATION_SEED = 2033
"""The seed of the evaluation words (drawn as the training stream of this seed)."""
EVALUATION_WORDS = 512
"""Evaluation words of the one-layer model."""
BISECTIONS = 80
"""Bisection steps of :func:`calibrated_loss` (the bracket shrinks by 2^80, below float64 resolution)."""

Grouping = Mapping[str, Sequence[str]]
"""Group name -> the names of its parameters."""
Margins = Callable[[Mapping[str, torch.Tensor]], torch.Tensor]
"""Parameters with leading dimensions (...) -> the margins y f on the evaluation words, (..., words)."""


def engine_grouping(task: Any) -> dict[str, tuple[str, ...]]:
    """The engine's grouping of a task's parameters: group -> its parameter names, from
    ``task.parameter_shapes()`` (name -> (shape, group)).

    Parameters
    ----------
    task : Task
        An engine task.

    Returns
    -------
    dict of str to tuple of str
        Group -> names, in the order of ``parameter_shapes``.
    """
    grouping: dict[str, tuple[str, ...]] = {}
    for name, (_, group) in task.parameter_shapes().items():
        grouping[group] = (*grouping.get(group, ()), name)
    return grouping


def check_grouping(grouping: Grouping, names: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """``grouping`` as a dict of tuples, after checking that its groups partition ``names``.

    Parameters
    ----------
    grouping : mapping of str to sequence of str
        Group -> parameter names.
    names : sequence of str
        Every parameter's name.

    Returns
    -------
    dict of str to tuple of str
        The grouping.

    Raises
    ------
    ValueError
        If ``grouping`` has fewer than 2 groups, a name in no group, in two, or not a parameter.
    """
    grouping = {group: tuple(members) for group, members in grouping.items()}
    listed = [name for members in grouping.values() for name in members]
    if len(grouping) < 2 or sorted(listed) != sorted(names) or len(set(listed)) != len(listed):
        raise ValueError(f"grouping must split the parameters {sorted(names)} into >= 2 groups, got {grouping}")
    return grouping


def calibrated_loss(margins: NDArray[np.float64]) -> NDArray[np.float64]:
    """The minimum over c >= 0 of the mean over the last axis of log(1 + exp(-c m)) (module docstring), float64.

    L(c) is convex in c with L'(c) = -mean(m sigmoid(-c m)). Where no margin is negative the infimum is the
    limit c -> infinity, (share of margins equal to 0) log 2; where mean(m) <= 0, L'(0) >= 0 and the minimum
    is L(0) = log 2; otherwise the minimiser is the root of L', bracketed by doubling and found by
    :data:`BISECTIONS` bisection steps.

    Parameters
    ----------
    margins : ndarray
        float64 (..., words), finite.

    Returns
    -------
    ndarray
        float64 (...).

    Raises
    ------
    ValueError
        If ``margins`` has no words or a value that is not finite.
    """
    m = np.asarray(margins, dtype=np.float64)
    if m.ndim == 0 or m.shape[-1] == 0 or not np.isfinite(m).all():
        raise ValueError("margins must be a finite array (..., words) with at least one word")
    flat = m.reshape(-1, m.shape[-1])
    found = np.full(len(flat), np.log(2.0))
    separable = (flat >= 0).all(axis=-1)
    found[separable] = (flat[separable] == 0).mean(axis=-1) * np.log(2.0)
    inner = ~separable & (flat.mean(axis=-1) > 0)
    if inner.any():
        x = flat[inner]

        def slope(c: NDArray[np.float64]) -> NDArray[np.float64]:
            return -(x * np.exp(-np.logaddexp(0.0, c[:, None] * x))).mean(axis=-1)

        low = np.zeros(len(x))
        high = 1.0 / np.abs(x).max(axis=-1)
        while (short := slope(high) < 0).any():
            low[short], high[short] = high[short], 2 * high[short]
        for _ in range(BISECTIONS):
            middle = (low + high) / 2
            rising = slope(middle) >= 0
            high, low = np.where(rising, middle, high), np.where(rising, low, middle)
        c = (low + high) / 2
        found[inner] = np.logaddexp(0.0, -c[:, None] * x).mean(axis=-1)
    return found.reshape(m.shape[:-1])


def scores(margins: NDArray[np.float64] | torch.Tensor) -> dict[str, NDArray[np.float64]]:
    """The three scores of models with ``margins`` (..., words): ``raw``, ``calibrated``, ``error``
    (module docstring), each (...).

    Parameters
    ----------
    margins : ndarray or torch.Tensor
        float64 (..., words), finite.

    Returns
    -------
    dict of str to ndarray
        :data:`SCORES` -> float64 (...).
    """
    m = margins.detach().cpu().numpy() if isinstance(margins, torch.Tensor) else np.asarray(margins, np.float64)
    return {
        "raw": np.logaddexp(0.0, -m).mean(axis=-1),
        "calibrated": calibrated_loss(m),
        "error": (m <= 0).mean(axis=-1),
    }


def _mixed(
    snapshots: Mapping[str, torch.Tensor], grouping: Grouping, sources: Mapping[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """Parameters (seeds, times, ...) whose group g takes snapshot index ``sources[g]`` (times,) of each seed."""
    return {name: snapshots[name][:, sources[group]] for group, members in grouping.items() for name in members}


def knockout_scores(
    snapshots: Mapping[str, torch.Tensor], grouping: Grouping, margins_of: Margins
) -> dict[str, NDArray[np.float64]]:
    """S_G(t): the final model with group G reset to its value at snapshot t, scored three ways (module
    docstring).

    Parameters
    ----------
    snapshots : mapping of str to torch.Tensor
        Parameter name -> float64 (seeds, T + 1, ...), its value at every snapshot.
    grouping : mapping of str to sequence of str
        Group -> its parameter names (a partition, :func:`check_grouping`).
    margins_of : callable
        Parameters (seeds, times, ...) -> margins (seeds, times, words).

    Returns
    -------
    dict of str to ndarray
        :data:`SCORES` -> float64 (groups, seeds, T + 1), groups in the order of ``grouping``.
    """
    grouping = check_grouping(grouping, list(snapshots))
    times = next(iter(snapshots.values())).shape[1]
    steps, last = torch.arange(times), torch.full((times,), times - 1)
    found = [
        scores(margins_of(_mixed(snapshots, grouping, {g: steps if g == group else last for g in grouping})))
        for group in grouping
    ]
    return {score: np.stack([one[score] for one in found]) for score in SCORES}


def path_attribution(
    snapshots: Mapping[str, torch.Tensor], grouping: Grouping, margins_of: Margins
) -> dict[str, NDArray[np.float64]]:
    """Each interval's change of score along the run, S(theta_(t+1)) - S(theta_t), split between the groups
    by the Shapley rule: group g gets the mean over the orders of the groups of S(its predecessors and g at
    t + 1) - S(its predecessors at t + 1), the others at t (module docstring).

    Parameters
    ----------
    snapshots, grouping, margins_of
        As :func:`knockout_scores`.

    Returns
    -------
    dict of str to ndarray
        :data:`SCORES` -> float64 (groups, seeds, T), the share of each interval; summed over the groups,
        the interval's change.
    """
    grouping = check_grouping(grouping, list(snapshots))
    groups, times = list(grouping), next(iter(snapshots.values())).shape[1]
    now, later = torch.arange(times - 1), torch.arange(1, times)
    value = {}  # subset of groups moved to t + 1 -> scores (seeds, T)
    for size in range(len(groups) + 1):
        for moved in itertools.combinations(groups, size):
            sources = {g: later if g in moved else now for g in groups}
            value[frozenset(moved)] = scores(margins_of(_mixed(snapshots, grouping, sources)))
    k = len(groups)
    shares = {score: np.zeros((k, *value[frozenset()][score].shape)) for score in SCORES}
    for index, group in enumerate(groups):
        others = [g for g in groups if g != group]
        for size in range(k):
            weight = math.factorial(size) * math.factorial(k - size - 1) / math.factorial(k)
            for before in itertools.combinations(others, size):
                with_group, without = value[frozenset((*before, group))], value[frozenset(before)]
                for score in SCORES:
                    shares[score][index] += weight * (with_group[score] - without[score])
    return shares


def knockout_progress(knocked: NDArray[np.float64]) -> NDArray[np.float64]:
    """P_G(t) = (S_G(0) - S_G(t)) / (S_G(0) - S_G(T)) along the last axis; NaN where S_G(0) <= S_G(T).

    Parameters
    ----------
    knocked : ndarray
        float64 (..., T + 1), knockout scores.

    Returns
    -------
    ndarray
        float64, the shape of ``knocked``.
    """
    decrease = knocked[..., :1] - knocked
    total = decrease[..., -1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, decrease / np.where(total > 0, total, 1.0), np.nan)


def attributed_progress(shares: NDArray[np.float64]) -> NDArray[np.float64]:
    """The cumulative attributed decrease (0 at t = 0) over its total, (..., T + 1); NaN where the total
    decrease is not positive.

    Parameters
    ----------
    shares : ndarray
        float64 (..., T), each interval's share (:func:`path_attribution`).

    Returns
    -------
    ndarray
        float64 (..., T + 1).
    """
    decrease = np.concatenate([np.zeros((*shares.shape[:-1], 1)), -np.cumsum(shares, axis=-1)], axis=-1)
    total = decrease[..., -1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, decrease / np.where(total > 0, total, 1.0), np.nan)


def half_time(progress: NDArray[np.float64]) -> NDArray[np.float64]:
    """The first snapshot at which ``progress`` (..., T + 1) is at least 1/2; NaN where it is undefined.

    Parameters
    ----------
    progress : ndarray
        float64 (..., T + 1), 0 at the first snapshot and 1 at the last where defined.

    Returns
    -------
    ndarray
        float64 (...).
    """
    return half_times(progress)


class SnapshotTask:
    """An engine task whose ``observe`` records every parameter before each step (everything else is the
    task's own).

    Parameters
    ----------
    task : Task
        The engine task.
    """

    def __init__(self, task: Any) -> None:
        self.task, self.name = task, task.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.task, name)

    def observe(self, params: Mapping[str, torch.Tensor]) -> Mapping[str, torch.Tensor]:
        """A copy of every parameter (rows, seeds, ...).

        Parameters
        ----------
        params : mapping of str to torch.Tensor
            The parameters.

        Returns
        -------
        dict of str to torch.Tensor
            Name -> copy.
        """
        return {f"snapshot {name}": value.detach().clone() for name, value in params.items()}


@fill_doc
def snapshots_of(task: Any, config: TrainingConfig, seeds: Sequence[int]) -> dict[str, torch.Tensor]:
    """Joint training of ``task`` on ``seeds`` (one engine call) and every parameter at every snapshot.

    Parameters
    ----------
    task : Task
        The engine task trained.
    config : TrainingConfig
        The training (both groups from the first step).
    %(seeds)s

    Returns
    -------
    dict of str to torch.Tensor
        Name -> float64 (seeds, T + 1, ...).
    """
    result = run_rows(SnapshotTask(task), [("joint", config)], seeds, evaluate=False)
    found = {}
    for name, last in result.final.items():
        path = np.moveaxis(result.traces[f"snapshot {name}"][0], -1, 1)  # (seeds, T, ...)
        found[name] = torch.from_numpy(np.concatenate([path, np.asarray(last[0])[:, None]], axis=1))
    return found


def one_layer_margins(task: LanguageRuns) -> Margins:
    """The margins y f of the one-layer model on :data:`EVALUATION_WORDS` words drawn as the training words
    are, from :data:`EVALUATION_SEED`.

    Parameters
    ----------
    task : LanguageRuns
        The language task (its evaluation words are drawn from its own sampler).

    Returns
    -------
    callable
        Parameters (..., d) -> margins (..., words).
    """
    counts, prefix, labels = task.training_stream([EVALUATION_SEED], 1, EVALUATION_WORDS).batch(0)
    counts, prefix, labels = counts[0], prefix[0], labels[0]

    def margins_of(params: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return labels * task.outputs(params, counts, prefix)

    return margins_of


def timing(
    snapshots: Mapping[str, torch.Tensor], grouping: Grouping, margins_of: Margins
) -> dict[str, dict[str, NDArray[np.float64]]]:
    """Both readings of every group under every score: progress curves and half-times.

    Parameters
    ----------
    snapshots, grouping, margins_of
        The run and how it is split and scored, as :func:`knockout_scores`.

    Returns
    -------
    dict
        ``knockout`` and ``attribution``, each :data:`SCORES` -> ``progress`` (groups, seeds, T + 1),
        ``half`` (groups, seeds) and the scores behind them: ``scores`` (knockout, (groups, seeds, T + 1)) or
        ``shares`` (attribution, (groups, seeds, T)); ``final`` (seeds,) the final model's score.
    """
    knocked = knockout_scores(snapshots, grouping, margins_of)
    shared = path_attribution(snapshots, grouping, margins_of)
    found: dict[str, dict[str, Any]] = {"knockout": {}, "attribution": {}}
    for score in SCORES:
        progress = knockout_progress(knocked[score])
        found["knockout"][score] = {
            "scores": knocked[score],
            "progress": progress,
            "half": half_time(progress),
            "final": knocked[score][0, :, -1],
        }
        progress = attributed_progress(shared[score])
        found["attribution"][score] = {"shares": shared[score], "progress": progress, "half": half_time(progress)}
    return found


@fill_doc
def one_layer_run(task: LanguageRuns, config: TrainingConfig, seeds: Sequence[int]) -> dict[str, Any]:
    """Joint training of the one-layer model on ``seeds`` and :func:`timing` under the engine's grouping.

    Parameters
    ----------
    task : LanguageRuns
        The language task trained and timed.
    config : TrainingConfig
        The training.
    %(seeds)s

    Returns
    -------
    dict
        ``grouping`` and the entries of :func:`timing`.
    """
    grouping = engine_grouping(task)
    return {"grouping": grouping, **timing(snapshots_of(task, config, seeds), grouping, one_layer_margins(task))}
