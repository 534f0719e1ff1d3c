"""The exploratory re-analysis behind the registration (``book/registration.md``, issue 20).

The per-seed records of the first study (``book/data/summary_<study>.json``,
:mod:`lagtheory.experiments.exploratory.records`, seeds 0..29) are the *exploratory* set the
registration was written from. This module re-analyses them along the decomposed
outcomes the registration adopts, and :func:`reanalysis` recomputes every number of
issue 20's re-analysis that the registration relies on; ``python -m
lagtheory.experiments.exploratory.reanalysis`` prints them next to the issue's.

Definitions (the registration uses the same):

* a run *fails* (:func:`failures`) when its held-out loss is not finite or at or
  above the held-out loss of the prediction 0, the cap of the capped metric
  (:func:`lagtheory.experiments.exploratory.design.capped_log_loss`); the cap of a task is read
  off the record (:func:`failure_cap`): the primary value of every run that
  :func:`lagtheory.experiments.exploratory.records.failed_runs` flags, which must be one number;
* the *failure comparison* of a cell (:func:`failure_test`) is McNemar's exact test
  on the paired failure indicators of joint and lag;
* the *conditional difference* of a cell (:func:`conditional_differences`) is lag's
  log10 held-out loss minus joint's on the seeds where both succeed;
* families are those of the verdict page (:mod:`lagtheory.experiments.exploratory.regimes`):
  the regime map of a task, optimiser and schedule (every cell of the task and
  optimiser that runs lag), Holm-adjusted; or, where stated, the 25 main-grid cells.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats
from numpy.typing import NDArray

from ..statistics.paired import holm, mcnemar_exact
from .design import OPTIMISERS, PRIMARY, centre_name
from .records import cells_where, failed_runs, load_record, per_seed
from .regimes import effect, regime_map, tasks_of, verdict_counts

STUDY_NAMES = ("languages", "regression", "icl")
ALPHA = 0.05
"""The level of the exploratory tests, applied to Holm-adjusted p-values."""


def load_exploratory(folder: str | Path = Path("book/data")) -> dict[str, dict[str, Any]]:
    """The three exploratory records.

    Parameters
    ----------
    folder : str or pathlib.Path, optional
        Where the ``summary_<study>.json`` files are.

    Returns
    -------
    dict of str to dict
        Study name -> record.

    Raises
    ------
    ValueError
        If a file is not a study record.
    """
    return {study: load_record(Path(folder) / f"summary_{study}.json") for study in STUDY_NAMES}


def failure_cap(record: Mapping[str, Any], task: str) -> float:
    """The cap of the primary metric of ``task`` (log10 of the held-out loss of the prediction 0): the common
    primary value of the runs that :func:`lagtheory.experiments.exploratory.records.failed_runs` flags; ValueError if they
    disagree or none failed.

    Parameters
    ----------
    record : mapping
        An exploratory study record.
    task : str
        A task of the record.

    Returns
    -------
    float
        The cap.

    Raises
    ------
    ValueError
        If the failed runs' primary values disagree, or no run failed.
    """
    caps: set[float] = set()
    for cell in cells_where(record, task=task):
        for schedule in record["cells"][cell]["configuration"]["schedules"]:
            flagged = failed_runs(record, cell, schedule)
            caps.update(per_seed(record, cell, PRIMARY, schedule).astype(np.float64)[flagged].tolist())
    if len(caps) != 1:
        raise ValueError(f"task {task!r} must have one cap shared by its failed runs, found {sorted(caps)}")
    return caps.pop()


def failures(record: Mapping[str, Any], cell: str, schedule: str, cap: float | None = None) -> NDArray[np.bool_]:
    """Per seed, whether the run failed: held-out loss not finite, or log10 of it at or above the cap
    (``cap``: :func:`failure_cap` of the cell's task, computed if not given).

    Parameters
    ----------
    record : mapping
        An exploratory study record.
    cell : str
        A cell of the record.
    schedule : str
        A schedule of the cell.
    cap : float, optional
        The task's cap (:func:`failure_cap`), computed if not given.

    Returns
    -------
    ndarray
        bool (seeds,).
    """
    if cap is None:
        cap = failure_cap(record, record["cells"][cell]["configuration"]["task"])
    loss = per_seed(record, cell, "test_loss", schedule).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return ~np.isfinite(loss) | (np.log10(loss) >= cap)


def failure_test(
    record: Mapping[str, Any], cell: str, schedule: str = "lag", cap: float | None = None
) -> tuple[int, int, float]:
    """McNemar's exact test of joint's against ``schedule``'s failures in a cell: (seeds where only joint
    fails, seeds where only the schedule fails, two-sided p-value).

    Parameters
    ----------
    record : mapping
        An exploratory study record.
    cell : str
        A cell of the record.
    schedule : str, optional
        The schedule compared with joint.
    cap : float, optional
        The task's cap (:func:`failure_cap`), computed if not given.

    Returns
    -------
    tuple of (int, int, float)
        The two discordant counts and the p-value.
    """
    joint = failures(record, cell, "joint", cap)
    other = failures(record, cell, schedule, cap)
    test = mcnemar_exact(joint.astype(int), other.astype(int))
    return test.a_only, test.b_only, test.p_value


def conditional_differences(
    record: Mapping[str, Any], cell: str, schedule: str = "lag", cap: float | None = None
) -> NDArray[np.float64]:
    """``schedule``'s log10 held-out loss minus joint's on the seeds where neither run failed.

    Parameters
    ----------
    record : mapping
        An exploratory study record.
    cell : str
        A cell of the record.
    schedule : str, optional
        The schedule compared with joint.
    cap : float, optional
        The task's cap (:func:`failure_cap`), computed if not given.

    Returns
    -------
    ndarray
        float64, one entry per seed where both succeed.
    """
    both = ~failures(record, cell, "joint", cap) & ~failures(record, cell, schedule, cap)
    values = per_seed(record, cell, PRIMARY, schedule).astype(np.float64)
    joint = per_seed(record, cell, PRIMARY, "joint").astype(np.float64)
    return (values - joint)[both]


def lag_cells(record: Mapping[str, Any], task: str, optimiser: str) -> list[str]:
    """The cells of a task and optimiser that run lag (the regime-map family), in the record's order.

    Parameters
    ----------
    record : mapping
        An exploratory study record.
    task : str
        A task of the record.
    optimiser : str
        "sgd" or "adam".

    Returns
    -------
    list of str
        The cell names.
    """
    return [
        name
        for name in cells_where(record, task=task, optimiser=optimiser)
        if "lag" in record["cells"][name]["configuration"]["schedules"]
    ]


def is_main(record: Mapping[str, Any], cell: str) -> bool:
    """Whether the cell is on the main grid.

    Parameters
    ----------
    record : mapping
        An exploratory study record.
    cell : str
        A cell of the record.

    Returns
    -------
    bool
        True for the main sweep.
    """
    return record["cells"][cell]["configuration"]["sweep"] == "main"


def _t_test(d: NDArray[np.float64]) -> float:
    if np.all(d == d[0]):
        return 1.0 if d[0] == 0 else 0.0
    return float(scipy.stats.ttest_1samp(d, 0.0).pvalue)


def _wilcoxon(d: NDArray[np.float64]) -> float:
    return float(scipy.stats.wilcoxon(d).pvalue) if np.any(d != 0) else 1.0


def _sign_test(d: NDArray[np.float64]) -> float:
    nonzero = d[d != 0]
    if nonzero.size == 0:
        return 1.0
    return float(scipy.stats.binomtest(int(np.sum(nonzero > 0)), nonzero.size, 0.5).pvalue)


def _direction(d: NDArray[np.float64], test: str) -> float:
    if test == "t":
        return float(np.sign(d.mean()))
    if test == "wilcoxon":
        return float(np.sign(np.median(d)))
    nonzero = d[d != 0]
    return float(np.sign(np.sum(nonzero > 0) - np.sum(nonzero < 0)))


TESTS: Mapping[str, Callable[[NDArray[np.float64]], float]] = {"t": _t_test, "wilcoxon": _wilcoxon, "sign": _sign_test}


def log_loss_counts(records: Mapping[str, Mapping[str, Any]], test: str) -> tuple[int, int]:
    """(helps, hurts) of lag against joint over every main-grid cell, on the capped log10 held-out loss with
    ``test`` ("t", "wilcoxon", "sign") on the paired differences (joint - lag, positive favours lag),
    Holm-adjusted over each regime-map family.

    Parameters
    ----------
    records : mapping of str to mapping
        Study name -> exploratory record (:func:`load_exploratory`).
    test : {"t", "wilcoxon", "sign"}
        The paired test.

    Returns
    -------
    tuple of int
        (helps, hurts).
    """
    helps = hurts = 0
    for record in records.values():
        for task in tasks_of(record):
            for optimiser in OPTIMISERS:
                cells = lag_cells(record, task, optimiser)
                differences = [
                    (per_seed(record, c, PRIMARY, "joint") - per_seed(record, c, PRIMARY, "lag")).astype(np.float64)
                    for c in cells
                ]
                adjusted = holm([TESTS[test](d) for d in differences])
                for cell, d, p in zip(cells, differences, adjusted, strict=True):
                    if is_main(record, cell) and p < ALPHA:
                        direction = _direction(d, test)
                        helps += direction > 0
                        hurts += direction < 0
    return helps, hurts


def language_metric_counts(record: Mapping[str, Any], quantity: str) -> tuple[int, int]:
    """(helps, hurts) of lag over the 300 language main-grid cells by the verdict page's rule (paired t, or
    exact McNemar for ``recognised``, Holm over each regime-map family) applied to ``quantity``.

    Parameters
    ----------
    record : mapping
        The languages record.
    quantity : str
        A stored per-seed quantity (the primary metric, ``recognised``, ``accuracy_above_training``).

    Returns
    -------
    tuple of int
        (helps, hurts).
    """
    from ..statistics.paired import compare, compare_family

    binary = quantity == "recognised"
    higher_is_better = quantity != PRIMARY
    helps = hurts = 0
    for task in tasks_of(record):
        for optimiser in OPTIMISERS:
            cells = lag_cells(record, task, optimiser)
            family = compare_family(
                [
                    compare(
                        cell,
                        per_seed(record, cell, quantity, "lag").astype(np.float64),
                        per_seed(record, cell, quantity, "joint").astype(np.float64),
                        higher_is_better,
                        0.1 if binary else math.log10(1.1),
                        binary=binary,
                    )
                    for cell in cells
                ]
            )
            for comparison in family:
                if is_main(record, comparison.name):
                    helps += comparison.verdict == "helps"
                    hurts += comparison.verdict == "hurts"
    return helps, hurts


def failure_verdicts(record: Mapping[str, Any], task: str, optimiser: str, cap: float | None = None) -> dict[str, str]:
    """Main-grid cell of ``task`` and ``optimiser`` -> "fewer", "more" or "no difference": whether lag has
    significantly fewer or more failures than joint (McNemar exact, Holm over the task and optimiser's
    main-grid cells, level :data:`ALPHA`).

    Parameters
    ----------
    record : mapping
        An exploratory study record.
    task : str
        A task of the record.
    optimiser : str
        "sgd" or "adam".
    cap : float, optional
        The task's cap (:func:`failure_cap`), computed if not given.

    Returns
    -------
    dict of str to str
        Cell -> verdict.
    """
    if cap is None:
        cap = failure_cap(record, task)
    cells = [c for c in lag_cells(record, task, optimiser) if is_main(record, c)]
    tests = [failure_test(record, c, cap=cap) for c in cells]
    verdicts = {}
    for cell, (joint_only, lag_only, _), p in zip(cells, tests, holm([t[2] for t in tests]), strict=True):
        verdicts[cell] = "no difference" if p >= ALPHA else ("fewer" if joint_only > lag_only else "more")
    return verdicts


def failure_summary(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Over the main-grid cells of every record: failures of joint and of lag, paired runs, and the cells where
    lag has significantly fewer / more failures (:func:`failure_verdicts`); and the failure rates of joint and
    lag with Adam on the language main grid.

    Parameters
    ----------
    records : mapping of str to mapping
        Study name -> exploratory record (:func:`load_exploratory`).

    Returns
    -------
    dict
        ``joint``, ``lag``, ``runs``, ``fewer``, ``more`` and the two Adam failure rates.
    """
    found = {"joint": 0, "lag": 0, "runs": 0, "fewer": 0, "more": 0}
    adam = {"joint": 0, "lag": 0, "runs": 0}
    for study, record in records.items():
        for task in tasks_of(record):
            cap = failure_cap(record, task)
            for optimiser in OPTIMISERS:
                for cell, verdict in failure_verdicts(record, task, optimiser, cap).items():
                    joint, lag = failures(record, cell, "joint", cap), failures(record, cell, "lag", cap)
                    found["joint"] += int(joint.sum())
                    found["lag"] += int(lag.sum())
                    found["runs"] += joint.size
                    if verdict != "no difference":
                        found[verdict] += 1
                    if study == "languages" and optimiser == "adam":
                        adam["joint"] += int(joint.sum())
                        adam["lag"] += int(lag.sum())
                        adam["runs"] += joint.size
    found["adam_language_joint_rate"] = adam["joint"] / adam["runs"]
    found["adam_language_lag_rate"] = adam["lag"] / adam["runs"]
    return found


def conditional_summary(records: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """Over the main-grid cells with at least two seeds where both succeed: the share of cells where lag's
    conditional log loss is higher than joint's, by the mean, by the median, by the majority of seeds.

    Parameters
    ----------
    records : mapping of str to mapping
        Study name -> exploratory record (:func:`load_exploratory`).

    Returns
    -------
    dict of str to float
        ``cells``, ``mean``, ``median``, ``majority``.
    """
    mean_higher = median_higher = majority_higher = cells = 0
    for record in records.values():
        for task in tasks_of(record):
            cap = failure_cap(record, task)
            for optimiser in OPTIMISERS:
                for cell in lag_cells(record, task, optimiser):
                    d = conditional_differences(record, cell, cap=cap)
                    if not is_main(record, cell) or d.size < 2:
                        continue
                    cells += 1
                    mean_higher += d.mean() > 0
                    median_higher += np.median(d) > 0
                    majority_higher += np.mean(d > 0) > 0.5
    return {
        "cells": cells,
        "mean": mean_higher / cells,
        "median": median_higher / cells,
        "majority": majority_higher / cells,
    }


def paired_sd(records: Mapping[str, Mapping[str, Any]], study: str, conditional: bool = False) -> float:
    """The median over the study's main-grid cells of the standard deviation (ddof 1) of the paired per-seed
    differences lag - joint of the log10 held-out loss (``conditional``: on the seeds where both succeed,
    cells with at least 3 such seeds).

    Parameters
    ----------
    records : mapping of str to mapping
        Study name -> exploratory record (:func:`load_exploratory`).
    study : str
        The study's name.
    conditional : bool, optional
        Only the seeds where both succeed.

    Returns
    -------
    float
        The median standard deviation.
    """
    record = records[study]
    sds = []
    for task in tasks_of(record):
        cap = failure_cap(record, task)
        for cell in cells_where(record, task=task, sweep="main"):
            if conditional:
                d = conditional_differences(record, cell, cap=cap)
            else:
                d = (per_seed(record, cell, PRIMARY, "lag") - per_seed(record, cell, PRIMARY, "joint")).astype(float)
            if d.size >= 3:
                sds.append(float(np.std(d, ddof=1)))
    return float(np.median(sds))


def rate_sweep_summary(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """At the centre of every task and optimiser, with the base-rate sweep's ratio-1 cells (calibrated rate
    times 1/sqrt(10) and sqrt(10)): in how many of the 18 centre cells the shared calibrated rate is the best of
    the three (lowest mean log10 held-out loss) for both schedules, exactly one, none; and lag at its best rate
    against joint at its best (paired t, Holm over the 12 language centre cells): helps, hurts.

    Parameters
    ----------
    records : mapping of str to mapping
        Study name -> exploratory record (:func:`load_exploratory`).

    Returns
    -------
    dict
        ``both``, ``one``, ``none`` and ``own_rate`` (verdict counts).
    """
    from ..statistics.paired import compare, compare_family

    optimum = {2: 0, 1: 0, 0: 0}
    language = []
    for study, record in records.items():
        for task in tasks_of(record):
            for optimiser in OPTIMISERS:
                names = [
                    f"{task}/{optimiser}/base_rate/ratio=1 base*0.316",
                    centre_name(task, optimiser),
                    f"{task}/{optimiser}/base_rate/ratio=1 base*3.16",
                ]
                best = {
                    schedule: int(np.argmin([per_seed(record, n, PRIMARY, schedule).mean() for n in names]))
                    for schedule in ("joint", "lag")
                }
                optimum[(best["joint"] == 1) + (best["lag"] == 1)] += 1
                if study == "languages":
                    language.append(
                        compare(
                            f"{task}/{optimiser}",
                            per_seed(record, names[best["lag"]], PRIMARY, "lag").astype(np.float64),
                            per_seed(record, names[best["joint"]], PRIMARY, "joint").astype(np.float64),
                            False,
                            math.log10(1.1),
                        )
                    )
    counts = verdict_counts(compare_family(language))
    return {"both": optimum[2], "one": optimum[1], "none": optimum[0], "own_rate": counts}


def accounting_summary(records: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Lag against joint under equal joint-phase steps (the accounting cells, one family over every task and
    optimiser, paired t, Holm): cell -> verdict, for the cells whose verdict is not undetermined.

    Parameters
    ----------
    records : mapping of str to mapping
        Study name -> exploratory record (:func:`load_exploratory`).

    Returns
    -------
    dict of str to str
        Cell -> verdict.
    """
    from ..statistics.paired import compare, compare_family

    comparisons = []
    for record in records.values():
        for task in tasks_of(record):
            for optimiser in OPTIMISERS:
                cell = f"{task}/{optimiser}/accounting/joint"
                comparisons.append(
                    compare(
                        cell,
                        per_seed(record, cell, PRIMARY, "lag").astype(np.float64),
                        per_seed(record, cell, PRIMARY, "joint").astype(np.float64),
                        False,
                        math.log10(1.1),
                    )
                )
    return {c.name: c.verdict for c in compare_family(comparisons) if c.verdict != "undetermined"}


def recognition_at_rates(record: Mapping[str, Any]) -> dict[tuple[str, str, str], float]:
    """Languages: the share of runs that recognise the language, per (optimiser, rate, schedule) over the six
    centre cells (rate "centre") and their base-rate cells at ratio 1 ("base*0.316", "base*3.16").

    Parameters
    ----------
    record : mapping
        The languages record.

    Returns
    -------
    dict of tuple to float
        (optimiser, rate, schedule) -> share.
    """
    shares = {}
    for optimiser in OPTIMISERS:
        for rate in ("base*0.316", "centre", "base*3.16"):
            for schedule in ("joint", "lag"):
                values = [
                    per_seed(
                        record,
                        centre_name(task, optimiser)
                        if rate == "centre"
                        else f"{task}/{optimiser}/base_rate/ratio=1 {rate}",
                        "recognised",
                        schedule,
                    )
                    for task in tasks_of(record)
                ]
                shares[(optimiser, rate, schedule)] = float(np.mean(np.concatenate(values)))
    return shares


def mover_summary(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The 'who moves first' split of the verdict page: per ratio, in how many of the 90 main-grid cells the
    attention moved more than the readout in the first 10 steps in more than half of joint's runs; within
    ratio 1, Spearman's correlation between that share and lag's effect (lag - joint, log10 loss); and lag's
    helps / hurts (regime-map families) per readout scale.

    Parameters
    ----------
    records : mapping of str to mapping
        Study name -> exploratory record (:func:`load_exploratory`).

    Returns
    -------
    dict
        ``attention_first``, ``spearman``, ``spearman_p`` and ``by_scale``.
    """
    attention_first: dict[float, int] = {}
    shares, effects = [], []
    by_scale: dict[float, list[int]] = {}
    for record in records.values():
        for task in tasks_of(record):
            for optimiser in OPTIMISERS:
                for cell, comparison in regime_map(record, task, optimiser, "lag").items():
                    configuration = record["cells"][cell]["configuration"]
                    if configuration["sweep"] != "main":
                        continue
                    ratio = float(configuration["level"].split("ratio=")[1])
                    scale = float(configuration["training"]["output_scale"])
                    moved = per_seed(record, cell, "attention_moved_at_10", "joint") > per_seed(
                        record, cell, "output_moved_at_10", "joint"
                    )
                    attention_first[ratio] = attention_first.get(ratio, 0) + int(moved.mean() > 0.5)
                    if ratio == 1:
                        shares.append(float(moved.mean()))
                        effects.append(effect(record, comparison)[0])
                    tally = by_scale.setdefault(scale, [0, 0])
                    tally[0] += comparison.verdict == "helps"
                    tally[1] += comparison.verdict == "hurts"
    rho = scipy.stats.spearmanr(shares, effects)
    return {
        "attention_first": dict(sorted(attention_first.items())),
        "spearman": float(rho.statistic),
        "spearman_p": float(rho.pvalue),
        "by_scale": dict(sorted(by_scale.items())),
    }


def contradicting_cells(record: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """Language main-grid cells where the log loss says lag helps (regime-map family) while lag recognises the
    language in fewer runs than joint: (cell, lag's recognising runs, joint's).

    Parameters
    ----------
    record : mapping
        The languages record.

    Returns
    -------
    list of tuple of (str, int, int)
        The cells.
    """
    found = []
    for task in tasks_of(record):
        for optimiser in OPTIMISERS:
            for cell, comparison in regime_map(record, task, optimiser, "lag").items():
                if not is_main(record, cell) or comparison.verdict != "helps":
                    continue
                lag = int(per_seed(record, cell, "recognised", "lag").sum())
                joint = int(per_seed(record, cell, "recognised", "joint").sum())
                if lag < joint:
                    found.append((cell, lag, joint))
    return found


def reanalysis(records: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """Every number of issue 20's re-analysis that the registration relies on: (what, the issue's value, the
    value recomputed here).

    Parameters
    ----------
    records : mapping of str to mapping
        Study name -> exploratory record (:func:`load_exploratory`).

    Returns
    -------
    list of tuple of (str, str, str)
        The rows.
    """
    languages = records["languages"]
    rows = []
    for quantity, issue in (
        (PRIMARY, "75 / 76"),
        ("recognised", "49 / 20"),
        ("accuracy_above_training", "57 / 0"),
    ):
        helps, hurts = language_metric_counts(languages, quantity)
        rows.append((f"language main grid, lag helps / hurts by {quantity}", issue, f"{helps} / {hurts}"))
    contradictions = contradicting_cells(languages)
    rows.append(
        (
            "log loss says helps, lag recognises less: cells (lag's, joint's recognising runs of 30)",
            "6 cells (3-18 vs 18-30)",
            f"{len(contradictions)} cells ({min(c[1] for c in contradictions)}-{max(c[1] for c in contradictions)} "
            f"vs {min(c[2] for c in contradictions)}-{max(c[2] for c in contradictions)})",
        )
    )
    fails = failure_summary(records)
    rows.append(
        (
            "failures joint / lag in paired main-grid runs",
            "1760 / 541 of 13500",
            f"{fails['joint']} / {fails['lag']} of {fails['runs']}",
        )
    )
    rows.append(
        (
            "cells where lag fails significantly less / more (McNemar, Holm over 25)",
            "51 / 0",
            f"{fails['fewer']} / {fails['more']}",
        )
    )
    conditional = conditional_summary(records)
    rows.append(
        (
            "cells where lag's loss is higher when both succeed",
            "67-71%",
            f"median {conditional['median']:.1%}, majority of seeds {conditional['majority']:.1%}, "
            f"mean {conditional['mean']:.1%} (of {conditional['cells']})",
        )
    )
    for test, issue in (("t", "86 / 82"), ("wilcoxon", "86 / 109"), ("sign", "75 / 110")):
        helps, hurts = log_loss_counts(records, test)
        rows.append((f"main grid, lag helps / hurts by {test} test", issue, f"{helps} / {hurts}"))
    sweep = rate_sweep_summary(records)
    rows.append(
        (
            "centre cells where the shared rate is the optimum of exactly one schedule",
            "9 of 18",
            f"{sweep['one']} of 18 (both {sweep['both']}, neither {sweep['none']})",
        )
    )
    rows.append(
        (
            "language centre cells where lag helps, each schedule at its best rate",
            "4 of 12",
            f"{sweep['own_rate']['helps']} of 12 (hurts {sweep['own_rate']['hurts']})",
        )
    )
    accounting = accounting_summary(records)
    rows.append(
        (
            "equal joint-phase steps: FIRST, FIRST_LEARNED (SGD)",
            "equivalent, equivalent",
            ", ".join(f"{cell.split('/')[0]} {verdict}" for cell, verdict in accounting.items()),
        )
    )
    shares = recognition_at_rates(languages)
    rows.append(
        (
            "joint recognises at the calibrated rate (language centres)",
            "92-94%",
            f"SGD {shares[('sgd', 'centre', 'joint')]:.1%}, Adam {shares[('adam', 'centre', 'joint')]:.1%}",
        )
    )
    rows.append(
        (
            "recognition at 3.16x the rate, joint / lag",
            "lag far more often",
            f"SGD {shares[('sgd', 'base*3.16', 'joint')]:.1%} / {shares[('sgd', 'base*3.16', 'lag')]:.1%}, "
            f"Adam {shares[('adam', 'base*3.16', 'joint')]:.1%} / {shares[('adam', 'base*3.16', 'lag')]:.1%}",
        )
    )
    movers = mover_summary(records)
    rows.append(
        (
            "attention-first cells of 90 at ratios 0.1, 0.3, 1, 3, 10",
            "1, 3, 48, 81, 89",
            ", ".join(str(v) for v in movers["attention_first"].values()),
        )
    )
    rows.append(
        (
            "within ratio 1: Spearman (attention-first share, lag's effect)",
            "-0.14, p = 0.18",
            f"{movers['spearman']:.2f}, p = {movers['spearman_p']:.2f}",
        )
    )
    rows.append(
        (
            "lag helps / hurts at readout scale 3; at 0.01",
            "36 / 4; 4 / 27",
            f"{movers['by_scale'][3.0][0]} / {movers['by_scale'][3.0][1]}; "
            f"{movers['by_scale'][0.01][0]} / {movers['by_scale'][0.01][1]}",
        )
    )
    rows.append(
        (
            "Adam, language main grid: joint / lag failure rate",
            "14.6% / 1.0%",
            f"{fails['adam_language_joint_rate']:.1%} / {fails['adam_language_lag_rate']:.1%}",
        )
    )
    rows.append(
        (
            "paired sd of the log10 loss difference, languages (median over cells)",
            "about 1",
            f"{paired_sd(records, 'languages'):.2f}",
        )
    )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Print the re-analysis (:func:`reanalysis`) of the records in ``book/data``.

    Parameters
    ----------
    argv : sequence of str, optional
        Not used (the command takes no arguments).
    """
    for what, issue, here in reanalysis(load_exploratory()):
        print(f"{what}\n    issue: {issue}\n    here:  {here}")


if __name__ == "__main__":
    main()
